#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/types.h>

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

/* ---- options run and bench share ---- */

void cli_session_args_init(cli_session_args *a) {
    memset(a, 0, sizeof *a);
    a->opt_level = -1;
}

void cli_session_args_free(cli_session_args *a) {
    free(a->inputs);
    free(a->dims);
    a->inputs = NULL;
    a->dims = NULL;
    a->n_inputs = a->n_dims = 0;
}

int cli_add_input(cli_session_args *a, const char *spec) {
    const char **grown = realloc(a->inputs, (a->n_inputs + 1) * sizeof *grown);
    if (!grown) return cli_error("out of memory");
    a->inputs = grown;
    a->inputs[a->n_inputs++] = spec;
    return CLI_OK;
}

static int add_dim(const char *cmd, cli_session_args *a, const char *spec) {
    const char *eq = strchr(spec, '=');
    uint64_t v = 0;
    if (!eq || eq == spec || cli_parse_u64(eq + 1, &v) != 0 || v < 1 || v > (uint64_t)INT64_MAX)
        return cli_error("%s: --dim expects NAME=SIZE with a positive size, got '%s'", cmd, spec);
    for (size_t i = 0; i < a->n_dims; i++)
        if (strlen(a->dims[i].name) == (size_t)(eq - spec) &&
            strncmp(a->dims[i].name, spec, (size_t)(eq - spec)) == 0)
            return cli_error("%s: --dim '%.*s' given more than once", cmd, (int)(eq - spec), spec);
    cli_dim *grown = realloc(a->dims, (a->n_dims + 1) * sizeof *grown);
    if (!grown) return cli_error("out of memory");
    a->dims = grown;
    /* the name is kept as a pointer into argv with its length */
    a->dims[a->n_dims++] = (cli_dim){spec, (size_t)(eq - spec), (int64_t)v, 0};
    return CLI_OK;
}

int cli_session_option(const char *cmd, int argc, char **argv, int *i, cli_session_args *a) {
    const char *v = NULL;
    int m;
    if ((m = cli_option_value(argc, argv, i, "--input", &v)) != 0) {
        if (m < 0) return -1;
        return cli_add_input(a, v) == CLI_OK ? 1 : -1;
    }
    if ((m = cli_option_value(argc, argv, i, "--dim", &v)) != 0) {
        if (m < 0) return -1;
        return add_dim(cmd, a, v) == CLI_OK ? 1 : -1;
    }
    if ((m = cli_option_value(argc, argv, i, "--seed", &v)) != 0) {
        if (m < 0) return -1;
        if (cli_parse_u64(v, &a->seed) != 0) {
            cli_error("%s: --seed expects a non-negative integer, got '%s'", cmd, v);
            return -1;
        }
        return 1;
    }
    if ((m = cli_option_value(argc, argv, i, "--threads", &v)) != 0) {
        if (m < 0) return -1;
        if (cli_parse_int(v, &a->threads) != 0 || a->threads < 0) {
            cli_error("%s: --threads expects a non-negative integer, got '%s'", cmd, v);
            return -1;
        }
        a->has_threads = 1;
        return 1;
    }
    if ((m = cli_option_value(argc, argv, i, "--providers", &v)) != 0) {
        if (m < 0) return -1;
        a->providers = v;
        return 1;
    }
    if ((m = cli_option_value(argc, argv, i, "--opt-level", &v)) != 0) {
        if (m < 0) return -1;
        if (strcmp(v, "none") == 0) a->opt_level = ONYX_OPT_NONE;
        else if (strcmp(v, "basic") == 0) a->opt_level = ONYX_OPT_BASIC;
        else if (strcmp(v, "all") == 0) a->opt_level = ONYX_OPT_ALL;
        else {
            cli_error("%s: --opt-level expects none, basic or all, got '%s'", cmd, v);
            return -1;
        }
        return 1;
    }
    return 0;
}

/* Options after a provider's name, "name:key=value:key=value": each is
 * set for that provider (the text is cut at the first ':'). */
static int set_provider_options(const char *cmd, onyx_session_options *opts, char *entry,
                                const char *list) {
    char *colon = strchr(entry, ':');
    if (!colon) return CLI_OK;
    *colon = '\0';
    for (char *p = colon + 1; p;) {
        char *next = strchr(p, ':');
        if (next) *next++ = '\0';
        char *eq = strchr(p, '=');
        if (!eq || eq == p)
            return cli_error("%s: --providers option '%s' of '%s' is not key=value (in '%s')", cmd, p,
                             entry, list);
        *eq = '\0';
        onyx_status *st = onyx_session_options_set_provider_option(opts, entry, p, eq + 1);
        if (st) return cli_status(st);
        p = next;
    }
    return CLI_OK;
}

