/* Vulkan-versus-CPU cases for the kernels of src/ep/vulkan/vk_kernels_index.c
 * (and vk_index_scatter.c), and Softmax/LogSoftmax over any axis: int32
 * and int64 indices, negative ones, int64 indices beyond 2^31 and 2^32
 * that must be reported out of range rather than truncated into it,
 * ties broken as on the CPU, empty tensors, and nodes left to the CPU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "vulkan_case.h"

#define BIG31 ((int64_t)1 << 31)
#define BIG32 ((int64_t)1 << 32)

/* A float32 graph input with exactly these values (ties, NaN, zeros). */
static void input_vals(vcase *c, const char *name, const int64_t *dims, int rank, const float *v) {
    CHECK(c->n_in < VC_MAX_IN);
    mb_input(c->m, name, ONYX_FLOAT32, dims, rank);
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dims, rank, &t));
    memcpy(onyx_tensor_data(t), v, (size_t)count(dims, rank) * sizeof(float));
    c->names[c->n_in] = name;
    c->ins[c->n_in++] = t;
}

/* Values in [lo, hi) for n indices, cycling through a fixed pattern that
 * includes negative ones when lo < 0. */
static void index_pattern(int64_t *v, int64_t n, int64_t lo, int64_t hi) {
    for (int64_t i = 0; i < n; i++) v[i] = lo + (i * 7 + 3) % (hi - lo);
}

/* ---- GatherElements ---- */

static void gather_elements_cases(void) {
    static const struct {
        int r;
        int64_t d[3], i[3];
        int axis, idt, ddt;
    } SH[] = {
        {2, {3, 4}, {3, 4}, 0, ONYX_INT64, ONYX_FLOAT32},
        {2, {3, 4}, {2, 3}, 1, ONYX_INT32, ONYX_FLOAT32},
        {3, {2, 5, 7}, {2, 9, 3}, 1, ONYX_INT64, ONYX_FLOAT32},
        {3, {2, 5, 7}, {1, 4, 11}, -1, ONYX_INT64, ONYX_INT64},
        {3, {2, 5, 7}, {2, 5, 7}, -3, ONYX_INT32, ONYX_INT32},
        {1, {300}, {1000}, 0, ONYX_INT64, ONYX_FLOAT32},
        {2, {3, 4}, {0, 4}, 0, ONYX_INT64, ONYX_FLOAT32}, /* empty */
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
        int r = SH[s].r, a = SH[s].axis < 0 ? SH[s].axis + r : SH[s].axis;
        int64_t n = count(SH[s].i, r), idx[2000];
        index_pattern(idx, n, -SH[s].d[a], SH[s].d[a]);
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "GatherElements case %zu", s);
        vc_begin(&c, label, 13, TOL_EW);
        if (SH[s].ddt == ONYX_FLOAT32) {
            vc_input(&c, "x", SH[s].d, r, -5, 5);
        } else {
            int64_t dv[100];
            for (int k = 0; k < count(SH[s].d, r); k++) dv[k] = ((int64_t)k * 7919) % 1000 - 500 + (SH[s].ddt == ONYX_INT64 ? (int64_t)k << 33 : 0);
            vc_input_int(&c, "x", SH[s].ddt, SH[s].d, r, dv);
            vc_output(&c, "y", SH[s].ddt);
        }
        vc_input_int(&c, "i", SH[s].idt, SH[s].i, r, idx);
        mb_node(c.m, "GatherElements", "x,i", "y");
        mb_attr_int(c.m, "axis", SH[s].axis);
        vc_run(&c, 1);
    }
    /* opset 11 */
    vcase c;
    int64_t d[] = {4, 3}, iv[] = {3, -4, 0, 1, 2, -1};
    int64_t di[] = {2, 3};
    vc_begin(&c, "GatherElements-11", 11, TOL_EW);
    vc_input(&c, "x", d, 2, -1, 1);
    vc_input_int(&c, "i", ONYX_INT64, di, 2, iv);
    mb_node(c.m, "GatherElements", "x,i", "y");
    vc_run(&c, 1);
    /* out of range: past the end, before the start, and int64 values that
     * a 32-bit truncation would bring into range (2^32 + 1 -> 1, 2^31 + 1
     * -> negative, -2^32 + 2 -> 2) */
    static const int64_t BAD[] = {4, -5, BIG32 + 1, BIG31 + 1, -BIG32 + 2, BIG31 - 1};
    for (int b = 0; b < 6; b++) {
        for (int t = 0; t < 2; t++) {
            int dt = t ? ONYX_INT32 : ONYX_INT64;
            if (dt == ONYX_INT32 && (BAD[b] > INT32_MAX || BAD[b] < INT32_MIN)) continue;
            char label[64];
            snprintf(label, sizeof label, "GatherElements out of range %d %s", b, t ? "int32" : "int64");
            int64_t vals[6] = {0, 1, 2, 3, BAD[b], 0};
            vc_begin(&c, label, 13, TOL_EW);
            vc_input(&c, "x", d, 2, -1, 1);
            vc_input_int(&c, "i", dt, di, 2, vals);
            mb_node(c.m, "GatherElements", "x,i", "y");
            vc_run_expect(&c, 1, "out of range");
        }
    }
    /* bool data: the CPU's */
    int64_t bv[12] = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0}, zi[6] = {0};
    vc_begin(&c, "GatherElements bool falls back", 13, TOL_EW);
    vc_input_int(&c, "x", ONYX_BOOL, d, 2, bv);
    vc_input_int(&c, "i", ONYX_INT64, di, 2, zi);
    mb_node(c.m, "GatherElements", "x,i", "y");
    vc_output(&c, "y", ONYX_BOOL);
    vc_run(&c, 0);
}

