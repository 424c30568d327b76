/* Model test: runs the cases of the model zoo's manifest (written by
 * make_references.py) through onyx and compares every output with ONNX
 * Runtime's, at the tolerance the manifest names for it.
 *
 * usage: test_models MANIFEST [--model-variant NAME] [--providers A,B]
 *                    [--opt-level none|basic|all] [--expect-split]
 *                    [--compiled DIR] [CASE...]
 *
 * Without CASE names every case runs. --providers runs the cases with
 * those providers in priority order (e.g. vulkan,cpu) and prints per case
 * how many nodes each provider took and, for a device provider, its
 * kernels, submissions and copies per run, and the dispatches it split
 * over its work budget; with --expect-split a case fails unless the first
 * provider split some (ONYX_VK_LIMITS=dispatchBudget=N makes Vulkan's
 * budget small), took at least a quarter of the nodes and launched
 * kernels in every run. --model-variant runs each case on another file of the
 * same model, X.NAME.onnx beside X.onnx (ONNX Runtime's saved optimized
 * graphs: ort_basic, ort_extended), against the
 * original model's references. --compiled DIR checks optimized files
 * instead (test_models_compiled.c). --opt-level sets the graph optimization
 * level (default: the library's, all). Prints per output the largest
 * absolute and relative difference, then "N passed, N failed" over cases;
 * exits non-zero when any case fails.
 *
 * Tolerance kinds:
 *   prob    |onyx - ort| <= 1e-4. Probabilities and scores live in [0, 1],
 *           where an absolute bound is the natural one.
 *   logit   |onyx - ort| <= 1e-3 * |ort| + 1e-4 * max|ort|, the maximum
 *           over the whole tensor. A float32 result that is a sum of terms
 *           of size M carries rounding error proportional to M, not to the
 *           result: a logit or coordinate that cancels to near zero cannot
 *           be held to 1e-3 of itself. The tensor's largest magnitude
 *           stands in for M; at 1e-4 the floor is ten times tighter than
 *           the relative bound and only governs values under a tenth of
 *           the tensor's range.
 *   int     exact.
 *   int_set exact as multisets along the last axis, for integer outputs
 *           whose order is decided by ties.
 *   row_set logit tolerance, with the rows along axis -2 (per leading
 *           index) matched one to one in any order: a detector's queries
 *           come out of a TopK whose nearly tied scores may swap places.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onyx.h"
#include "test_models.h"

static char *xstrdup(const char *s) {
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "test_models: out of memory\n");
        exit(2);
    }
    return d;
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "test_models: out of memory\n");
        exit(2);
    }
    return q;
}

static char *join_path(const char *dir, const char *rel) {
    if (rel[0] == '/' || !*dir) return xstrdup(rel);
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = xrealloc(NULL, n);
    snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

static int parse_kind(const char *s, kind *out) {
    static const struct {
        const char *name;
        kind k;
    } kinds[] = {{"prob", K_PROB},
                 {"logit", K_LOGIT},
                 {"int", K_INT},
                 {"int_set", K_INT_SET},
                 {"row_set", K_ROW_SET}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, kinds[i].name) == 0) {
            *out = kinds[i].k;
            return 0;
        }
    return -1;
}

static const char *kind_name(kind k) {
    switch (k) {
    case K_PROB: return "prob";
    case K_LOGIT: return "logit";
    case K_INT: return "int";
    case K_ROW_SET: return "row_set";
    default: return "int_set";
    }
}

static void free_io(io *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].file);
    }
    free(v);
}

static void free_manifest(manifest *m) {
    for (size_t i = 0; i < m->n; i++) {
        test_case *c = &m->cases[i];
        free(c->name);
        free(c->model);
        free_io(c->inputs, c->n_inputs);
        free_io(c->outputs, c->n_outputs);
    }
    free(m->cases);
}

/* Splits a line at tabs in place; returns the field count (at most max). */
static int split_tabs(char *line, char **fields, int max) {
    int n = 0;
    for (char *p = line; n < max;) {
        fields[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static int load_manifest(const char *path, manifest *m) {
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test_models: cannot open manifest '%s' (build the zoo_references "
                        "target first)\n",
                path);
        return -1;
    }
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else dir[0] = '\0';

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0 || line[0] == '#') continue;
        char *fields[5] = {0};
        int nf = split_tabs(line, fields, 5);
        test_case *cur = m->n ? &m->cases[m->n - 1] : NULL;
        if (strcmp(fields[0], "case") == 0 && nf == 3) {
            m->cases = xrealloc(m->cases, (m->n + 1) * sizeof *m->cases);
            test_case *c = &m->cases[m->n++];
            memset(c, 0, sizeof *c);
            c->name = xstrdup(fields[1]);
            c->model = join_path(dir, fields[2]);
        } else if (strcmp(fields[0], "input") == 0 && nf == 3 && cur) {
            cur->inputs = xrealloc(cur->inputs, (cur->n_inputs + 1) * sizeof *cur->inputs);
            io *v = &cur->inputs[cur->n_inputs++];
            v->name = xstrdup(fields[1]);
            v->file = join_path(dir, fields[2]);
            v->kind = K_LOGIT;
        } else if (strcmp(fields[0], "output") == 0 && nf == 4 && cur) {
            kind k;
            if (parse_kind(fields[3], &k) != 0) {
                fprintf(stderr, "%s:%d: unknown tolerance kind '%s'\n", path, lineno, fields[3]);
                rc = -1;
                break;
            }
            cur->outputs = xrealloc(cur->outputs, (cur->n_outputs + 1) * sizeof *cur->outputs);
            io *v = &cur->outputs[cur->n_outputs++];
            v->name = xstrdup(fields[1]);
            v->file = join_path(dir, fields[2]);
            v->kind = k;
        } else {
            fprintf(stderr, "%s:%d: malformed line\n", path, lineno);
            rc = -1;
            break;
        }
    }
    free(line);
    free(dir);
    fclose(f);
    if (rc == 0 && m->n == 0) {
        fprintf(stderr, "%s: no cases\n", path);
        rc = -1;
    }
    if (rc != 0) free_manifest(m);
    return rc;
}