/* Splits "a:key=value, b" into trimmed names with their options; rejects
 * empty entries. */
static int set_providers(const char *cmd, onyx_session_options *opts, const char *list) {
    char *copy = strdup(list);
    const char **names = calloc(strlen(list) + 1, sizeof *names);
    int rc = CLI_OK;
    if (!copy || !names) {
        rc = cli_error("out of memory");
        goto out;
    }
    size_t n = 0;
    for (char *p = copy;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        while (*p == ' ' || *p == '\t') p++;
        char *e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
        if ((rc = set_provider_options(cmd, opts, p, list)) != CLI_OK) goto out;
        if (!*p) {
            rc = cli_error("%s: --providers has an empty name in '%s'", cmd, list);
            goto out;
        }
        names[n++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    onyx_status *st = onyx_session_options_set_providers(opts, names, n);
    if (st) rc = cli_status(st);
out:
    free(names);
    free(copy);
    return rc;
}

int cli_apply_session_args(const char *cmd, const cli_session_args *a, onyx_session_options *opts) {
    onyx_status *st = NULL;
    if (a->has_threads) st = onyx_session_options_set_threads(opts, a->threads);
    if (!st && a->opt_level >= 0)
        st = onyx_session_options_set_optimization_level(opts, (onyx_opt_level)a->opt_level);
    if (st) return cli_status(st);
    return a->providers ? set_providers(cmd, opts, a->providers) : CLI_OK;
}

/* ---- inputs ---- */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 24 random bits scaled into [0, 1): exact in float, never 1.0. */
static float rand_unit_f32(uint64_t *s) { return (float)(splitmix64(s) >> 40) * 0x1p-24f; }

static int fill_input(const char *cmd, onyx_tensor *t, uint64_t *s, const char *name, cli_fill fill) {
    int64_t n = onyx_tensor_numel(t);
    void *d = onyx_tensor_data(t);
    onyx_dtype dt = onyx_tensor_dtype(t);
    /* CLI_FILL_ZERO_INTS: integers and booleans stay zero, so index and
     * length inputs are valid whatever the model indexes */
    int zero_ints = fill == CLI_FILL_ZERO_INTS;
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case ONYX_FLOAT32: ((float *)d)[i] = rand_unit_f32(s); break;
        case ONYX_FLOAT64: ((double *)d)[i] = (double)(splitmix64(s) >> 11) * 0x1p-53; break;
        case ONYX_COMPLEX64:
            ((float *)d)[2 * i] = rand_unit_f32(s);
            ((float *)d)[2 * i + 1] = rand_unit_f32(s);
            break;
        case ONYX_COMPLEX128:
            ((double *)d)[2 * i] = (double)(splitmix64(s) >> 11) * 0x1p-53;
            ((double *)d)[2 * i + 1] = (double)(splitmix64(s) >> 11) * 0x1p-53;
            break;
        /* as many random bits as the format holds below 1.0, so the value
         * converts exactly and cannot round up to 1.0 */
        case ONYX_FLOAT16:
            ((uint16_t *)d)[i] = cli_float_to_half((float)(splitmix64(s) >> 53) * 0x1p-11f);
            break;
        case ONYX_BFLOAT16:
            ((uint16_t *)d)[i] = cli_float_to_bf16((float)(splitmix64(s) >> 56) * 0x1p-8f);
            break;
        case ONYX_BOOL:
        case ONYX_INT8:
        case ONYX_UINT8:
        case ONYX_INT16:
        case ONYX_UINT16:
        case ONYX_INT32:
        case ONYX_UINT32:
        case ONYX_INT64:
        case ONYX_UINT64:
        case ONYX_INT4:
        case ONYX_UINT4:
        case ONYX_INT2:
        case ONYX_UINT2:
            if (zero_ints) return CLI_OK; /* onyx_tensor_create zero-fills */
            switch (dt) {
            case ONYX_BOOL: ((uint8_t *)d)[i] = (uint8_t)(splitmix64(s) >> 63); break;
            case ONYX_INT8: ((int8_t *)d)[i] = (int8_t)(splitmix64(s) % 10); break;
            case ONYX_UINT8: ((uint8_t *)d)[i] = (uint8_t)(splitmix64(s) % 10); break;
            case ONYX_INT16: ((int16_t *)d)[i] = (int16_t)(splitmix64(s) % 10); break;
            case ONYX_UINT16: ((uint16_t *)d)[i] = (uint16_t)(splitmix64(s) % 10); break;
            case ONYX_INT32: ((int32_t *)d)[i] = (int32_t)(splitmix64(s) % 10); break;
            case ONYX_UINT32: ((uint32_t *)d)[i] = (uint32_t)(splitmix64(s) % 10); break;
            case ONYX_INT64: ((int64_t *)d)[i] = (int64_t)(splitmix64(s) % 10); break;
            case ONYX_UINT64: ((uint64_t *)d)[i] = splitmix64(s) % 10; break;
            /* narrow types: small values inside each type's range */
            case ONYX_INT4: ((int8_t *)d)[i] = (int8_t)(splitmix64(s) % 8); break;
            case ONYX_UINT4: ((uint8_t *)d)[i] = (uint8_t)(splitmix64(s) % 10); break;
            case ONYX_INT2: ((int8_t *)d)[i] = (int8_t)(splitmix64(s) % 2); break;
            default: ((uint8_t *)d)[i] = (uint8_t)(splitmix64(s) % 4); break; /* UINT2 */
            }
            break;
        default:
            if (cli_is_narrow_float(dt)) {
                ((uint8_t *)d)[i] = cli_narrow_random(dt, splitmix64(s));
                break;
            }
            return cli_error("%s: cannot make %s data for input '%s'; give it with "
                             "--input %s=FILE",
                             cmd, onyx_dtype_name(dt), name, name);
        }
    }
    return CLI_OK;
}