/* ---- TopK ---- */

static void topk_case(const char *label, int opset, const int64_t *d, int r, const float *vals,
                      int64_t k, int axis, int largest, int sorted) {
    vcase c;
    vc_begin(&c, label, opset, TOL_EW);
    if (vals) input_vals(&c, "x", d, r, vals);
    else vc_input(&c, "x", d, r, -10, 10);
    int64_t kd[] = {1};
    vc_input_int(&c, "k", ONYX_INT64, kd, 1, &k);
    mb_node(c.m, "TopK", "x,k", "v,i");
    if (axis != 99) mb_attr_int(c.m, "axis", axis);
    if (largest >= 0) mb_attr_int(c.m, "largest", largest);
    if (sorted >= 0) mb_attr_int(c.m, "sorted", sorted);
    vc_output(&c, "v", ONYX_FLOAT32);
    vc_output(&c, "i", ONYX_INT64);
    vc_run(&c, 1);
}

static void topk_cases(void) {
    static const struct {
        int r;
        int64_t d[3];
        int64_t k;
        int axis, largest;
    } SH[] = {
        {1, {17}, 5, 99, -1},     {2, {3, 17}, 17, -1, 0},   {2, {3, 17}, 1, 1, 1},
        {3, {2, 9, 5}, 4, 1, 1},  {3, {2, 9, 5}, 2, 0, 0},   {2, {4, 1000}, 300, -1, 1},
        {2, {2, 3000}, 100, 1, 0}, {2, {3, 17}, 0, -1, 1},   {2, {0, 17}, 3, -1, 1},
        {1, {1}, 1, 0, 1},
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
        char label[64];
        snprintf(label, sizeof label, "TopK case %zu", s);
        topk_case(label, 11, SH[s].d, SH[s].r, NULL, SH[s].k, SH[s].axis, SH[s].largest, -1);
    }
    /* ties (lower index first), NaN (above every number), -0 == 0 */
    float nanv = NAN;
    const float TIES[] = {1, 3, 3, -0.0f, 0, 1, nanv, 3, -2, nanv, 1, 0};
    int64_t dt[] = {2, 6}, d1[] = {12};
    for (int largest = 0; largest < 2; largest++) {
        topk_case(largest ? "TopK ties largest" : "TopK ties smallest", 11, dt, 2, TIES, 6, -1,
                  largest, -1);
        topk_case(largest ? "TopK ties flat largest" : "TopK ties flat smallest", 11, d1, 1, TIES,
                  7, 0, largest, 0);
    }
    float many[2 * 500];
    for (int i = 0; i < 1000; i++) many[i] = (float)((i * 37) % 11);
    int64_t dm[] = {2, 500};
    topk_case("TopK many ties", 11, dm, 2, many, 123, 1, 1, 1);
    topk_case("TopK many ties smallest", 11, dm, 2, many, 500, 1, 0, 1);
    topk_case("TopK-10", 10, dm, 2, many, 7, -1, -1, -1);
    /* K out of range */
    vcase c;
    int64_t k = 18, kd[] = {1}, dx[] = {3, 17};
    vc_begin(&c, "TopK K too large", 11, TOL_EW);
    vc_input(&c, "x", dx, 2, -1, 1);
    vc_input_int(&c, "k", ONYX_INT64, kd, 1, &k);
    mb_node(c.m, "TopK", "x,k", "v,i");
    vc_output(&c, "v", ONYX_FLOAT32);
    vc_output(&c, "i", ONYX_INT64);
    vc_run_expect(&c, 1, "K = 18");
    /* int32 values and TopK-1 (K as an attribute): the CPU's */
    int64_t iv[17] = {5, 3, 1, 7, 7, 2, 0, 9, 4, 4, 8, 6, 2, 1, 3, 5, 9}, d17[] = {17};
    k = 3;
    vc_begin(&c, "TopK int32 falls back", 11, TOL_EW);
    vc_input_int(&c, "x", ONYX_INT32, d17, 1, iv);
    vc_input_int(&c, "k", ONYX_INT64, kd, 1, &k);
    mb_node(c.m, "TopK", "x,k", "v,i");
    vc_output(&c, "v", ONYX_INT32);
    vc_output(&c, "i", ONYX_INT64);
    vc_run(&c, 0);
    vc_begin(&c, "TopK-1 falls back", 1, TOL_EW);
    vc_input(&c, "x", dx, 2, -1, 1);
    mb_node(c.m, "TopK", "x", "v,i");
    mb_attr_int(c.m, "k", 3);
    vc_output(&c, "v", ONYX_FLOAT32);
    vc_output(&c, "i", ONYX_INT64);
    vc_run(&c, 0);
}