/* ---- element access ---- */

static int is_float(onyx_dtype t) { return t == ONYX_FLOAT32 || t == ONYX_FLOAT64; }

static int is_integer(onyx_dtype t) {
    switch (t) {
    case ONYX_INT8:
    case ONYX_UINT8:
    case ONYX_INT16:
    case ONYX_UINT16:
    case ONYX_INT32:
    case ONYX_UINT32:
    case ONYX_INT64:
    case ONYX_UINT64:
    case ONYX_BOOL: return 1;
    default: return 0;
    }
}

static double float_at(const void *d, onyx_dtype t, int64_t i) {
    return t == ONYX_FLOAT32 ? ((const float *)d)[i] : ((const double *)d)[i];
}

/* uint64 above INT64_MAX wraps; both sides wrap alike, so equality holds */
static int64_t int_at(const void *d, onyx_dtype t, int64_t i) {
    switch (t) {
    case ONYX_INT8: return ((const int8_t *)d)[i];
    case ONYX_UINT8:
    case ONYX_BOOL: return ((const uint8_t *)d)[i];
    case ONYX_INT16: return ((const int16_t *)d)[i];
    case ONYX_UINT16: return ((const uint16_t *)d)[i];
    case ONYX_INT32: return ((const int32_t *)d)[i];
    case ONYX_UINT32: return ((const uint32_t *)d)[i];
    case ONYX_UINT64: return (int64_t)((const uint64_t *)d)[i];
    default: return ((const int64_t *)d)[i];
    }
}

static void print_dims(const onyx_tensor *t) {
    const int64_t *dims = onyx_tensor_dims(t);
    printf("[");
    for (int i = 0; i < onyx_tensor_rank(t); i++) printf(i ? ",%" PRId64 : "%" PRId64, dims[i]);
    printf("]");
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ---- comparison ---- */

static int compare_float(const io *o, onyx_tensor *got, onyx_tensor *want) {
    const void *g = onyx_tensor_data(got), *w = onyx_tensor_data(want);
    onyx_dtype gt = onyx_tensor_dtype(got), wt = onyx_tensor_dtype(want);
    int64_t n = onyx_tensor_numel(want);
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(float_at(w, wt, i));
        if (isfinite(v) && v > scale) scale = v;
    }
    double floor_abs = o->kind == K_LOGIT ? LOGIT_FLOOR * scale : PROB_ATOL;
    double max_abs = 0, max_rel = 0, worst = -1; /* worst: largest diff / tolerance */
    int64_t bad = 0, worst_at = -1;
    for (int64_t i = 0; i < n; i++) {
        double a = float_at(g, gt, i), b = float_at(w, wt, i);
        double tol = o->kind == K_LOGIT ? LOGIT_RTOL * fabs(b) + floor_abs : PROB_ATOL;
        double d, ratio;
        if (isnan(b) || isnan(a) || isinf(b) || isinf(a)) {
            int same = (isnan(a) && isnan(b)) || a == b;
            d = same ? 0 : INFINITY;
            ratio = same ? 0 : INFINITY;
        } else {
            d = fabs(a - b);
            ratio = tol > 0 ? d / tol : (d > 0 ? INFINITY : 0);
            if (d > max_abs) max_abs = d;
            /* relative to values above the floor; below it, relative
             * differences say nothing */
            if (fabs(b) > floor_abs && d / fabs(b) > max_rel) max_rel = d / fabs(b);
        }
        if (ratio > 1) bad++;
        if (ratio > worst) {
            worst = ratio;
            worst_at = i;
        }
    }
    printf("max diff abs %.3g rel %.3g (tolerance ", max_abs, max_rel);
    if (o->kind == K_LOGIT)
        printf("%g rel + %.3g abs", LOGIT_RTOL, floor_abs);
    else
        printf("%g abs", PROB_ATOL);
    if (!bad) {
        printf("): ok\n");
        return 0;
    }
    printf("): FAIL, %" PRId64 " of %" PRId64 " values out of tolerance; worst at flat index %" PRId64
           ": onyx %.9g, ort %.9g\n",
           bad, n, worst_at, float_at(g, gt, worst_at), float_at(w, wt, worst_at));
    return -1;
}

