/* Runs an ONNX backend test suite folder (DATA/<suite>/<test>/model.onnx +
 * test_data_set_N/{input,output}_K.pb, optional data.json with rtol/atol)
 * through the public onyx API and compares the results against the reference
 * outputs. Only include/onyx.h is used, so this doubles as a check that the
 * public surface is sufficient to drive real models.
 *
 * Exit status: 0 when every test not listed as an expected failure passes;
 * listed tests that pass and stale entries are reported, not failed, so the
 * list can shrink while operators land (tools/gen/update_expected_failures.py
 * rewrites it from the results TSV). */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <onyx.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_DATA_DIR "/usr/share/libonnx-testdata/data"
#define DEFAULT_RESULTS "conformance_results.tsv"
#define SKIP_PREFIX "out of scope:"
#define PATH_CAP 4096
#define REASON_CAP 1024

/* Same tolerances as the reference onnx backend runner: these defaults,
 * unless the test's data.json says otherwise, and at least two bfloat16
 * units in the last place for bfloat16 outputs. */
static const double DEFAULT_RTOL = 1e-3;
static const double DEFAULT_ATOL = 1e-7;
static const double BF16_MIN_RTOL = 1.0 / 64;

typedef struct {
    double rtol, atol;
} tolerance;

/* ------------------------------------------------------------------ */
/* small utilities                                                     */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "onyx_conformance: out of memory\n");
        exit(2);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

typedef struct {
    char **items;
    size_t count, cap;
} strlist;

static void strlist_push(strlist *l, const char *s)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        char **n = realloc(l->items, l->cap * sizeof *n);
        if (!n) {
            fprintf(stderr, "onyx_conformance: out of memory\n");
            exit(2);
        }
        l->items = n;
    }
    l->items[l->count++] = xstrdup(s);
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = l->cap = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* test_data_set_10 must come after test_data_set_9. */
static int cmp_dataset(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    long nx = strtol(x + strlen("test_data_set_"), NULL, 10);
    long ny = strtol(y + strlen("test_data_set_"), NULL, 10);
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return strcmp(x, y);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int join(char *buf, const char *a, const char *b)
{
    int n = snprintf(buf, PATH_CAP, "%s/%s", a, b);
    return n >= 0 && n < PATH_CAP;
}

/* First problem wins: later, derived complaints would only obscure it. */
static void set_reason(char *reason, const char *fmt, ...)
{
    if (reason[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, REASON_CAP, fmt, ap);
    va_end(ap);
}

/* Reasons end up in a TSV file, so they must stay on one line and one column. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r')
            *s = ' ';
}

static void status_reason(char *reason, const char *what, onyx_status *st)
{
    set_reason(reason, "%s: %s", what, onyx_status_message(st));
    onyx_status_free(st);
}

/* ------------------------------------------------------------------ */
/* expected failures                                                   */

typedef struct {
    char *key;    /* "suite/test" */
    char *reason; /* text after '#' */
    int skip;     /* reason starts with SKIP_PREFIX */
    int seen;
} xfail_entry;

typedef struct {
    xfail_entry *items;
    size_t count, cap;
} xfail_list;

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

static int xfail_load(const char *path, xfail_list *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "onyx_conformance: cannot open %s: %s\n", path, strerror(errno));
        return 0;
    }
    char line[4096];
    int lineno = 0, ok = 1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *hash = strchr(s, '#');
        char *why = hash ? trim(hash + 1) : NULL;
        if (!hash || !*why) {
            fprintf(stderr, "%s:%d: missing '# reason' after the test name\n", path, lineno);
            ok = 0;
            continue;
        }
        *hash = '\0';
        char *key = trim(s);
        if (!strchr(key, '/') || strpbrk(key, " \t")) {
            fprintf(stderr, "%s:%d: expected 'suite/test_name  # reason'\n", path, lineno);
            ok = 0;
            continue;
        }
        int dup = 0;
        for (size_t i = 0; i < out->count; i++)
            if (strcmp(out->items[i].key, key) == 0)
                dup = 1;
        if (dup) {
            fprintf(stderr, "%s:%d: %s is listed twice\n", path, lineno, key);
            ok = 0;
            continue;
        }
        if (out->count == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 64;
            xfail_entry *n = realloc(out->items, out->cap * sizeof *n);
            if (!n) {
                fprintf(stderr, "onyx_conformance: out of memory\n");
                exit(2);
            }
            out->items = n;
        }
        xfail_entry *e = &out->items[out->count++];
        e->key = xstrdup(key);
        e->reason = xstrdup(why);
        e->skip = strncmp(why, SKIP_PREFIX, strlen(SKIP_PREFIX)) == 0;
        e->seen = 0;
    }
    fclose(f);
    return ok;
}

static xfail_entry *xfail_find(xfail_list *l, const char *suite, const char *test)
{
    size_t ls = strlen(suite);
    for (size_t i = 0; i < l->count; i++) {
        const char *k = l->items[i].key;
        if (strncmp(k, suite, ls) == 0 && k[ls] == '/' && strcmp(k + ls + 1, test) == 0)
            return &l->items[i];
    }
    return NULL;
}