/* ---- ArgMax / ArgMin ---- */

static void arg_cases(void) {
    static const struct {
        int r;
        int64_t d[3];
        int axis, keep, last, opset;
    } SH[] = {
        {1, {17}, 0, 1, 0, 13},     {2, {3, 17}, 1, 0, 0, 13}, {2, {3, 17}, -2, 1, 1, 13},
        {3, {2, 9, 5}, 1, 1, 1, 12}, {3, {2, 9, 5}, 2, 0, -1, 11}, {2, {2, 3000}, 1, 1, 0, 13},
        {3, {2, 3, 4}, 0, 1, -1, 1}, {2, {0, 5}, 1, 1, 0, 13},
    };
    static const char *OPS[] = {"ArgMax", "ArgMin"};
    for (int o = 0; o < 2; o++)
        for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "%s case %zu", OPS[o], s);
            vc_begin(&c, label, SH[s].opset, TOL_EW);
            vc_input(&c, "x", SH[s].d, SH[s].r, -3, 3);
            mb_node(c.m, OPS[o], "x", "y");
            mb_attr_int(c.m, "axis", SH[s].axis);
            mb_attr_int(c.m, "keepdims", SH[s].keep);
            if (SH[s].last >= 0) mb_attr_int(c.m, "select_last_index", SH[s].last);
            vc_output(&c, "y", ONYX_INT64);
            vc_run(&c, 1);
        }
    /* ties both ways and NaN */
    float nanv = NAN;
    const float V[] = {2, 5, 5, 1, 1, 5, 0, nanv, 3, nanv, 0, 0};
    int64_t d[] = {2, 6};
    for (int o = 0; o < 2; o++)
        for (int last = 0; last < 2; last++) {
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "%s ties last %d", OPS[o], last);
            vc_begin(&c, label, 13, TOL_EW);
            input_vals(&c, "x", d, 2, V);
            mb_node(c.m, OPS[o], "x", "y");
            mb_attr_int(c.m, "axis", 1);
            mb_attr_int(c.m, "select_last_index", last);
            vc_output(&c, "y", ONYX_INT64);
            vc_run(&c, 1);
        }
}

/* ---- reductions ---- */

static const char *const REDUCE_OPS[] = {"ReduceSum",  "ReduceMean", "ReduceMax",
                                         "ReduceMin",  "ReduceProd", "ReduceL1",
                                         "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp",
                                         "ReduceSumSquare"};
#define N_REDUCE 10

/* The version whose axes come from an input. */
static int axes_input_opset(const char *op) { return strcmp(op, "ReduceSum") == 0 ? 13 : 18; }

/* One reduction; axes NULL with n_axes -1: none given. as_input: axes
 * as an input (at the op's input version) rather than the attribute
 * (opset 13, or 11 for ReduceSum). */