/* Whether row r of a and row q of b (len values each) agree at the logit
 * tolerance with the given floor; the largest difference goes to *d. */
static int rows_match(const void *a, onyx_dtype at, int64_t r, const void *b, onyx_dtype bt,
                      int64_t q, int64_t len, double floor_abs, double *d) {
    *d = 0;
    for (int64_t k = 0; k < len; k++) {
        double x = float_at(a, at, r * len + k), y = float_at(b, bt, q * len + k);
        if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) {
            if (!((isnan(x) && isnan(y)) || x == y)) return 0;
            continue;
        }
        double diff = fabs(x - y);
        if (diff > LOGIT_RTOL * fabs(y) + floor_abs) return 0;
        if (diff > *d) *d = diff;
    }
    return 1;
}

/* row_set: every onyx row along axis -2 is matched to a distinct ORT row
 * of the same leading index (its own position first, then the first free
 * one that agrees). */
static int compare_row_set(const io *o, onyx_tensor *got, onyx_tensor *want) {
    (void)o;
    const void *g = onyx_tensor_data(got), *w = onyx_tensor_data(want);
    onyx_dtype gt = onyx_tensor_dtype(got), wt = onyx_tensor_dtype(want);
    size_t rank = onyx_tensor_rank(want);
    int64_t n = onyx_tensor_numel(want);
    if (rank < 2) {
        printf("FAIL, row_set needs rank >= 2\n");
        return -1;
    }
    int64_t len = onyx_tensor_dims(want)[rank - 1], rows = onyx_tensor_dims(want)[rank - 2];
    int64_t groups = rows && len ? n / (rows * len) : 0;
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(float_at(w, wt, i));
        if (isfinite(v) && v > scale) scale = v;
    }
    double floor_abs = LOGIT_FLOOR * scale, max_abs = 0;
    unsigned char *used = calloc((size_t)rows + 1, 1);
    int64_t moved = 0;
    for (int64_t gi = 0; gi < groups; gi++) {
        memset(used, 0, (size_t)rows + 1);
        for (int64_t r = 0; r < rows; r++) {
            int64_t base = gi * rows, match = -1;
            double d = 0;
            if (!used[r] && rows_match(g, gt, base + r, w, wt, base + r, len, floor_abs, &d))
                match = r;
            for (int64_t q = 0; match < 0 && q < rows; q++)
                if (!used[q] && rows_match(g, gt, base + r, w, wt, base + q, len, floor_abs, &d))
                    match = q;
            if (match < 0) {
                printf("max diff abs %.3g (tolerance %g rel + %.3g abs): FAIL, onyx row %" PRId64
                       " of group %" PRId64 " matches no ORT row\n",
                       max_abs, LOGIT_RTOL, floor_abs, r, gi);
                free(used);
                return -1;
            }
            used[match] = 1;
            moved += match != r;
            if (d > max_abs) max_abs = d;
        }
    }
    free(used);
    printf("max diff abs %.3g (tolerance %g rel + %.3g abs, rows as sets; %" PRId64
           " matched out of place): ok\n",
           max_abs, LOGIT_RTOL, floor_abs, moved);
    return 0;
}