static void xfail_free(xfail_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].key);
        free(l->items[i].reason);
    }
    free(l->items);
}

/* ------------------------------------------------------------------ */
/* value comparison                                                    */

static size_t elem_size(onyx_dtype t)
{
    switch (t) {
    case ONYX_UINT8:
    case ONYX_INT8:
    case ONYX_BOOL:
        return 1;
    case ONYX_UINT16:
    case ONYX_INT16:
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16:
        return 2;
    case ONYX_FLOAT32:
    case ONYX_INT32:
    case ONYX_UINT32:
        return 4;
    case ONYX_INT64:
    case ONYX_UINT64:
    case ONYX_FLOAT64:
    case ONYX_COMPLEX64:
        return 8;
    case ONYX_COMPLEX128:
        return 16;
    default:
        return 0;
    }
}

static int is_floating(onyx_dtype t)
{
    return t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_FLOAT16 ||
           t == ONYX_BFLOAT16 || t == ONYX_COMPLEX64 || t == ONYX_COMPLEX128;
}

static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp((double)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexp((double)(man | 0x400), exp - 25);
    return sign ? -v : v;
}

static double bf16_to_double(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Complex values are compared component by component, so index i here
 * addresses scalars, not elements. */
static double scalar_at(onyx_dtype t, const unsigned char *p, int64_t i)
{
    switch (t) {
    case ONYX_FLOAT32:
    case ONYX_COMPLEX64: {
        float v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case ONYX_FLOAT64:
    case ONYX_COMPLEX128: {
        double v;
        memcpy(&v, p + i * 8, 8);
        return v;
    }
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        uint16_t v;
        memcpy(&v, p + i * 2, 2);
        return t == ONYX_FLOAT16 ? half_to_double(v) : bf16_to_double(v);
    }
    case ONYX_BOOL:
        return p[i] != 0;
    case ONYX_UINT8:
        return p[i];
    case ONYX_INT8:
        return (int8_t)p[i];
    case ONYX_UINT16: {
        uint16_t v;
        memcpy(&v, p + i * 2, 2);
        return v;
    }
    case ONYX_INT16: {
        int16_t v;
        memcpy(&v, p + i * 2, 2);
        return v;
    }
    case ONYX_INT32: {
        int32_t v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case ONYX_UINT32: {
        uint32_t v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case ONYX_INT64: {
        int64_t v;
        memcpy(&v, p + i * 8, 8);
        return (double)v;
    }
    case ONYX_UINT64: {
        uint64_t v;
        memcpy(&v, p + i * 8, 8);
        return (double)v;
    }
    default:
        return 0;
    }
}

/* Integers are compared exactly on their bits; going through double
 * would merge distinct int64 values above 2^53. */
static int int_equal(onyx_dtype t, const unsigned char *a, const unsigned char *b, int64_t i,
                     size_t es)
{
    if (t == ONYX_BOOL)
        return (a[i] != 0) == (b[i] != 0);
    return memcmp(a + i * (int64_t)es, b + i * (int64_t)es, es) == 0;
}

/* Subtracting in unsigned arithmetic keeps a one-unit int64 difference
 * from vanishing in a double rounding. */
static double int_abs_diff(onyx_dtype t, const unsigned char *a, const unsigned char *b,
                           int64_t i)
{
    if (t == ONYX_INT64 || t == ONYX_UINT64) {
        uint64_t x, y;
        memcpy(&x, a + i * 8, 8);
        memcpy(&y, b + i * 8, 8);
        if (t == ONYX_INT64) {
            /* Flipping the sign bit maps int64 order onto uint64 order. */
            x ^= UINT64_C(1) << 63;
            y ^= UINT64_C(1) << 63;
        }
        return (double)(x > y ? x - y : y - x);
    }
    return fabs(scalar_at(t, a, i) - scalar_at(t, b, i));
}

static void format_scalar(onyx_dtype t, const unsigned char *p, int64_t i, char *buf,
                          size_t n)
{
    switch (t) {
    case ONYX_INT64: {
        int64_t v;
        memcpy(&v, p + i * 8, 8);
        snprintf(buf, n, "%lld", (long long)v);
        return;
    }
    case ONYX_UINT64: {
        uint64_t v;
        memcpy(&v, p + i * 8, 8);
        snprintf(buf, n, "%llu", (unsigned long long)v);
        return;
    }
    case ONYX_BOOL:
        snprintf(buf, n, "%s", p[i] ? "true" : "false");
        return;
    default:
        if (is_floating(t))
            snprintf(buf, n, "%.9g", scalar_at(t, p, i));
        else
            snprintf(buf, n, "%.0f", scalar_at(t, p, i));
        return;
    }
}

static void format_shape(const onyx_tensor *t, char *buf, size_t n)
{
    int rank = onyx_tensor_rank(t);
    const int64_t *dims = onyx_tensor_dims(t);
    size_t off = 0;
    off += (size_t)snprintf(buf + off, n - off, "[");
    for (int d = 0; d < rank && off < n; d++)
        off += (size_t)snprintf(buf + off, n - off, "%s%lld", d ? "," : "",
                                dims ? (long long)dims[d] : -1LL);
    if (off < n)
        snprintf(buf + off, n - off, "]");
}

static const char *kind_name(onyx_value_kind k)
{
    switch (k) {
    case ONYX_KIND_TENSOR:
        return "a tensor";
    case ONYX_KIND_SEQUENCE:
        return "a sequence";
    case ONYX_KIND_OPTIONAL:
        return "an optional";
    }
    return "an unknown kind of value";
}

static const char *dtype_label(onyx_dtype t)
{
    const char *n = onyx_dtype_name(t);
    return n ? n : "unknown";
}

static int compare_dense(const onyx_tensor *got, const onyx_tensor *exp, const char *label,
                         tolerance tol, char *reason)
{
    onyx_dtype t = onyx_tensor_dtype(exp);
    int64_t numel = onyx_tensor_numel(exp);

    if (t == ONYX_STRING) {
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < numel; i++) {
            const char *a = onyx_tensor_string(got, i), *b = onyx_tensor_string(exp, i);
            if (!a || !b || strcmp(a, b) != 0) {
                if (first < 0)
                    first = i;
                bad++;
            }
        }
        if (bad) {
            const char *a = onyx_tensor_string(got, first), *b = onyx_tensor_string(exp, first);
            set_reason(reason,
                       "%s: %lld of %lld strings differ, first at index %lld (got \"%.80s\", "
                       "expected \"%.80s\")",
                       label, (long long)bad, (long long)numel, (long long)first,
                       a ? a : "(null)", b ? b : "(null)");
            return 0;
        }
        return 1;
    }

    /* The accessors take a mutable tensor only because callers may write
     * through them; nothing is written here. */
    const unsigned char *a = onyx_tensor_data((onyx_tensor *)got);
    const unsigned char *b = onyx_tensor_data((onyx_tensor *)exp);
    size_t es = elem_size(t);
    if (es == 0) {
        /* Types this runner does not interpret are still comparable byte for byte. */
        size_t na = onyx_tensor_nbytes(got), nb = onyx_tensor_nbytes(exp);
        if (na != nb || (na && (!a || !b || memcmp(a, b, na) != 0))) {
            set_reason(reason, "%s: %s data differs", label, dtype_label(t));
            return 0;
        }
        return 1;
    }
    size_t need = (size_t)numel * es;
    if (numel > 0 && (!a || onyx_tensor_nbytes(got) < need)) {
        set_reason(reason, "%s: holds %zu bytes of data, expected %zu", label,
                   a ? onyx_tensor_nbytes(got) : (size_t)0, need);
        return 0;
    }
    if (numel > 0 && (!b || onyx_tensor_nbytes(exp) < need)) {
        set_reason(reason, "%s: reference holds too little data", label);
        return 0;
    }

    int fl = is_floating(t);
    if (t == ONYX_BFLOAT16 && tol.rtol < BF16_MIN_RTOL)
        tol.rtol = BF16_MIN_RTOL;
    int64_t count = numel;
    if (t == ONYX_COMPLEX64 || t == ONYX_COMPLEX128)
        count *= 2;
    int64_t bad = 0, worst = -1;
    double worst_diff = -1;
    for (int64_t i = 0; i < count; i++) {
        int ok;
        double diff;
        if (fl) {
            double x = scalar_at(t, a, i), y = scalar_at(t, b, i);
            if (isnan(y) || isnan(x)) {
                ok = isnan(x) && isnan(y);
                diff = INFINITY;
            } else if (isinf(y) || isinf(x)) {
                ok = x == y;
                diff = INFINITY;
            } else {
                diff = fabs(x - y);
                ok = diff <= tol.atol + tol.rtol * fabs(y);
            }
        } else {
            ok = int_equal(t, a, b, i, es);
            diff = int_abs_diff(t, a, b, i);
        }
        if (!ok) {
            bad++;
            if (diff > worst_diff) {
                worst_diff = diff;
                worst = i;
            }
        }
    }
    if (bad) {
        char gs[64], es_[64];
        format_scalar(t, a, worst, gs, sizeof gs);
        format_scalar(t, b, worst, es_, sizeof es_);
        set_reason(reason,
                   "%s: %lld of %lld values differ, max abs diff %g at index %lld (got %s, "
                   "expected %s)",
                   label, (long long)bad, (long long)count, worst_diff, (long long)worst, gs,
                   es_);
        return 0;
    }
    return 1;
}

static int compare_values(const onyx_tensor *got, const onyx_tensor *exp, const char *label,
                          tolerance tol, char *reason)
{
    if (!got) {
        set_reason(reason, "%s: no value produced", label);
        return 0;
    }
    onyx_value_kind kg = onyx_tensor_kind(got), ke = onyx_tensor_kind(exp);
    if (kg != ke) {
        set_reason(reason, "%s: got %s, expected %s", label, kind_name(kg), kind_name(ke));
        return 0;
    }
    if (ke == ONYX_KIND_SEQUENCE || ke == ONYX_KIND_OPTIONAL) {
        size_t ng = onyx_tensor_item_count(got), ne = onyx_tensor_item_count(exp);
        if (ng != ne) {
            if (ke == ONYX_KIND_OPTIONAL)
                set_reason(reason, "%s: optional is %s, expected %s", label,
                           ng ? "present" : "empty", ne ? "present" : "empty");
            else
                set_reason(reason, "%s: sequence has %zu items, expected %zu", label, ng, ne);
            return 0;
        }
        for (size_t i = 0; i < ne; i++) {
            char sub[512];
            if (ke == ONYX_KIND_SEQUENCE)
                snprintf(sub, sizeof sub, "%s item %zu", label, i);
            else
                snprintf(sub, sizeof sub, "%s value", label);
            if (!compare_values(onyx_tensor_item(got, i), onyx_tensor_item(exp, i), sub, tol,
                                reason))
                return 0;
        }
        return 1;
    }
    onyx_dtype tg = onyx_tensor_dtype(got), te = onyx_tensor_dtype(exp);
    if (tg != te) {
        set_reason(reason, "%s: dtype %s != expected %s", label, dtype_label(tg),
                   dtype_label(te));
        return 0;
    }
    int rg = onyx_tensor_rank(got), re = onyx_tensor_rank(exp);
    const int64_t *dg = onyx_tensor_dims(got), *de = onyx_tensor_dims(exp);
    int same = rg == re;
    for (int d = 0; same && d < re; d++)
        same = dg && de && dg[d] == de[d];
    if (!same) {
        char sg[256], se[256];
        format_shape(got, sg, sizeof sg);
        format_shape(exp, se, sizeof se);
        set_reason(reason, "%s: shape %s != expected %s", label, sg, se);
        return 0;
    }
    return compare_dense(got, exp, label, tol, reason);
}

/* ------------------------------------------------------------------ */
/* running one test                                                    */

typedef struct {
    onyx_env *env;
    onyx_session_options *opts;
    int keep_one_session; /* a device driver must stay loaded (see keep_loaded) */
} runner;

/* Mesa's lavapipe leaks 128 bytes in a one-time set-up each time the
 * Vulkan loader loads it, and the loader unloads it with the last
 * instance: a run of many sessions would leak once per session, from a
 * library already unloaded when LeakSanitizer looks (so no suppression can
 * name it). One session kept to the end, reachable from here, keeps the
 * driver loaded: the set-up runs once and stays reachable. */
static onyx_session *keep_loaded;

static int list_dir(const char *path, strlist *out, int (*keep)(const char *dir, const char *name))
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        if (keep(path, de->d_name))
            strlist_push(out, de->d_name);
    }
    closedir(d);
    return 1;
}