static void reduce_case(const char *op, const int64_t *d, int r, const int64_t *axes, int n_axes,
                        int keep, int noop, int as_input, int expect_vk) {
    vcase c;
    char label[128];
    snprintf(label, sizeof label, "%s rank %d axes %d keep %d noop %d input %d", op, r, n_axes,
             keep, noop, as_input);
    int opset = as_input ? axes_input_opset(op) : strcmp(op, "ReduceSum") == 0 ? 11 : 13;
    vc_begin(&c, label, opset, TOL_MM);
    int pos = !strcmp(op, "ReduceLogSum") || !strcmp(op, "ReduceProd");
    vc_input(&c, "x", d, r, pos ? 0.5f : -2, pos ? 1.5f : 2);
    if (as_input && n_axes >= 0) {
        int64_t ad[] = {n_axes};
        vc_input_int(&c, "axes", ONYX_INT64, ad, 1, axes);
        mb_node(c.m, op, "x,axes", "y");
    } else {
        mb_node(c.m, op, "x", "y");
        if (n_axes > 0) mb_attr_ints(c.m, "axes", axes, (size_t)n_axes);
    }
    if (keep >= 0) mb_attr_int(c.m, "keepdims", keep);
    if (noop >= 0 && as_input) mb_attr_int(c.m, "noop_with_empty_axes", noop);
    vc_run(&c, expect_vk);
}

static void reduce_cases(void) {
    static const struct {
        int r;
        int64_t d[4];
        int n_axes;
        int64_t axes[4];
        int keep;
    } SH[] = {
        {2, {3, 17}, 1, {1}, 1},           {2, {3, 17}, 1, {0}, 0},
        {2, {3, 300}, 1, {-1}, 1},         /* long rows: one workgroup each */
        {2, {300, 3}, 1, {0}, 0},          /* long strided columns */
        {3, {4, 5, 6}, 2, {0, 2}, 1},      /* a permuted view */
        {3, {4, 5, 6}, 2, {-1, 0}, 0},
        {4, {2, 3, 4, 5}, 2, {1, 3}, 1},
        {4, {2, 3, 4, 5}, 3, {0, 1, 2}, 0},
        {3, {4, 1, 6}, 1, {1}, 0},
        {3, {2, 70, 30}, 2, {1, 2}, 1},    /* 2100 elements per output */
        {2, {3, 17}, -1, {0}, 1},          /* no axes: everything */
        {2, {0, 5}, 1, {0}, 1},            /* reducing an empty axis: identities */
        {2, {0, 5}, 1, {1}, 0},            /* empty output */
        {0, {0}, -1, {0}, 1},              /* a scalar */
    };
    for (int o = 0; o < N_REDUCE; o++)
        for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++)
            for (int as_input = 0; as_input < 2; as_input++)
                reduce_case(REDUCE_OPS[o], SH[s].d, SH[s].r, SH[s].axes, SH[s].n_axes,
                            SH[s].keep, -1, as_input, 1);
    int64_t d[] = {3, 17}, e = 0;
    for (int o = 0; o < N_REDUCE; o++) {
        /* noop_with_empty_axes: no axes input, and an empty one */
        reduce_case(REDUCE_OPS[o], d, 2, NULL, -1, 1, 1, 1, 1);
        reduce_case(REDUCE_OPS[o], d, 2, &e, 0, 0, 1, 1, 1);
        reduce_case(REDUCE_OPS[o], d, 2, &e, 0, 1, 0, 1, 1);
    }
    /* opset 1 (axes attribute, no negative axes) and ReduceMax-20 */
    vcase c;
    int64_t ax[] = {0, 2}, d3[] = {3, 4, 5};
    vc_begin(&c, "ReduceMean-1", 1, TOL_MM);
    vc_input(&c, "x", d3, 3, -1, 1);
    mb_node(c.m, "ReduceMean", "x", "y");
    mb_attr_ints(c.m, "axes", ax, 2);
    vc_run(&c, 1);
    vc_begin(&c, "ReduceMax-20", 20, TOL_MM);
    vc_input(&c, "x", d3, 3, -1, 1);
    vc_input_int(&c, "axes", ONYX_INT64, (int64_t[]){2}, 1, ax);
    mb_node(c.m, "ReduceMax", "x,axes", "y");
    vc_run(&c, 1);
    /* NaN propagates through max and min, and infinities through LogSumExp */
    float nanv = NAN, inf = INFINITY;
    const float V[] = {1, nanv, 3, 2, -inf, -inf, -inf, -inf, 1, inf, 2, 3};
    int64_t dv[] = {3, 4};
    static const char *SPECIAL[] = {"ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceSum"};
    for (int o = 0; o < 4; o++) {
        char label[64];
        snprintf(label, sizeof label, "%s NaN and inf", SPECIAL[o]);
        vc_begin(&c, label, 11, TOL_MM);
        input_vals(&c, "x", dv, 2, V);
        mb_node(c.m, SPECIAL[o], "x", "y");
        mb_attr_ints(c.m, "axes", (int64_t[]){1}, 1);
        vc_run(&c, 1);
    }
    /* an axis out of range fails both ways; int32 data stays on the CPU */
    vc_begin(&c, "ReduceMean axis out of range", 18, TOL_MM);
    vc_input(&c, "x", d, 2, -1, 1);
    vc_input_int(&c, "axes", ONYX_INT64, (int64_t[]){1}, 1, (int64_t[]){2});
    mb_node(c.m, "ReduceMean", "x,axes", "y");
    vc_run_expect(&c, 1, "out of range");
    int64_t iv[6] = {1, 2, 3, 4, 5, 6}, d23[] = {2, 3};
    vc_begin(&c, "ReduceSum int32 falls back", 13, TOL_MM);
    vc_input_int(&c, "x", ONYX_INT32, d23, 2, iv);
    mb_node(c.m, "ReduceSum", "x", "y");
    vc_output(&c, "y", ONYX_INT32);
    vc_run(&c, 0);
}