/* Files cannot always name the model's element type: numpy (and ONNX test
 * data written before bfloat16 had its own TensorProto type) store
 * bfloat16 as uint16 bits, and ml_dtypes saves float8, float4, int4 and
 * the like as opaque one-byte records that read as uint8. Where the model
 * asks for such a type and the file holds the carrier type, the bytes are
 * taken as the model's type, after checking they fit it. */
static int relabel_input(const onyx_value_info *info, onyx_tensor **t) {
    onyx_dtype want = info->dtype, got = onyx_tensor_dtype(*t);
    if (info->kind != ONYX_KIND_TENSOR || onyx_tensor_kind(*t) != ONYX_KIND_TENSOR || want == got)
        return CLI_OK;
    int ok = (want == ONYX_BFLOAT16 && got == ONYX_UINT16) ||
             ((cli_is_narrow_float(want) || cli_is_narrow_int(want)) && got == ONYX_UINT8) ||
             ((want == ONYX_INT4 || want == ONYX_INT2) && got == ONYX_INT8);
    if (!ok) return CLI_OK; /* the session reports the mismatch */
    onyx_tensor *r;
    onyx_status *st = onyx_tensor_create(want, onyx_tensor_dims(*t), onyx_tensor_rank(*t), &r);
    if (st) return cli_status(st);
    int64_t n = onyx_tensor_numel(*t);
    const uint8_t *src = onyx_tensor_data(*t);
    uint8_t *dst = onyx_tensor_data(r);
    if (want == ONYX_BFLOAT16) {
        if (n > 0) memcpy(dst, src, (size_t)n * 2);
    } else {
        int bits = cli_narrow_bits(want);
        int is_signed = want == ONYX_INT4 || want == ONYX_INT2;
        for (int64_t i = 0; i < n; i++) {
            int v = src[i];
            if (got == ONYX_INT8) {
                v = (int8_t)src[i]; /* values: must be in range */
                if (v < -(1 << (bits - 1)) || v >= (1 << (bits - 1))) goto out_of_range;
            } else if (v >> bits) {
                goto out_of_range; /* a bit pattern wider than the type */
            } else if (is_signed && (v >> (bits - 1))) {
                v -= 1 << bits; /* ml_dtypes' records hold two's complement low bits */
            }
            dst[i] = (uint8_t)v;
            continue;
        out_of_range:
            onyx_tensor_free(r);
            return cli_error("input '%s': element %" PRId64 " (%d) does not fit %s", info->name, i,
                             got == ONYX_INT8 ? (int)(int8_t)src[i] : (int)src[i],
                             onyx_dtype_name(want));
        }
    }
    cli_note("input '%s': %s data taken as %s (files store that type as %s)", info->name,
             onyx_dtype_name(got), onyx_dtype_name(want), onyx_dtype_name(got));
    onyx_tensor_free(*t);
    *t = r;
    return CLI_OK;
}

/* A generated input of the model's type; dimensions the model leaves open
 * take their --dim value by name, else 1. */