static int keep_test(const char *dir, const char *name)
{
    char p[PATH_CAP], m[PATH_CAP];
    return join(p, dir, name) && join(m, p, "model.onnx") && is_file(m);
}

/* A suite is a folder with at least one test folder in it. */
static int keep_suite(const char *dir, const char *name)
{
    char p[PATH_CAP];
    if (!join(p, dir, name) || !is_dir(p))
        return 0;
    strlist tests = {0};
    list_dir(p, &tests, keep_test);
    int any = tests.count > 0;
    strlist_free(&tests);
    return any;
}

static int keep_dataset(const char *dir, const char *name)
{
    char p[PATH_CAP];
    return strncmp(name, "test_data_set_", 14) == 0 && join(p, dir, name) && is_dir(p);
}

static void free_tensors(onyx_tensor **ts, size_t n)
{
    if (!ts)
        return;
    for (size_t i = 0; i < n; i++)
        onyx_tensor_free(ts[i]);
    free(ts);
}

/* numpy has no bfloat16, so the suite stores bfloat16 data as uint16 arrays
 * holding the same bits. Where the model says bfloat16, the bits are
 * relabelled rather than treated as a dtype mismatch. */
static int is_bf16_stand_in(const onyx_tensor *t, onyx_dtype want)
{
    return want == ONYX_BFLOAT16 && onyx_tensor_kind(t) == ONYX_KIND_TENSOR &&
           onyx_tensor_dtype(t) == ONYX_UINT16;
}