/* ---- Softmax and LogSoftmax over any axis ---- */

static void softmax_any_axis_cases(void) {
    static const struct {
        int rank, opset, axis;
        int64_t d[4];
    } SH[] = {
        {3, 13, 0, {5, 3, 4}},   {3, 13, 1, {2, 300, 3}}, {4, 13, -3, {2, 3, 4, 5}},
        {3, 11, 1, {2, 3, 4}},   {3, 11, 0, {2, 3, 4}},   {4, 1, 2, {2, 3, 4, 5}},
        {3, 13, -1, {2, 5, 17}}, {3, 13, 1, {2, 0, 3}},
    };
    static const char *OPS[] = {"Softmax", "LogSoftmax"};
    for (int o = 0; o < 2; o++)
        for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "%s any axis %zu", OPS[o], s);
            vc_begin(&c, label, SH[s].opset, TOL_MM);
            vc_input(&c, "x", SH[s].d, SH[s].rank, -30, 30);
            mb_node(c.m, OPS[o], "x", "y");
            mb_attr_int(c.m, "axis", SH[s].axis);
            vc_run(&c, 1);
        }
    int64_t d[] = {4, 33};
    vcase c;
    vc_begin(&c, "LogSoftmax default axis", 13, TOL_MM);
    vc_input(&c, "x", d, 2, -80, 80);
    mb_node(c.m, "LogSoftmax", "x", "y");
    vc_run(&c, 1);
}

/* ---- GatherND ---- */

static void gather_nd_cases(void) {
    static const struct {
        int rd, ri;
        int64_t d[4], i[4];
        int batch, opset, idt, ddt;
    } SH[] = {
        {2, 2, {4, 5}, {3, 2}, 0, 11, ONYX_INT64, ONYX_FLOAT32},    /* elements */
        {3, 2, {4, 5, 6}, {3, 1}, 0, 12, ONYX_INT64, ONYX_FLOAT32}, /* slices */
        {3, 3, {4, 5, 6}, {2, 3, 2}, 0, 13, ONYX_INT64, ONYX_FLOAT32},
        {3, 2, {3, 5, 6}, {3, 1}, 1, 13, ONYX_INT64, ONYX_FLOAT32}, /* batch_dims 1 */
        {3, 3, {3, 5, 6}, {3, 4, 2}, 1, 12, ONYX_INT64, ONYX_INT64},
        {3, 3, {2, 3, 4}, {2, 3, 1}, 2, 13, ONYX_INT64, ONYX_INT32},
        {2, 2, {4, 5}, {0, 2}, 0, 13, ONYX_INT64, ONYX_FLOAT32},    /* no tuples */
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
        int b = SH[s].batch, m = (int)SH[s].i[SH[s].ri - 1];
        int64_t n = count(SH[s].i, SH[s].ri), idx[64];
        for (int64_t t = 0; t < n; t++) {
            int64_t len = SH[s].d[b + t % m];
            idx[t] = (t * 5 + 1) % (2 * len) - len; /* [-len, len) */
        }
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "GatherND case %zu", s);
        vc_begin(&c, label, SH[s].opset, TOL_EW);
        if (SH[s].ddt == ONYX_FLOAT32) {
            vc_input(&c, "x", SH[s].d, SH[s].rd, -5, 5);
        } else {
            int64_t dv[200];
            for (int k = 0; k < count(SH[s].d, SH[s].rd); k++) dv[k] = k * 3 - 100 - (SH[s].ddt == ONYX_INT64 ? BIG32 * k : 0);
            vc_input_int(&c, "x", SH[s].ddt, SH[s].d, SH[s].rd, dv);
            vc_output(&c, "y", SH[s].ddt);
        }
        vc_input_int(&c, "i", SH[s].idt, SH[s].i, SH[s].ri, idx);
        mb_node(c.m, "GatherND", "x,i", "y");
        if (b) mb_attr_int(c.m, "batch_dims", b);
        vc_run(&c, 1);
    }
    static const int64_t BAD[] = {5, -6, BIG32 + 2, -BIG32 + 1};
    for (int k = 0; k < 4; k++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "GatherND out of range %d", k);
        int64_t d[] = {4, 5}, di[] = {2, 2}, iv[] = {1, 2, 3, BAD[k]};
        vc_begin(&c, label, 13, TOL_EW);
        vc_input(&c, "x", d, 2, -1, 1);
        vc_input_int(&c, "i", ONYX_INT64, di, 2, iv);
        mb_node(c.m, "GatherND", "x,i", "y");
        vc_run_expect(&c, 1, "out of range");
    }
}