static int make_input(const char *cmd, const onyx_value_info *info, cli_session_args *a,
                      uint64_t *seed, cli_fill fill, onyx_tensor **out) {
    *out = NULL;
    if (info->kind != ONYX_KIND_TENSOR)
        return cli_error("%s: input '%s' is %s; give it with --input %s=FILE", cmd, info->name,
                         info->kind == ONYX_KIND_SEQUENCE ? "a sequence" : "an optional",
                         info->name);
    if (info->rank < 0)
        return cli_error("%s: input '%s' has no known rank; give it with --input %s=FILE", cmd,
                         info->name, info->name);
    if (info->dtype == ONYX_STRING || info->dtype == ONYX_UNDEFINED)
        return cli_error("%s: cannot make %s data for input '%s'; give it with "
                         "--input %s=FILE",
                         cmd, onyx_dtype_name(info->dtype), info->name, info->name);
    int64_t dims[64];
    if (info->rank > (int)(sizeof dims / sizeof dims[0]))
        return cli_error("%s: input '%s' has rank %d, too many dimensions", cmd, info->name,
                         info->rank);
    for (int i = 0; i < info->rank; i++) {
        dims[i] = info->dims ? info->dims[i] : -1;
        if (dims[i] >= 0) continue;
        const char *param = info->dim_params ? info->dim_params[i] : NULL;
        cli_dim *given = NULL;
        for (size_t k = 0; param && k < a->n_dims; k++)
            if (strlen(param) == a->dims[k].len && strncmp(param, a->dims[k].name, a->dims[k].len) == 0)
                given = &a->dims[k];
        if (given) {
            dims[i] = given->value;
            given->used = 1;
        } else {
            if (param && *param)
                cli_note("input '%s': dimension %d ('%s') set to 1", info->name, i, param);
            else
                cli_note("input '%s': dimension %d (unknown) set to 1", info->name, i);
            dims[i] = 1;
        }
    }
    onyx_tensor *t;
    onyx_status *st = onyx_tensor_create(info->dtype, dims, info->rank, &t);
    if (st) return cli_status(st);
    if (fill_input(cmd, t, seed, info->name, fill) != CLI_OK) {
        onyx_tensor_free(t);
        return CLI_FAIL;
    }
    *out = t;
    return CLI_OK;
}

static int find_input(const onyx_value_info *infos, size_t n, const char *name, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (strlen(infos[i].name) == len && strncmp(infos[i].name, name, len) == 0) return (int)i;
    return -1;
}

int cli_prepare_io(const char *cmd, onyx_session *s, cli_session_args *a, cli_fill fill,
                   cli_io *io) {
    memset(io, 0, sizeof *io);
    onyx_status *st;
    size_t n_in = io->n_in = onyx_session_input_count(s);
    size_t n_out = io->n_out = onyx_session_output_count(s);
    io->in_infos = calloc(n_in + 1, sizeof *io->in_infos);
    io->out_infos = calloc(n_out + 1, sizeof *io->out_infos);
    io->inputs = calloc(n_in + 1, sizeof *io->inputs);
    io->in_names = calloc(n_in + 1, sizeof *io->in_names);
    io->out_names = calloc(n_out + 1, sizeof *io->out_names);
    if (!io->in_infos || !io->out_infos || !io->inputs || !io->in_names || !io->out_names)
        return cli_error("out of memory");
    for (size_t i = 0; i < n_in; i++) {
        if ((st = onyx_session_input_info(s, i, &io->in_infos[i])) != NULL) return cli_status(st);
        io->in_names[i] = io->in_infos[i].name;
    }
    for (size_t i = 0; i < n_out; i++) {
        if ((st = onyx_session_output_info(s, i, &io->out_infos[i])) != NULL) return cli_status(st);
        io->out_names[i] = io->out_infos[i].name;
    }
    int rc;
    for (size_t k = 0; k < a->n_inputs; k++) {
        const char *spec = a->inputs[k];
        const char *eq = strchr(spec, '=');
        const char *path;
        int idx;
        if (eq) {
            idx = find_input(io->in_infos, n_in, spec, (size_t)(eq - spec));
            if (idx < 0)
                return cli_error("%s: model has no input named '%.*s'", cmd, (int)(eq - spec), spec);
            path = eq + 1;
        } else if (n_in == 1) {
            idx = 0;
            path = spec;
        } else {
            return cli_error("%s: --input expects NAME=FILE, got '%s'", cmd, spec);
        }
        if (!*path) return cli_error("%s: --input '%s' names no file", cmd, spec);
        if (io->inputs[idx])
            return cli_error("%s: input '%s' given more than once", cmd, io->in_infos[idx].name);
        if ((st = onyx_tensor_load(path, &io->inputs[idx])) != NULL) {
            rc = cli_error("input '%s': %s", io->in_infos[idx].name, onyx_status_message(st));
            onyx_status_free(st);
            return rc;
        }
        if ((rc = relabel_input(&io->in_infos[idx], &io->inputs[idx])) != CLI_OK) return rc;
    }
    /* one stream across inputs in model order keeps runs reproducible */
    uint64_t state = a->seed;
    for (size_t i = 0; i < n_in; i++) {
        if (io->inputs[i]) continue;
        if ((rc = make_input(cmd, &io->in_infos[i], a, &state, fill, &io->inputs[i])) != CLI_OK)
            return rc;
    }
    /* a misspelt --dim would otherwise leave the dimension at 1 unnoticed */
    for (size_t k = 0; k < a->n_dims; k++)
        if (!a->dims[k].used)
            return cli_error("%s: --dim '%.*s' names no open dimension of a generated input", cmd,
                             (int)a->dims[k].len, a->dims[k].name);
    return CLI_OK;
}