static onyx_status *as_bf16(const onyx_tensor *t, onyx_tensor **out)
{
    return onyx_tensor_wrap(ONYX_BFLOAT16, onyx_tensor_dims(t), onyx_tensor_rank(t),
                            onyx_tensor_data((onyx_tensor *)t), onyx_tensor_nbytes(t), out);
}

/* The model's declared kind of its i-th input or output: .pb bytes do not
 * say whether they hold a tensor, a sequence or an optional. */
static int declared_kind(const onyx_session *s, int is_input, size_t i, onyx_value_kind *kind)
{
    onyx_value_info info;
    onyx_status *st = is_input ? onyx_session_input_info(s, i, &info)
                               : onyx_session_output_info(s, i, &info);
    if (st) {
        onyx_status_free(st);
        return 0;
    }
    *kind = info.kind;
    return 1;
}

/* Loads prefix_0.pb, prefix_1.pb, ... until the first gap. */
static int load_numbered(const onyx_session *s, const char *dir, const char *prefix,
                         onyx_tensor ***out, size_t *count, char *reason)
{
    size_t n = 0;
    char name[64], path[PATH_CAP];
    for (;;) {
        snprintf(name, sizeof name, "%s_%zu.pb", prefix, n);
        if (!join(path, dir, name) || !is_file(path))
            break;
        n++;
    }
    onyx_tensor **ts = xmalloc(n * sizeof *ts);
    for (size_t i = 0; i < n; i++)
        ts[i] = NULL;
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s_%zu.pb", prefix, i);
        join(path, dir, name);
        onyx_value_kind kind;
        onyx_status *st = declared_kind(s, strcmp(prefix, "input") == 0, i, &kind)
                              ? onyx_tensor_load_kind(path, kind, &ts[i])
                              : onyx_tensor_load(path, &ts[i]);
        if (st) {
            char what[128];
            snprintf(what, sizeof what, "loading %s", name);
            status_reason(reason, what, st);
            free_tensors(ts, n);
            return 0;
        }
    }
    *out = ts;
    *count = n;
    return 1;
}