/* ---- ScatterND and ScatterElements ---- */

static void scatter_nd_cases(void) {
    static const char *RED[] = {NULL, "add", "mul", "max", "min"};
    static const struct {
        int rd, ri;
        int64_t d[3], i[3];
        int opset, dt, idt;
    } SH[] = {
        {2, 2, {4, 5}, {3, 2}, 11, ONYX_FLOAT32, ONYX_INT64},
        {3, 2, {4, 5, 6}, {2, 1}, 13, ONYX_FLOAT32, ONYX_INT64},
        {3, 3, {4, 5, 6}, {2, 2, 2}, 16, ONYX_INT32, ONYX_INT64},
        {2, 2, {4, 5}, {2, 1}, 18, ONYX_INT64, ONYX_INT64},
        {2, 2, {4, 5}, {0, 2}, 18, ONYX_FLOAT32, ONYX_INT64}, /* no updates */
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++)
        for (int red = 0; red < 5; red++) {
            if (red && SH[s].opset < 16) continue;
            if (red >= 3 && SH[s].opset < 18) continue;
            int m = (int)SH[s].i[SH[s].ri - 1];
            int64_t tuples = count(SH[s].i, SH[s].ri - 1), idx[32], ud[4];
            /* distinct tuples without a reduction (duplicates are
             * undefined there), repeated ones with it */
            for (int64_t t = 0; t < tuples; t++)
                for (int k = 0; k < m; k++) {
                    int64_t len = SH[s].d[k];
                    int64_t v = red ? (t % 2) : t % len;
                    idx[t * m + k] = (t + k) % 2 ? v - len : v;
                }
            int ur = SH[s].ri - 1 + SH[s].rd - m;
            for (int a = 0; a < SH[s].ri - 1; a++) ud[a] = SH[s].i[a];
            for (int a = m; a < SH[s].rd; a++) ud[SH[s].ri - 1 + a - m] = SH[s].d[a];
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "ScatterND case %zu %s", s, red ? RED[red] : "none");
            int expect = !(red && SH[s].dt == ONYX_INT64);
            vc_begin(&c, label, SH[s].opset, TOL_MM);
            if (SH[s].dt == ONYX_FLOAT32) {
                vc_input(&c, "x", SH[s].d, SH[s].rd, 0.5f, 2);
                vc_input(&c, "u", ud, ur, 0.5f, 2);
            } else {
                int64_t xv[200], uv[200];
                for (int k = 0; k < count(SH[s].d, SH[s].rd); k++) xv[k] = k % 13 - 6 + (SH[s].dt == ONYX_INT64 ? BIG32 : 0);
                for (int k = 0; k < count(ud, ur); k++) uv[k] = k % 7 - 3 - (SH[s].dt == ONYX_INT64 ? 3 * BIG32 : 0);
                vc_input_int(&c, "x", SH[s].dt, SH[s].d, SH[s].rd, xv);
                vc_input_int(&c, "u", SH[s].dt, ud, ur, uv);
                vc_output(&c, "y", SH[s].dt);
            }
            int64_t di[3];
            memcpy(di, SH[s].i, sizeof di);
            vc_input_int(&c, "i", SH[s].idt, di, SH[s].ri, idx);
            mb_node(c.m, "ScatterND", "x,i,u", "y");
            if (red) mb_attr_string(c.m, "reduction", RED[red]);
            vc_run(&c, expect);
        }
    static const int64_t BAD[] = {4, -5, BIG32 + 1, BIG31};
    for (int k = 0; k < 4; k++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "ScatterND out of range %d", k);
        int64_t d[] = {4, 5}, di[] = {2, 1}, iv[] = {1, BAD[k]}, ud[] = {2, 5};
        vc_begin(&c, label, 18, TOL_EW);
        vc_input(&c, "x", d, 2, -1, 1);
        vc_input_int(&c, "i", ONYX_INT64, di, 2, iv);
        vc_input(&c, "u", ud, 2, -1, 1);
        mb_node(c.m, "ScatterND", "x,i,u", "y");
        vc_run_expect(&c, 1, "out of range");
    }
}

