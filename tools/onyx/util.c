#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* C1 controls (U+0080..U+009F, CSI among them) are two bytes in UTF-8,
 * 0xC2 then 0x80..0x9F; some terminals act on them as on ESC [. */
static int c1_control(const unsigned char *p) { return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f; }

static void print_flat(FILE *f, const char *prefix, const char *fmt, va_list ap) {
    char msg[4096];
    vsnprintf(msg, sizeof msg, fmt, ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == ' ') msg[--n] = '\0';
    /* messages quote names from the model; written without allocating,
     * since this also reports running out of memory */
    fputs(prefix, f);
    const unsigned char *p = (const unsigned char *)msg;
    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\x%02x", *p);
        } else if (c1_control(p)) {
            fprintf(f, "\\x%02x\\x%02x", p[0], p[1]);
            p++;
        } else {
            fputc(*p, f);
        }
    }
    fputc('\n', f);
}

/* Notes wait here until the command succeeds, so that a failing command
 * still prints exactly one line on stderr. */
static cli_buf pending_notes;

int cli_error(const char *fmt, ...) {
    cli_buf_free(&pending_notes);
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    print_flat(stderr, "onyx: error: ", fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

void cli_note(const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    cli_buf_printf(&pending_notes, "onyx: note: ");
    cli_buf_escaped(&pending_notes, msg);
    cli_buf_printf(&pending_notes, "\n");
}

void cli_flush_notes(void) {
    if (pending_notes.len) {
        fflush(stdout);
        fputs(pending_notes.s, stderr);
    }
    cli_buf_free(&pending_notes);
}

int cli_status(onyx_status *st) {
    const char *m = onyx_status_message(st);
    int rc = cli_error("%s", m && *m ? m : "unknown error");
    onyx_status_free(st);
    return rc;
}

int cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (*i + 1 >= argc) {
        cli_error("option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || !end || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_int(const char *s, int *out) {
    if (!s || !*s || *s == ' ') return -1;
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno || !end || *end || v < -1000000000L || v > 1000000000L) return -1;
    *out = (int)v;
    return 0;
}

void cli_buf_printf(cli_buf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len <= (size_t)n) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            cli_error("out of memory");
            exit(CLI_FAIL);
        }
        b->s = s;
        b->cap = cap;
    }
}

void cli_buf_escaped(cli_buf *b, const char *s) {
    if (!s) return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p < 0x20 || *p == 0x7f) {
            cli_buf_printf(b, "\\x%02x", *p++);
        } else if (c1_control(p)) {
            cli_buf_printf(b, "\\x%02x\\x%02x", p[0], p[1]);
            p += 2;
        } else {
            size_t n = 0;
            while (p[n] && p[n] >= 0x20 && p[n] != 0x7f && !c1_control(p + n)) n++;
            cli_buf_printf(b, "%.*s", (int)n, (const char *)p);
            p += n;
        }
    }
    if (!b->s) cli_buf_printf(b, "%s", "");
}

char *cli_escape(const char *s) {
    cli_buf b = {0};
    cli_buf_escaped(&b, s ? s : "");
    return b.s;
}

void cli_buf_free(cli_buf *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

void cli_format_info_shape(cli_buf *b, const onyx_value_info *info) {
    if (info->rank < 0) {
        cli_buf_printf(b, "[unknown rank]");
        return;
    }
    cli_buf_printf(b, "[");
    for (int i = 0; i < info->rank; i++) {
        const char *sep = i ? ", " : "";
        if (info->dim_params && info->dim_params[i] && info->dim_params[i][0]) {
            cli_buf_printf(b, "%s", sep);
            cli_buf_escaped(b, info->dim_params[i]);
        } else if (!info->dims || info->dims[i] < 0)
            cli_buf_printf(b, "%s?", sep);
        else
            cli_buf_printf(b, "%s%" PRId64, sep, info->dims[i]);
    }
    cli_buf_printf(b, "]");
}

void cli_format_dims(cli_buf *b, const int64_t *dims, int rank) {
    cli_buf_printf(b, "[");
    for (int i = 0; i < rank; i++) cli_buf_printf(b, "%s%" PRId64, i ? ", " : "", dims[i]);
    cli_buf_printf(b, "]");
}

void cli_format_info_type(cli_buf *b, const onyx_value_info *info) {
    const char *dt = onyx_dtype_name(info->dtype);
    switch (info->kind) {
    case ONYX_KIND_SEQUENCE: cli_buf_printf(b, "sequence(%s)", dt); break;
    case ONYX_KIND_OPTIONAL: cli_buf_printf(b, "optional(%s)", dt); break;
    default: cli_buf_printf(b, "%s", dt); break;
    }
}

static void human(char *buf, size_t n, int64_t v, double base, const char *const *units,
                  const char *space) {
    double x = (double)v;
    int u = 0;
    while (x >= base && units[u + 1]) {
        x /= base;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRId64 "%s%s", v, units[0][0] ? space : "", units[0]);
    else
        snprintf(buf, n, "%.*f%s%s", x < 10 ? 2 : x < 100 ? 1 : 0, x, space, units[u]);
}

void cli_human_count(char *buf, size_t n, int64_t v) {
    static const char *const units[] = {"", "K", "M", "G", "T", NULL};
    human(buf, n, v, 1000.0, units, "");
}

void cli_human_bytes(char *buf, size_t n, int64_t v) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", NULL};
    human(buf, n, v, 1024.0, units, " ");
}

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float cli_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
        float v = (float)man / 16777216.0f; /* subnormal: man * 2^-24 */
        return sign ? -v : v;
    }
    if (exp == 31) return u2f(sign | 0x7f800000u | (man << 13));
    return u2f(sign | ((exp + 112) << 23) | (man << 13));
}