static int run_dataset(onyx_session *s, const char *dsdir, const char *dsname, tolerance tol,
                       char *reason)
{
    size_t nin = onyx_session_input_count(s), nout = onyx_session_output_count(s);
    onyx_tensor **inputs = NULL, **expected = NULL, **outputs = NULL;
    size_t nin_files = 0, nout_files = 0;
    const char **in_names = NULL, **out_names = NULL;
    const onyx_tensor **bound = NULL;
    onyx_tensor **relabelled = NULL;
    onyx_status *st = NULL;
    int ok = 0;
    char why[REASON_CAP] = "";

    if (!load_numbered(s, dsdir, "input", &inputs, &nin_files, why))
        goto done;
    if (!load_numbered(s, dsdir, "output", &expected, &nout_files, why))
        goto done;
    /* The suite stores inputs in graph-input order, initializer-backed
     * inputs excluded, so binding is purely positional. */
    if (nin_files != nin) {
        set_reason(why, "%zu input files, but the model has %zu inputs to bind", nin_files,
                   nin);
        goto done;
    }
    if (nout_files != nout) {
        set_reason(why, "%zu output files, but the model has %zu outputs", nout_files, nout);
        goto done;
    }
    in_names = xmalloc(nin * sizeof *in_names);
    out_names = xmalloc(nout * sizeof *out_names);
    outputs = xmalloc(nout * sizeof *outputs);
    for (size_t i = 0; i < nout; i++)
        outputs[i] = NULL;
    bound = xmalloc(nin * sizeof *bound);
    relabelled = xmalloc(nin * sizeof *relabelled);
    for (size_t i = 0; i < nin; i++) {
        bound[i] = inputs[i];
        relabelled[i] = NULL;
    }
    for (size_t i = 0; i < nin; i++) {
        onyx_value_info info;
        st = onyx_session_input_info(s, i, &info);
        if (st) {
            status_reason(why, "input info", st);
            goto done;
        }
        in_names[i] = info.name;
        if (is_bf16_stand_in(inputs[i], info.dtype)) {
            st = as_bf16(inputs[i], &relabelled[i]);
            if (st) {
                status_reason(why, "relabelling a uint16 input as bfloat16", st);
                goto done;
            }
            bound[i] = relabelled[i];
        }
    }
    for (size_t i = 0; i < nout; i++) {
        onyx_value_info info;
        st = onyx_session_output_info(s, i, &info);
        if (st) {
            status_reason(why, "output info", st);
            goto done;
        }
        out_names[i] = info.name;
    }
    st = onyx_session_run(s, in_names, bound, nin, out_names, outputs, nout);
    if (st) {
        status_reason(why, "run", st);
        goto done;
    }
    ok = 1;
    for (size_t i = 0; i < nout && ok; i++) {
        char label[256];
        snprintf(label, sizeof label, "output %zu '%.200s'", i, out_names[i] ? out_names[i] : "");
        if (outputs[i] && onyx_tensor_kind(outputs[i]) == ONYX_KIND_TENSOR &&
            is_bf16_stand_in(expected[i], onyx_tensor_dtype(outputs[i]))) {
            onyx_tensor *want = NULL;
            st = as_bf16(expected[i], &want);
            if (st) {
                status_reason(why, "relabelling a uint16 output as bfloat16", st);
                ok = 0;
                break;
            }
            ok = compare_values(outputs[i], want, label, tol, why);
            onyx_tensor_free(want);
        } else {
            ok = compare_values(outputs[i], expected[i], label, tol, why);
        }
    }

done:
    if (!ok)
        set_reason(reason, "%s: %s", dsname, why[0] ? why : "failed");
    free(in_names);
    free(out_names);
    free(bound);
    free_tensors(relabelled, relabelled ? nin : 0);
    free_tensors(outputs, nout);
    free_tensors(inputs, nin_files);
    free_tensors(expected, nout_files);
    return ok;
}