static void scatter_elements_cases(void) {
    static const char *RED[] = {NULL, "add", "mul", "max", "min"};
    static const struct {
        int r;
        int64_t d[3], i[3];
        int axis, opset, dt, idt;
    } SH[] = {
        {2, {4, 5}, {2, 5}, 0, 11, ONYX_FLOAT32, ONYX_INT64},
        {2, {4, 5}, {4, 3}, -1, 13, ONYX_FLOAT32, ONYX_INT32},
        {3, {3, 4, 5}, {2, 4, 3}, 1, 16, ONYX_INT32, ONYX_INT64},
        {3, {3, 4, 5}, {3, 2, 5}, 2, 18, ONYX_FLOAT32, ONYX_INT64},
        {2, {4, 5}, {2, 5}, 0, 18, ONYX_INT64, ONYX_INT32},
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++)
        for (int red = 0; red < 5; red++) {
            if (red && SH[s].opset < 16) continue;
            if (red >= 3 && SH[s].opset < 18) continue;
            int r = SH[s].r, a = SH[s].axis < 0 ? SH[s].axis + r : SH[s].axis;
            int64_t n = count(SH[s].i, r), idx[128], len = SH[s].d[a];
            int64_t st = 1;
            for (int k = a + 1; k < r; k++) st *= SH[s].i[k];
            /* without a reduction each line gets distinct targets; with
             * one, targets repeat */
            for (int64_t i = 0; i < n; i++) {
                int64_t pos = (i / st) % SH[s].i[a];
                int64_t v = red ? pos % 2 : (pos * 3 + 1) % len;
                idx[i] = i % 3 == 0 ? v - len : v;
            }
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "ScatterElements case %zu %s", s, red ? RED[red] : "none");
            int expect = !(red && SH[s].dt == ONYX_INT64);
            vc_begin(&c, label, SH[s].opset, TOL_MM);
            if (SH[s].dt == ONYX_FLOAT32) {
                vc_input(&c, "x", SH[s].d, r, 0.5f, 2);
                vc_input(&c, "u", SH[s].i, r, 0.5f, 2);
            } else {
                int64_t xv[200], uv[200];
                for (int k = 0; k < count(SH[s].d, r); k++) xv[k] = k % 11 - 5 + (SH[s].dt == ONYX_INT64 ? -BIG32 : 0);
                for (int k = 0; k < n; k++) uv[k] = k % 5 - 2 + (SH[s].dt == ONYX_INT64 ? 7 * BIG32 : 0);
                vc_input_int(&c, "x", SH[s].dt, SH[s].d, r, xv);
                vc_input_int(&c, "u", SH[s].dt, SH[s].i, r, uv);
                vc_output(&c, "y", SH[s].dt);
            }
            vc_input_int(&c, "i", SH[s].idt, SH[s].i, r, idx);
            mb_node(c.m, "ScatterElements", "x,i,u", "y");
            mb_attr_int(c.m, "axis", SH[s].axis);
            if (red) mb_attr_string(c.m, "reduction", RED[red]);
            vc_run(&c, expect);
        }
    static const int64_t BAD[] = {4, -5, BIG32 + 3, -BIG32};
    for (int k = 0; k < 4; k++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "ScatterElements out of range %d", k);
        int64_t d[] = {4, 5}, di[] = {1, 3}, iv[] = {0, BAD[k], 1};
        vc_begin(&c, label, 18, TOL_EW);
        vc_input(&c, "x", d, 2, -1, 1);
        vc_input_int(&c, "i", ONYX_INT64, di, 2, iv);
        vc_input(&c, "u", di, 2, -1, 1);
        mb_node(c.m, "ScatterElements", "x,i,u", "y");
        vc_run_expect(&c, 1, "out of range");
    }
}