/* Round to nearest even, with overflow to infinity and subnormals. */
uint16_t cli_float_to_half(float f) {
    uint32_t u = f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds past 65504 */
    if (a < 0x38800000u) {
        /* below the smallest normal half: scale so the integer part is the
         * subnormal mantissa, letting the FPU do the rounding */
        float v = u2f(a) * 16777216.0f;
        return (uint16_t)(sign | (uint16_t)(int)nearbyintf(v));
    }
    uint32_t mant = a & 0x7fffffu;
    uint32_t exp = (a >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float cli_bf16_to_float(uint16_t b) { return u2f((uint32_t)b << 16); }

uint16_t cli_float_to_bf16(float f) {
    uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* ---- narrow types ----
 * Minifloat layouts: exponent and mantissa bits, bias, and how the
 * special codes are spent (fn: S.1111.111 is NaN; fnuz: 0x80 is NaN;
 * ieee: all-ones exponent is inf/NaN; finite: no specials). */
typedef struct cli_minifloat {
    onyx_dtype t;
    int ebits, mbits, bias;
    char kind; /* 'f' fn, 'u' fnuz, 'i' ieee, 'n' finite */
} cli_minifloat;

static const cli_minifloat MINIFLOATS[] = {
    {ONYX_FLOAT8E4M3FN, 4, 3, 7, 'f'},  {ONYX_FLOAT8E4M3FNUZ, 4, 3, 8, 'u'},
    {ONYX_FLOAT8E5M2, 5, 2, 15, 'i'},   {ONYX_FLOAT8E5M2FNUZ, 5, 2, 16, 'u'},
    {ONYX_FLOAT4E2M1, 2, 1, 1, 'n'},    {ONYX_FLOAT6E2M3, 2, 3, 1, 'n'},
    {ONYX_FLOAT6E3M2, 3, 2, 3, 'n'},
};

static const cli_minifloat *minifloat(onyx_dtype t) {
    for (size_t i = 0; i < sizeof MINIFLOATS / sizeof MINIFLOATS[0]; i++)
        if (MINIFLOATS[i].t == t) return &MINIFLOATS[i];
    return NULL;
}

int cli_is_narrow_float(onyx_dtype t) { return minifloat(t) != NULL || t == ONYX_FLOAT8E8M0; }

int cli_is_narrow_int(onyx_dtype t) {
    return t == ONYX_INT4 || t == ONYX_UINT4 || t == ONYX_INT2 || t == ONYX_UINT2;
}

int cli_narrow_bits(onyx_dtype t) {
    if (t == ONYX_INT4 || t == ONYX_UINT4) return 4;
    if (t == ONYX_INT2 || t == ONYX_UINT2) return 2;
    const cli_minifloat *f = minifloat(t);
    return f ? 1 + f->ebits + f->mbits : 8;
}

float cli_narrow_to_float(onyx_dtype t, uint8_t bits) {
    if (t == ONYX_FLOAT8E8M0) return bits == 0xff ? NAN : ldexpf(1.0f, (int)bits - 127);
    const cli_minifloat *f = minifloat(t);
    if (!f) return NAN;
    int nb = 1 + f->ebits + f->mbits;
    unsigned v = bits & ((1u << nb) - 1), emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
    unsigned e = (v >> f->mbits) & emax, m = v & mmax;
    int neg = (v >> (nb - 1)) & 1;
    if (f->kind == 'u' && v == 1u << (nb - 1)) return NAN;
    if (f->kind == 'f' && e == emax && m == mmax) return NAN;
    if (f->kind == 'i' && e == emax) return m ? NAN : (neg ? -INFINITY : INFINITY);
    float a = e == 0 ? ldexpf((float)m, 1 - f->bias - f->mbits)
                     : ldexpf((float)(m + (1u << f->mbits)), (int)e - f->bias - f->mbits);
    return neg ? -a : a;
}

uint8_t cli_narrow_random(onyx_dtype t, uint64_t r) {
    /* a positive value below 1: exponent field under the bias */
    if (t == ONYX_FLOAT8E8M0) return (uint8_t)(r % 127);
    const cli_minifloat *f = minifloat(t);
    if (!f) return 0;
    unsigned e = (unsigned)(r % (uint64_t)f->bias), m = (unsigned)((r >> 16) % (1u << f->mbits));
    return (uint8_t)((e << f->mbits) | m);
}

int cli_open_session(const char *model, const onyx_session_options *opts, onyx_env **env,
                     onyx_session **session) {
    *env = NULL;
    *session = NULL;
    onyx_status *st = onyx_env_create(env);
    if (st) return cli_status(st);
    /* warnings would break the one-line error contract of the tool */
    st = onyx_env_set_log_level(*env, ONYX_LOG_ERROR);
    if (!st) st = onyx_session_create(*env, model, opts, session);
    if (st) {
        /* model problems are easier to place with the file named; option
         * problems (an unknown provider, say) are not about the file */
        const char *m = onyx_status_message(st);
        onyx_code code = onyx_status_code(st);
        int about_model = code == ONYX_INVALID_MODEL || code == ONYX_IO_ERROR ||
                          code == ONYX_NOT_IMPLEMENTED || code == ONYX_NOT_FOUND;
        int rc = about_model && m && !strstr(m, model)
                     ? cli_error("%s: %s", model, m)
                     : cli_error("%s", m && *m ? m : "unknown error");
        onyx_status_free(st);
        onyx_env_free(*env);
        *env = NULL;
        *session = NULL;
        return rc;
    }
    return CLI_OK;
}