static int compare_int(const io *o, onyx_tensor *got, onyx_tensor *want) {
    const void *g = onyx_tensor_data(got), *w = onyx_tensor_data(want);
    onyx_dtype gt = onyx_tensor_dtype(got), wt = onyx_tensor_dtype(want);
    int64_t n = onyx_tensor_numel(want);
    int rank = onyx_tensor_rank(want);
    int64_t row = rank > 0 ? onyx_tensor_dims(want)[rank - 1] : 1;
    int64_t *a = NULL, *b = NULL;
    if (n > 0) {
        a = xrealloc(NULL, (size_t)n * sizeof *a);
        b = xrealloc(NULL, (size_t)n * sizeof *b);
    }
    for (int64_t i = 0; i < n; i++) {
        a[i] = int_at(g, gt, i);
        b[i] = int_at(w, wt, i);
    }
    if (o->kind == K_INT_SET && row > 0) {
        for (int64_t r = 0; r < n / row; r++) {
            qsort(a + r * row, (size_t)row, sizeof *a, cmp_i64);
            qsort(b + r * row, (size_t)row, sizeof *b, cmp_i64);
        }
    }
    uint64_t max_abs = 0;
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (a[i] == b[i]) continue;
        uint64_t d = a[i] > b[i] ? (uint64_t)a[i] - (uint64_t)b[i] : (uint64_t)b[i] - (uint64_t)a[i];
        if (d > max_abs) max_abs = d;
        if (first < 0) first = i;
        bad++;
    }
    printf("max diff abs %" PRIu64 " rel %s (tolerance exact%s)", max_abs, bad ? "-" : "0",
           o->kind == K_INT_SET ? ", as sets along the last axis" : "");
    int rc = 0;
    if (!bad) {
        printf(": ok\n");
    } else {
        printf(": FAIL, %" PRId64 " of %" PRId64 " values differ; first at %s index %" PRId64
               ": onyx %" PRId64 ", ort %" PRId64 "\n",
               bad, n, o->kind == K_INT_SET ? "sorted" : "flat", first, a[first], b[first]);
        rc = -1;
    }
    free(a);
    free(b);
    return rc;
}

int compare_output(const io *o, onyx_tensor *got) {
    onyx_tensor *want = NULL;
    onyx_status *st = onyx_tensor_load(o->file, &want);
    if (st) {
        printf("FAIL, cannot read reference %s: %s\n", o->file, onyx_status_message(st));
        onyx_status_free(st);
        return -1;
    }
    int rc = -1;
    onyx_dtype gt = onyx_tensor_dtype(got), wt = onyx_tensor_dtype(want);
    int same_shape = onyx_tensor_rank(got) == onyx_tensor_rank(want);
    for (int i = 0; same_shape && i < onyx_tensor_rank(want); i++)
        same_shape = onyx_tensor_dims(got)[i] == onyx_tensor_dims(want)[i];
    printf("%s ", onyx_dtype_name(wt));
    print_dims(want);
    printf(" %s: ", kind_name(o->kind));
    if (onyx_tensor_kind(got) != ONYX_KIND_TENSOR) {
        printf("FAIL, onyx returned a sequence or optional\n");
    } else if (gt != wt) {
        printf("FAIL, onyx returned %s\n", onyx_dtype_name(gt));
    } else if (!same_shape) {
        printf("FAIL, onyx returned shape ");
        print_dims(got);
        printf("\n");
    } else if ((o->kind == K_PROB || o->kind == K_LOGIT) && is_float(wt)) {
        rc = compare_float(o, got, want);
    } else if (o->kind == K_ROW_SET && is_float(wt)) {
        rc = compare_row_set(o, got, want);
    } else if ((o->kind == K_INT || o->kind == K_INT_SET) && is_integer(wt)) {
        rc = compare_int(o, got, want);
    } else {
        printf("FAIL, tolerance kind %s does not apply to %s\n", kind_name(o->kind),
               onyx_dtype_name(wt));
    }
    onyx_tensor_free(want);
    return rc;
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int fail_status(const char *what, onyx_status *st) {
    printf("  FAIL: %s: %s (code %d)\n", what, onyx_status_message(st), (int)onyx_status_code(st));
    onyx_status_free(st);
    return -1;
}

/* Placement and device work of one session, for the log. */
static void report_providers(const onyx_session *s, const char *providers) {
    char names[256];
    snprintf(names, sizeof names, "%s", providers);
    for (char *save = NULL, *p = strtok_r(names, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        size_t on = 0, total = onyx_session_node_count(s);
        for (size_t i = 0; i < total; i++) on += strcmp(onyx_session_node_provider(s, i), p) == 0;
        printf("  provider %s: %zu of %zu nodes", p, on, total);
        onyx_provider_stats st;
        onyx_status *e = onyx_session_provider_stats(s, p, &st);
        if (!e && st.runs)
            printf("; per run %.0f kernels, %.0f submits, %.0f copies to the host, %.0f from it; "
                   "%llu weights uploaded",
                   (double)st.kernel_launches / (double)st.runs, (double)st.submits / (double)st.runs,
                   (double)st.copies_to_host / (double)st.runs,
                   (double)st.copies_from_host / (double)st.runs,
                   (unsigned long long)st.weight_uploads);
        if (!e && st.split_dispatches)
            printf("; %llu dispatches split into %llu slices (dispatch budget)",
                   (unsigned long long)st.split_dispatches, (unsigned long long)st.dispatch_slices);
        if (e) onyx_status_free(e);
        printf("\n");
    }
}

/* --expect-split also asks that the first provider took at least this
 * share of the nodes (percent) and launched kernels in every run: a
 * bounded device that quietly left the model to the CPU (limits it
 * cannot meet) must not pass as split. */
#define EXPECT_SPLIT_MIN_SHARE 25

/* --expect-split: the first provider split some dispatch over its work
 * budget into more slices than it split dispatches (each at least two),
 * and did a real share of the work (EXPECT_SPLIT_MIN_SHARE). */
static int check_split(const onyx_session *s, const char *providers) {
    char first[64];
    size_t n = strcspn(providers, ",");
    snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : sizeof first - 1), providers);
    onyx_provider_stats st;
    onyx_status *e = onyx_session_provider_stats(s, first, &st);
    if (e) {
        fail_status("provider stats", e);
        return -1;
    }
    if (st.split_dispatches == 0 || st.dispatch_slices < 2 * st.split_dispatches) {
        printf("  FAIL: --expect-split: provider %s split %llu dispatches into %llu slices\n", first,
               (unsigned long long)st.split_dispatches, (unsigned long long)st.dispatch_slices);
        return -1;
    }
    size_t on = 0, total = onyx_session_node_count(s);
    for (size_t i = 0; i < total; i++) on += strcmp(onyx_session_node_provider(s, i), first) == 0;
    if (on * 100 < total * EXPECT_SPLIT_MIN_SHARE || st.runs == 0 ||
        st.kernel_launches < st.runs) {
        printf("  FAIL: --expect-split: provider %s took %zu of %zu nodes (at least %d%% wanted) "
               "and launched %llu kernels in %llu runs\n",
               first, on, total, EXPECT_SPLIT_MIN_SHARE, (unsigned long long)st.kernel_launches,
               (unsigned long long)st.runs);
        return -1;
    }
    return 0;
}