/* ---- NonZero ---- */

static void nonzero_cases(void) {
    static const struct {
        int r;
        int64_t d[3];
        int dt;
    } SH[] = {
        {2, {3, 17}, ONYX_FLOAT32}, {3, {2, 3, 5}, ONYX_INT32}, {1, {1001}, ONYX_BOOL},
        {2, {7, 3}, ONYX_INT64},    {1, {70000}, ONYX_FLOAT32}, {0, {0}, ONYX_FLOAT32},
        {2, {0, 4}, ONYX_INT32},    {2, {5, 5}, ONYX_BOOL},
    };
    static int64_t v[70000];
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++)
        for (int zeros = 0; zeros < 2; zeros++) {
            int64_t n = count(SH[s].d, SH[s].r);
            for (int64_t i = 0; i < n; i++) {
                int64_t x = (i * 7919) % 5 == 0 ? 0 : (i % 9) - 4;
                if (SH[s].dt == ONYX_INT64 && x) x = x * BIG32; /* nonzero only in the high word */
                v[i] = zeros ? 0 : x;
            }
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "NonZero case %zu%s", s, zeros ? " all zero" : "");
            vc_begin(&c, label, 13, TOL_EW);
            if (SH[s].dt == ONYX_FLOAT32) {
                static float f[70000];
                for (int64_t i = 0; i < n; i++) f[i] = v[i] == 0 ? (i % 2 ? -0.0f : 0.0f) : (float)v[i] * 0.25f;
                if (!zeros && n > 3) f[3] = NAN, f[1] = 1e-40f; /* NaN and a denormal are nonzero */
                input_vals(&c, "x", SH[s].d, SH[s].r, f);
            } else {
                vc_input_int(&c, "x", SH[s].dt, SH[s].d, SH[s].r, v);
            }
            mb_node(c.m, "NonZero", "x", "y");
            vc_output(&c, "y", ONYX_INT64);
            vc_run(&c, 1);
        }
    /* NonZero-9 and uint8 input: 9 is claimed, uint8 is not */
    vcase c;
    int64_t d[] = {4}, iv[] = {0, 3, 0, 1};
    vc_begin(&c, "NonZero-9", 9, TOL_EW);
    vc_input_int(&c, "x", ONYX_INT32, d, 1, iv);
    mb_node(c.m, "NonZero", "x", "y");
    vc_output(&c, "y", ONYX_INT64);
    vc_run(&c, 1);
}

/* A detector's post-processing shape: TopK over flattened scores, then
 * GatherElements and Gather with its int64 indices, all on the device. */
static void detector_chain_case(void) {
    vcase c;
    vc_begin(&c, "TopK + GatherElements + Gather chain", 13, TOL_EW);
    int64_t ds[] = {2, 600}, db[] = {2, 600, 4}, k = 50, kd[] = {1};
    vc_input(&c, "scores", ds, 2, 0, 1);
    vc_input(&c, "boxes", db, 3, 0, 640);
    vc_input_int(&c, "k", ONYX_INT64, kd, 1, &k);
    mb_node(c.m, "TopK", "scores,k", "v,i");
    mb_attr_int(c.m, "axis", 1);
    mb_node(c.m, "ArgMax", "scores", "am");
    mb_attr_int(c.m, "axis", 1);
    mb_node(c.m, "GatherElements", "scores,i", "g");
    mb_attr_int(c.m, "axis", 1);
    mb_node(c.m, "Gather", "boxes,i", "b");
    mb_attr_int(c.m, "axis", 1);
    vc_output(&c, "v", ONYX_FLOAT32);
    vc_output(&c, "g", ONYX_FLOAT32);
    vc_output(&c, "am", ONYX_INT64);
    vc_output(&c, "b", ONYX_FLOAT32);
    vc_run(&c, 4);
}

void vulkan_index_cases(void) {
    gather_elements_cases();
    topk_cases();
    arg_cases();
    reduce_cases();
    softmax_any_axis_cases();
    gather_nd_cases();
    scatter_nd_cases();
    scatter_elements_cases();
    nonzero_cases();
    detector_chain_case();
}