/* Sets *out to the value of "key": NUMBER in a small JSON object, if the
 * key is there; 0 when its value is not a non-negative number. data.json
 * holds nothing nested, so a full JSON parser would buy nothing. */
static int json_number(const char *text, const char *key, double *out)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(text, quoted);
    if (!p)
        return 1;
    p += strlen(quoted);
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p++ != ':')
        return 0;
    char *end;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v) || v < 0)
        return 0;
    *out = v;
    return 1;
}

/* A test's own tolerances, as onnx's backend test reads them from data.json. */
static int read_tolerance(const char *testdir, tolerance *tol, char *reason)
{
    tol->rtol = DEFAULT_RTOL;
    tol->atol = DEFAULT_ATOL;
    char path[PATH_CAP];
    if (!join(path, testdir, "data.json") || !is_file(path))
        return 1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_reason(reason, "cannot open data.json: %s", strerror(errno));
        return 0;
    }
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    if (!json_number(text, "rtol", &tol->rtol) || !json_number(text, "atol", &tol->atol)) {
        set_reason(reason, "data.json: rtol/atol must be non-negative numbers");
        return 0;
    }
    return 1;
}

static int run_test(runner *r, const char *testdir, char *reason)
{
    char model[PATH_CAP];
    if (!join(model, testdir, "model.onnx")) {
        set_reason(reason, "path too long");
        return 0;
    }
    strlist sets = {0};
    list_dir(testdir, &sets, keep_dataset);
    if (sets.count == 0) {
        set_reason(reason, "no test_data_set_N folders");
        strlist_free(&sets);
        return 0;
    }
    qsort(sets.items, sets.count, sizeof *sets.items, cmp_dataset);
    tolerance tol;
    if (!read_tolerance(testdir, &tol, reason)) {
        strlist_free(&sets);
        return 0;
    }

    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create(r->env, model, r->opts, &s);
    if (st) {
        /* The model path is implied by the test name; repeating it only
         * pushes the interesting part of the message out of view. */
        const char *msg = onyx_status_message(st);
        size_t ml = strlen(model);
        if (strncmp(msg, model, ml) == 0 && msg[ml] == ':')
            msg += ml + 1 + (msg[ml + 1] == ' ');
        set_reason(reason, "load: %s", msg);
        onyx_status_free(st);
        strlist_free(&sets);
        return 0;
    }
    int ok = 1;
    for (size_t i = 0; i < sets.count && ok; i++) {
        char dsdir[PATH_CAP];
        if (!join(dsdir, testdir, sets.items[i])) {
            set_reason(reason, "path too long");
            ok = 0;
            break;
        }
        ok = run_dataset(s, dsdir, sets.items[i], tol, reason);
    }
    if (r->keep_one_session && !keep_loaded)
        keep_loaded = s;
    else
        onyx_session_free(s);
    strlist_free(&sets);
    return ok;
}

/* ------------------------------------------------------------------ */
/* driver                                                              */

typedef struct {
    const char *name;
    int passed, failed, skipped;
} suite_count;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: onyx_conformance [--data DIR] [--suite LIST] [--filter SUBSTR]\n"
            "                        [--expected-failures FILE] [--results FILE]\n"
            "                        [--threads N] [--opt-level 0|1|2] [--verbose]\n"
            "\n"
            "  --data DIR               suite folder holding node/, simple/...\n"
            "                           (default " DEFAULT_DATA_DIR ")\n"
            "  --suite LIST             comma-separated suites (default: every folder of\n"
            "                           DIR that holds tests)\n"
            "  --filter SUBSTR          only tests whose name contains SUBSTR\n"
            "  --expected-failures FILE known failures: 'suite/test  # reason' per line\n"
            "                           (up to 4 files, e.g. a provider's own list);\n"
            "                           a reason starting with '" SKIP_PREFIX "' skips it.\n"
            "                           Exit status 1 only when an unlisted test fails;\n"
            "                           listed tests that pass are printed as XPASS\n"
            "  --results FILE           per-test TSV output (default " DEFAULT_RESULTS ")\n"
            "  --threads N              intra-op threads per session (default 1; 0 = all cores)\n"
            "  --opt-level N            graph optimization level (default: library default)\n"
            "  --providers A,B          execution providers in priority order (default: the\n"
            "                           library's), each as NAME[:KEY=VALUE...]; cpu is the\n"
            "                           fallback for the rest\n"
            "  --verbose                report every test, not only regressions\n");
}