/* Mesa's lavapipe leaks 128 bytes in a one-time set-up each time the
 * Vulkan loader loads it, and unloads it with the last instance, before
 * LeakSanitizer can name it. A session with a device provider is kept to
 * the end, reachable from here, so the driver stays loaded and the set-up
 * stays reachable. */
static onyx_session *keep_loaded;

int keep_driver_loaded(onyx_session *s) {
    if (!s || keep_loaded) return 0;
    keep_loaded = s;
    return 1;
}

onyx_status *case_options(const char *providers, int opt_level, onyx_session_options **out) {
    onyx_status *st = onyx_session_options_create(out);
    if (!st && opt_level >= 0)
        st = onyx_session_options_set_optimization_level(*out, (onyx_opt_level)opt_level);
    if (st || !providers) return st;
    const char *names[8];
    size_t n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", providers);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p && n < 8; p = strtok_r(NULL, ",", &save))
        names[n++] = p;
    return onyx_session_options_set_providers(*out, names, n);
}

/* Loads the case's inputs and runs s once; outs[i] receives output i. */
int run_inputs(onyx_session *s, const test_case *c, onyx_tensor **outs, const char *what) {
    int rc = -1;
    const char **in_names = calloc(c->n_inputs + 1, sizeof *in_names);
    onyx_tensor **ins = calloc(c->n_inputs + 1, sizeof *ins);
    const char **out_names = calloc(c->n_outputs + 1, sizeof *out_names);
    onyx_status *st = NULL;
    if (!in_names || !ins || !out_names) {
        printf("  FAIL: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < c->n_inputs; i++) {
        in_names[i] = c->inputs[i].name;
        if ((st = onyx_tensor_load(c->inputs[i].file, &ins[i])) != NULL) {
            fail_status(c->inputs[i].file, st);
            goto out;
        }
    }
    for (size_t i = 0; i < c->n_outputs; i++) out_names[i] = c->outputs[i].name;
    st = onyx_session_run(s, in_names, (const onyx_tensor *const *)ins, c->n_inputs, out_names,
                          outs, c->n_outputs);
    rc = st ? fail_status(what, st) : 0;
out:
    for (size_t i = 0; ins && i < c->n_inputs; i++) onyx_tensor_free(ins[i]);
    free(in_names);
    free(ins);
    free(out_names);
    return rc;
}

static int run_case(onyx_env *env, const test_case *c, const char *providers, int opt_level,
                    int expect_split) {
    printf("== %s (%s)\n", c->name, c->model);
    int rc = -1;
    onyx_session *s = NULL;
    onyx_tensor **outs = calloc(c->n_outputs + 1, sizeof *outs);
    if (!outs) {
        printf("  FAIL: out of memory\n");
        goto out;
    }
    double t0 = now_s();
    onyx_session_options *o = NULL;
    onyx_status *st = case_options(providers, opt_level, &o);
    if (!st) st = onyx_session_create(env, c->model, o, &s);
    onyx_session_options_free(o);
    if (st) {
        fail_status("cannot create a session", st);
        goto out;
    }
    double t1 = now_s();
    if (run_inputs(s, c, outs, "run") != 0) goto out;
    double t2 = now_s();
    printf("  load %.2f s, run %.2f s\n", t1 - t0, t2 - t1);
    if (providers) report_providers(s, providers);
    rc = expect_split && providers ? check_split(s, providers) : 0;
    for (size_t i = 0; i < c->n_outputs; i++) {
        printf("  %s ", c->outputs[i].name);
        if (compare_output(&c->outputs[i], outs[i]) != 0) rc = -1;
    }
out:
    for (size_t i = 0; outs && i < c->n_outputs; i++) onyx_tensor_free(outs[i]);
    free(outs);
    if (providers && s && !keep_loaded)
        keep_loaded = s;
    else
        onyx_session_free(s);
    printf("%s %s\n", rc == 0 ? "PASS" : "FAIL", c->name);
    return rc;
}

/* ---- device faults (--fault KIND[,KIND...]) ----
 * The case on "vulkan,cpu" with injected device faults (the provider
 * option `inject`, ONYX_VK_INJECT's form), each KIND at another of the
 * dense nodes the device runs, in a fresh cache folder. Run k faults at
 * the k-th node (the earlier ones are on the CPU by then) and must match
 * through the CPU rerun; the run after the last fault must match on the
 * remade device with no new fault; a new session (a restart: its own
 * environment, reading the cache file) must place every faulted node on
 * the CPU, fault no more, and match. */

static int make_fault_session(onyx_env *env, const test_case *c, const char *inject,
                              const char *cache, onyx_session **out) {
    onyx_session_options *o = NULL;
    const char *names[2] = {"vulkan", "cpu"};
    onyx_status *st = onyx_session_options_create(&o);
    if (!st) st = onyx_session_options_set_providers(o, names, 2);
    if (!st && inject) st = onyx_session_options_set_provider_option(o, "vulkan", "inject", inject);
    if (!st && cache) st = onyx_session_options_set_cache_dir(o, cache);
    if (!st) st = onyx_session_create(env, c->model, o, out);
    onyx_session_options_free(o);
    return st ? fail_status("cannot create a session", st) : 0;
}

/* The k-th Conv, MatMul or Gemm the device runs, or -1. */
static long dense_vulkan_node(const onyx_session *s, int k) {
    for (size_t i = 0; i < onyx_session_node_count(s); i++) {
        const char *op = onyx_session_node_op_type(s, i);
        if (strcmp(onyx_session_node_provider(s, i), "vulkan") == 0 &&
            (strcmp(op, "Conv") == 0 || strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0 ||
             strcmp(op, "FusedConv") == 0) &&
            k-- == 0)
            return (long)i;
    }
    return -1;
}

/* One run of the case on s, compared with the references. */
static int run_and_compare(onyx_session *s, const test_case *c, const char *what) {
    onyx_tensor **outs = calloc(c->n_outputs + 1, sizeof *outs);
    if (!outs) {
        printf("  FAIL: out of memory\n");
        return -1;
    }
    double t0 = now_s();
    int rc = run_inputs(s, c, outs, what);
    if (rc == 0) printf("  %s: %.2f s\n", what, now_s() - t0);
    for (size_t i = 0; rc == 0 && i < c->n_outputs; i++) {
        printf("  %s ", c->outputs[i].name);
        if (compare_output(&c->outputs[i], outs[i]) != 0) rc = -1;
    }
    for (size_t i = 0; i < c->n_outputs; i++) onyx_tensor_free(outs[i]);
    free(outs);
    return rc;
}

static int expect_stats(const onyx_session *s, const char *when, uint64_t faults, uint64_t rescued,
                        uint64_t denied, uint64_t recoveries, onyx_provider_stats *out) {
    onyx_status *st = onyx_session_provider_stats(s, "vulkan", out);
    if (st) return fail_status("provider stats", st);
    printf("  %s: %llu faults, %llu runs rescued, %llu nodes denied, %llu recoveries, %llu kernels\n",
           when, (unsigned long long)out->device_faults, (unsigned long long)out->runs_rescued,
           (unsigned long long)out->nodes_denied, (unsigned long long)out->device_recoveries,
           (unsigned long long)out->kernel_launches);
    if (out->device_faults == faults && out->runs_rescued == rescued && out->nodes_denied == denied &&
        out->device_recoveries == recoveries)
        return 0;
    printf("  FAIL: %s: expected %llu faults, %llu rescued, %llu denied, %llu recoveries\n", when,
           (unsigned long long)faults, (unsigned long long)rescued, (unsigned long long)denied,
           (unsigned long long)recoveries);
    return -1;
}

#define MAX_FAULTS 4

static int fault_case(const test_case *c, const char *kinds, const char *cache_root) {
    printf("== %s (%s), injected %s\n", c->name, c->model, kinds);
    int rc = -1, n = 0;
    char cache[4096], inject[2048] = "", nodes[MAX_FAULTS][512], list[256];
    snprintf(cache, sizeof cache, "%s/%s.XXXXXX", cache_root, c->name);
    if (!mkdtemp(cache)) {
        printf("  FAIL: cannot make a cache folder under %s\n", cache_root);
        return -1;
    }
    onyx_env *env = NULL, *env2 = NULL;
    onyx_session *probe = NULL, *s = NULL, *again = NULL;
    onyx_provider_stats a, b, r;
    onyx_status *st = onyx_env_create(&env);
    if (st) {
        fail_status("env", st);
        goto out;
    }
    if (make_fault_session(env, c, NULL, cache, &probe) != 0) goto out;
    snprintf(list, sizeof list, "%s", kinds);
    for (char *save = NULL, *k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        long at = n < MAX_FAULTS ? dense_vulkan_node(probe, n) : -1;
        if (at < 0) {
            printf("  FAIL: fewer than %d Conv, MatMul or Gemm nodes on vulkan\n", n + 1);
            goto out;
        }
        snprintf(nodes[n], sizeof nodes[n], "%s", onyx_session_node_name(probe, (size_t)at));
        size_t used = strlen(inject);
        int w = snprintf(inject + used, sizeof inject - used, "%s%s@%s", n ? "," : "", k, nodes[n]);
        if (w < 0 || (size_t)w >= sizeof inject - used) {
            printf("  FAIL: node names too long for the inject option\n");
            goto out;
        }
        printf("  %s at node '%s' (%s)\n", k, nodes[n], onyx_session_node_op_type(probe, (size_t)at));
        n++;
    }
    if (make_fault_session(env, c, inject, cache, &s) != 0) goto out;
    for (int f = 1; f <= n; f++) {
        char what[64];
        snprintf(what, sizeof what, "run %d (faults, completes on the CPU)", f);
        if (run_and_compare(s, c, what) != 0 ||
            expect_stats(s, what, (uint64_t)f, (uint64_t)f, (uint64_t)f, (uint64_t)f, &a) != 0)
            goto out;
    }
    if (run_and_compare(s, c, "the next run (the remade device)") != 0 ||
        expect_stats(s, "the next run", (uint64_t)n, (uint64_t)n, (uint64_t)n, (uint64_t)n, &b) != 0)
        goto out;
    if (b.kernel_launches <= a.kernel_launches) {
        printf("  FAIL: the next run dispatched nothing on the remade device\n");
        goto out;
    }
    /* a restart: nothing shared with the sessions above but the file */
    if ((st = onyx_env_create(&env2)) != NULL) {
        fail_status("env", st);
        goto out;
    }
    if (make_fault_session(env2, c, inject, cache, &again) != 0) goto out;
    for (int f = 0; f < n; f++) {
        const char *where = NULL;
        for (size_t i = 0; i < onyx_session_node_count(again); i++)
            if (strcmp(onyx_session_node_name(again, i), nodes[f]) == 0)
                where = onyx_session_node_provider(again, i);
        printf("  after a restart node '%s' is on %s\n", nodes[f], where ? where : "(missing)");
        if (!where || strcmp(where, "cpu") != 0) {
            printf("  FAIL: the cache did not move the node to the CPU\n");
            goto out;
        }
    }
    if (run_and_compare(again, c, "run after the restart") != 0 ||
        expect_stats(again, "after the restart", 0, 0, (uint64_t)n, 0, &r) != 0)
        goto out;
    if (r.kernel_launches == 0) {
        printf("  FAIL: after the restart nothing ran on the device\n");
        goto out;
    }
    rc = 0;
out:
    onyx_session_free(probe);
    onyx_session_free(s);
    if (again && !keep_loaded) keep_loaded = again;
    else onyx_session_free(again);
    /* the kept session's environment must outlive it */
    if (!(again && keep_loaded == again)) onyx_env_free(env2);
    onyx_env_free(env);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0) printf("  note: could not remove %s\n", cache);
    printf("%s %s (%s)\n", rc == 0 ? "PASS" : "FAIL", c->name, kinds);
    return rc;
}