void cli_io_free(cli_io *io) {
    for (size_t i = 0; io->inputs && i < io->n_in; i++)
        if (io->inputs[i]) onyx_tensor_free(io->inputs[i]);
    free(io->inputs);
    free(io->in_names);
    free(io->out_names);
    free(io->in_infos);
    free(io->out_infos);
    memset(io, 0, sizeof *io);
}

/* ---- timing and provider counters ---- */

double cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int cli_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

size_t cli_device_providers(const onyx_env *env, const onyx_session *s, cli_provider_use *out,
                            size_t max) {
    size_t n = 0;
    for (size_t p = 0; p < onyx_env_provider_count(env) && n < max; p++) {
        const char *name = onyx_env_provider_name(env, p);
        if (strcmp(name, "cpu") == 0) continue;
        onyx_status *e = onyx_session_provider_stats(s, name, &out[n].stats);
        if (e) { /* the session does not use it */
            onyx_status_free(e);
            continue;
        }
        out[n].name = name;
        out[n].nodes = 0;
        for (size_t i = 0; i < onyx_session_node_count(s); i++)
            out[n].nodes += strcmp(onyx_session_node_provider(s, i), name) == 0;
        n++;
    }
    return n;
}

/* ---- output files (run, check) ---- */

int cli_mkdir_p(const char *dir) {
    char *p = strdup(dir);
    if (!p) return cli_error("out of memory");
    int rc = CLI_OK;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = cli_error("cannot create folder '%s': %s", p, strerror(errno));
            break;
        }
        *s = saved;
        if (!saved) break;
    }
    struct stat st;
    if (rc == CLI_OK) {
        if (stat(dir, &st) != 0)
            rc = cli_error("cannot use '%s' as output folder: %s", dir, strerror(errno));
        else if (!S_ISDIR(st.st_mode))
            rc = cli_error("cannot use '%s' as output folder: not a folder", dir);
    }
    free(p);
    return rc;
}

void cli_name_set_free(cli_name_set *set) {
    for (size_t i = 0; i < set->n; i++) free(set->names[i]);
    free(set->names);
    set->names = NULL;
    set->n = 0;
}

static int name_taken(const cli_name_set *set, const char *s) {
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->names[i], s) == 0) return 1;
    return 0;
}

/* DIR/<name>.npy with unsafe characters replaced; a numeric suffix keeps
 * two outputs that sanitize alike from overwriting each other. */
char *cli_npy_path(const char *dir, const char *name, cli_name_set *used) {
    cli_buf base = {0};
    cli_buf_printf(&base, "%s", name && *name ? name : "output");
    for (size_t i = 0; i < base.len; i++) {
        char c = base.s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok) base.s[i] = '_';
    }
    cli_buf file = {0};
    cli_buf_printf(&file, "%s.npy", base.s);
    for (int k = 2; name_taken(used, file.s); k++) {
        file.len = 0;
        cli_buf_printf(&file, "%s_%d.npy", base.s, k);
    }
    cli_buf_free(&base);
    char **grown = realloc(used->names, (used->n + 1) * sizeof *grown);
    if (!grown) {
        cli_buf_free(&file);
        return NULL;
    }
    used->names = grown;
    used->names[used->n++] = file.s;
    cli_buf path = {0};
    cli_buf_printf(&path, "%s/%s", dir, file.s);
    return path.s;
}

int cli_save_npy(const onyx_tensor *t, const char *dir, const char *name, cli_name_set *used) {
    /* strings save as numpy unicode arrays ('<U{n}'), the narrow types
     * one element per byte (see onyx_tensor_save_npy) */
    char *path = cli_npy_path(dir, name, used);
    if (!path) return cli_error("out of memory");
    onyx_status *st = onyx_tensor_save_npy(t, path);
    free(path);
    return st ? cli_status(st) : CLI_OK;
}