/* "vulkan:place=all,cpu" -> onyx_session_options_set_providers and
 * onyx_session_options_set_provider_option. */
static onyx_status *set_providers(onyx_session_options *opts, const char *list)
{
    const char *names[16];
    size_t n = 0;
    char *copy = xstrdup(list), *save = NULL;
    onyx_status *st = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < 16; t = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(t, ':');
        if (colon)
            *colon = '\0';
        names[n++] = trim(t);
    }
    st = onyx_session_options_set_providers(opts, names, n);
    /* the options, now that the providers are known */
    free(copy);
    copy = xstrdup(list);
    save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && !st; t = strtok_r(NULL, ",", &save)) {
        char *save2 = NULL, *name = strtok_r(t, ":", &save2);
        for (char *kv = strtok_r(NULL, ":", &save2); kv && !st; kv = strtok_r(NULL, ":", &save2)) {
            char *eq = strchr(kv, '=');
            if (!eq) {
                fprintf(stderr, "onyx_conformance: provider option '%s' is not KEY=VALUE\n", kv);
                exit(2);
            }
            *eq = '\0';
            st = onyx_session_options_set_provider_option(opts, trim(name), kv, eq + 1);
        }
    }
    free(copy);
    return st;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *data = DEFAULT_DATA_DIR, *suites_arg = NULL, *filter = NULL;
    const char *xfail_paths[4], *results_path = DEFAULT_RESULTS, *providers = NULL;
    int n_xfail = 0;
    int threads = 1, opt_level = -1, verbose = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            verbose = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (has_val && strcmp(a, "--data") == 0) {
            data = argv[++i];
        } else if (has_val && strcmp(a, "--suite") == 0) {
            suites_arg = argv[++i];
        } else if (has_val && strcmp(a, "--filter") == 0) {
            filter = argv[++i];
        } else if (has_val && strcmp(a, "--expected-failures") == 0) {
            if (n_xfail == 4) {
                fprintf(stderr, "onyx_conformance: at most 4 --expected-failures files\n");
                return 2;
            }
            xfail_paths[n_xfail++] = argv[++i];
        } else if (has_val && strcmp(a, "--results") == 0) {
            results_path = argv[++i];
        } else if (has_val && strcmp(a, "--providers") == 0) {
            providers = argv[++i];
        } else if (has_val && (strcmp(a, "--threads") == 0 || strcmp(a, "--opt-level") == 0)) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || end == argv[i + 1] || v < 0 || v > 4096) {
                fprintf(stderr, "onyx_conformance: bad value for %s: %s\n", a, argv[i + 1]);
                return 2;
            }
            if (a[2] == 't')
                threads = (int)v;
            else if (v > 2) {
                fprintf(stderr, "onyx_conformance: --opt-level must be 0, 1 or 2\n");
                return 2;
            } else
                opt_level = (int)v;
            i++;
        } else {
            fprintf(stderr, "onyx_conformance: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    xfail_list xfail = {0};
    for (int k = 0; k < n_xfail; k++)
        if (!xfail_load(xfail_paths[k], &xfail)) {
            xfail_free(&xfail);
            return 2;
        }

    strlist suites = {0};
    if (!suites_arg) {
        /* Every suite the folder holds: the ONNX 1.23 suite has more test
         * sets (real) than the 1.12 one, and later ones may add more. */
        list_dir(data, &suites, keep_suite);
        qsort(suites.items, suites.count, sizeof *suites.items, cmp_str);
    } else {
        char *copy = xstrdup(suites_arg), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            t = trim(t);
            if (*t)
                strlist_push(&suites, t);
        }
        free(copy);
    }
    if (suites.count == 0) {
        fprintf(stderr, "onyx_conformance: no suites selected (no test folders in %s?)\n", data);
        return 2;
    }
    for (size_t i = 0; i < suites.count; i++) {
        char p[PATH_CAP];
        if (!join(p, data, suites.items[i]) || !is_dir(p)) {
            fprintf(stderr, "onyx_conformance: no suite folder %s/%s (use --data DIR)\n", data,
                    suites.items[i]);
            strlist_free(&suites);
            xfail_free(&xfail);
            return 2;
        }
    }

    FILE *res = fopen(results_path, "w");
    if (!res) {
        fprintf(stderr, "onyx_conformance: cannot write %s: %s\n", results_path,
                strerror(errno));
        strlist_free(&suites);
        xfail_free(&xfail);
        return 2;
    }

    runner r = {0};
    onyx_status *st = onyx_env_create(&r.env);
    if (!st)
        st = onyx_env_set_log_level(r.env, verbose ? ONYX_LOG_WARNING : ONYX_LOG_ERROR);
    if (!st)
        st = onyx_session_options_create(&r.opts);
    if (!st)
        st = onyx_session_options_set_threads(r.opts, threads);
    if (!st && opt_level >= 0)
        st = onyx_session_options_set_optimization_level(r.opts, (onyx_opt_level)opt_level);
    if (!st && providers)
        st = set_providers(r.opts, providers);
    r.keep_one_session = providers && strstr(providers, "vulkan") != NULL;
    if (st) {
        fprintf(stderr, "onyx_conformance: setup failed: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        onyx_session_options_free(r.opts);
        onyx_env_free(r.env);
        fclose(res);
        strlist_free(&suites);
        xfail_free(&xfail);
        return 2;
    }

    suite_count *counts = xmalloc(suites.count * sizeof *counts);
    int passed = 0, failed = 0, skipped = 0, xfailed = 0, regressions = 0, xpassed = 0;
    double t_start = now_s();

    for (size_t si = 0; si < suites.count; si++) {
        const char *suite = suites.items[si];
        suite_count *c = &counts[si];
        *c = (suite_count){.name = suite};
        char sdir[PATH_CAP];
        join(sdir, data, suite);
        strlist tests = {0};
        list_dir(sdir, &tests, keep_test);
        qsort(tests.items, tests.count, sizeof *tests.items, cmp_str);

        for (size_t ti = 0; ti < tests.count; ti++) {
            const char *test = tests.items[ti];
            if (filter && !strstr(test, filter))
                continue;
            xfail_entry *xe = xfail_find(&xfail, suite, test);
            if (xe)
                xe->seen = 1;
            char reason[REASON_CAP] = "";
            const char *status;
            if (xe && xe->skip) {
                status = "skip";
                snprintf(reason, sizeof reason, "%s", xe->reason);
                skipped++;
                c->skipped++;
                if (verbose)
                    printf("SKIP  %s/%s: %s\n", suite, test, reason);
            } else {
                char tdir[PATH_CAP];
                double t0 = now_s();
                int ok = join(tdir, sdir, test) ? run_test(&r, tdir, reason) : 0;
                double dt = now_s() - t0;
                if (!ok && !reason[0])
                    snprintf(reason, sizeof reason, "failed");
                sanitize(reason);
                if (ok) {
                    status = "pass";
                    passed++;
                    c->passed++;
                    if (xe) {
                        xpassed++;
                        printf("XPASS %s/%s: listed as an expected failure but passes\n",
                               suite, test);
                    } else if (verbose) {
                        printf("PASS  %s/%s (%.3fs)\n", suite, test, dt);
                    }
                } else {
                    status = "fail";
                    failed++;
                    c->failed++;
                    if (xe) {
                        xfailed++;
                        if (verbose)
                            printf("XFAIL %s/%s: %s\n", suite, test, reason);
                    } else {
                        regressions++;
                        printf("FAIL  %s/%s: %s\n", suite, test, reason);
                    }
                }
            }
            sanitize(reason);
            fprintf(res, "%s\t%s\t%s\t%s\n", suite, test, status, reason);
            /* Keep what was learnt so far on disk in case a later test crashes. */
            fflush(res);
            fflush(stdout);
        }
        strlist_free(&tests);
    }
    fclose(res);

    /* An entry naming a test that no longer exists hides nothing but
     * rots the list; flag it, unless the run was deliberately partial. */
    int stale = 0;
    if (!filter) {
        for (size_t i = 0; i < xfail.count; i++) {
            xfail_entry *e = &xfail.items[i];
            if (e->seen)
                continue;
            int suite_ran = 0;
            for (size_t si = 0; si < suites.count; si++) {
                size_t n = strlen(suites.items[si]);
                if (strncmp(e->key, suites.items[si], n) == 0 && e->key[n] == '/')
                    suite_ran = 1;
            }
            if (suite_ran) {
                stale++;
                printf("STALE %s: listed in the expected failures but no such test exists\n",
                       e->key);
            }
        }
    }

    printf("expected failures: %d, regressions: %d, unexpected passes: %d", xfailed,
           regressions, xpassed);
    if (stale)
        printf(", stale entries: %d", stale);
    for (size_t si = 0; si < suites.count; si++)
        printf("; %s: %d/%d passed, %d skipped", counts[si].name, counts[si].passed,
               counts[si].passed + counts[si].failed, counts[si].skipped);
    printf(" (%.1fs)\n", now_s() - t_start);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (xpassed || stale)
        printf("%d listed test(s) pass and %d entr%s no test: shrink the list with\n"
               "  tools/gen/update_expected_failures.py %s %s\n",
               xpassed, stale, stale == 1 ? "y names" : "ies name", n_xfail ? xfail_paths[n_xfail - 1] : "", results_path);

    /* Only an unlisted failure fails the run: operators land one by one,
     * and a list that must shrink in the same change would block them. */
    int rc = n_xfail ? (regressions ? 1 : 0) : (failed ? 1 : 0);

    free(counts);
    onyx_session_options_free(r.opts);
    onyx_env_free(r.env);
    strlist_free(&suites);
    xfail_free(&xfail);
    return rc;
}