/* X.onnx -> X.variant.onnx, in place of the case's model path. */
static int use_variant(test_case *c, const char *variant) {
    size_t n = strlen(c->model), v = strlen(variant);
    size_t stem = n > 5 && strcmp(c->model + n - 5, ".onnx") == 0 ? n - 5 : n;
    char *p = malloc(stem + v + 7);
    if (!p) return -1;
    memcpy(p, c->model, stem);
    snprintf(p + stem, v + 7, ".%s.onnx", variant);
    free(c->model);
    c->model = p;
    return 0;
}

int main(int argc, char **argv) {
    const char *variant = NULL, *providers = NULL, *level = NULL, *fault = NULL, *cache_root = NULL,
               *compiled = NULL;
    int expect_split = 0;
    for (int a = 2; a < argc; a++)
        if (strcmp(argv[a], "--expect-split") == 0) {
            expect_split = 1;
            for (int k = a; k + 1 < argc; k++) argv[k] = argv[k + 1];
            argc--;
            break;
        }
    /* --model-variant NAME, --providers LIST, --opt-level LEVEL and
     * --fault KIND --cache-root DIR may stand anywhere after the manifest */
    for (int a = 2; a < argc;)
        if ((strcmp(argv[a], "--model-variant") == 0 || strcmp(argv[a], "--providers") == 0 ||
             strcmp(argv[a], "--opt-level") == 0 || strcmp(argv[a], "--fault") == 0 ||
             strcmp(argv[a], "--cache-root") == 0 || strcmp(argv[a], "--compiled") == 0) &&
            a + 1 < argc) {
            if (argv[a][2] == 'm') variant = argv[a + 1];
            else if (strcmp(argv[a], "--compiled") == 0) compiled = argv[a + 1];
            else if (argv[a][2] == 'o') level = argv[a + 1];
            else if (argv[a][2] == 'f') fault = argv[a + 1];
            else if (argv[a][2] == 'c') cache_root = argv[a + 1];
            else providers = argv[a + 1];
            for (int k = a; k + 2 < argc; k++) argv[k] = argv[k + 2];
            argc -= 2;
        } else {
            a++;
        }
    if (argc < 2) {
        fprintf(stderr,
                "usage: test_models MANIFEST [--model-variant NAME] [--providers A,B]\n"
                "                   [--opt-level none|basic|all] [--expect-split]\n"
                "                   [--fault KIND[,KIND...] --cache-root DIR] [--compiled DIR]\n"
                "                   [CASE...]\n"
                "KIND: device_lost, oom, timeout\n");
        return 2;
    }
    int opt_level = -1;
    if (level) {
        static const char *const LEVELS[] = {"none", "basic", "all"};
        for (int l = 0; l < 3; l++)
            if (strcmp(level, LEVELS[l]) == 0) opt_level = l;
        if (opt_level < 0) {
            fprintf(stderr, "test_models: --opt-level must be none, basic or all, got '%s'\n", level);
            return 2;
        }
    }
    manifest m;
    if (load_manifest(argv[1], &m) != 0) return 2;
    for (size_t i = 0; variant && i < m.n; i++)
        if (use_variant(&m.cases[i], variant) != 0) {
            fprintf(stderr, "test_models: out of memory\n");
            free_manifest(&m);
            return 2;
        }
    for (int a = 2; a < argc; a++) {
        size_t i = 0;
        while (i < m.n && strcmp(m.cases[i].name, argv[a]) != 0) i++;
        if (i == m.n) {
            fprintf(stderr, "test_models: no case '%s' in %s\n", argv[a], argv[1]);
            free_manifest(&m);
            return 2;
        }
    }
    onyx_env *env = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (st) {
        fprintf(stderr, "test_models: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        free_manifest(&m);
        return 2;
    }
    int passed = 0, failed = 0;
    for (size_t i = 0; i < m.n; i++) {
        int selected = argc == 2;
        for (int a = 2; a < argc && !selected; a++) selected = strcmp(m.cases[i].name, argv[a]) == 0;
        if (!selected) continue;
        int r = fault      ? fault_case(&m.cases[i], fault, cache_root ? cache_root : ".")
                : compiled ? compiled_case(env, &m.cases[i], providers, compiled)
                           : run_case(env, &m.cases[i], providers, opt_level, expect_split);
        if (r == 0) passed++;
        else failed++;
    }
    onyx_env_free(env);
    free_manifest(&m);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
