/* The Vulkan provider against the CPU provider: every kernel it claims,
 * on one-node models built in memory, run once with providers
 * {"vulkan", "cpu"} and once with {"cpu"}, over empty tensors, every kind
 * of broadcast, odd sizes and MatMul sizes that are no multiple of the
 * tile. Each case also checks where its node ran (the session's
 * placement and the provider's dispatch count).
 *
 * Tolerances (|vulkan - cpu| <= rtol * |cpu| + atol): elementwise
 * 1e-5 relative + 1e-6 absolute (results near 0); MatMul, Gemm and
 * Softmax 1e-4 relative + 1e-5 absolute (other summation orders).
 *
 * Modes (argv[1]):
 *   (none)                 all cases; a build with Vulkan and no device
 *                          fails, unless ONYX_VK_ALLOW_NO_DEVICE=1 (exit 77,
 *                          which CTest reports as skipped)
 *   --expect-masked        the same, with ONYX_VK_DISABLE set by CTest:
 *                          checks the capability record shows the mask
 *   --expect-bounded       the same, with ONYX_VK_LIMITS set by CTest to a
 *                          16 MiB storage-buffer range, at most 7 workgroups
 *                          per dimension (grid-stride loops really stride)
 *                          and a dispatch budget of 1024 units: every case
 *                          must still match, and dispatches must have been
 *                          split (counted over all cases)
 *   --expect-wg N          the same, with ONYX_VK_LIMITS set by CTest to
 *                          maxComputeWorkGroupInvocations=N: the provider
 *                          must pick N-invocation workgroups (tiles of the
 *                          largest square within N) and every case must
 *                          still run on the device and match the CPU
 *   --expect-unavailable   no usable Vulkan (CTest points VK_ICD_FILENAMES
 *                          at a file that does not exist): creation fails
 *                          cleanly and {"vulkan", "cpu"} runs on the CPU
 * ONYX_VK_CASES=TEXT limits the kernel cases to those whose label holds
 * TEXT (the other checks still run), for a short run on a borrowed GPU. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/dtype.h"
#include "ep/vulkan/vk_ep.h"
#include "runtime/session.h"
#include "model_builder.h"
#include "vulkan_case.h"

#define SKIPPED 77

/* Mesa 22.3's lavapipe leaks 128 bytes in a one-time initialisation each
 * time the loader loads it (under vkEnumeratePhysicalDevices), and the
 * loader unloads it with the last instance. One provider kept for the
 * whole test keeps the driver loaded: the leak happens once and stays
 * reachable from the driver's globals, instead of once per session, and
 * LeakSanitizer still sees every leak of onyx's own. */
static ox_ep *keep_driver_loaded;

/* ---- cases ---- */

static const int64_t SHAPES[][4] = {{0}, {1}, {3}, {17}, {257}, {2, 3, 17}, {70001}, {0, 5}};
static const int SHAPE_RANKS[] = {1, 1, 1, 1, 1, 3, 1, 2};
#define N_SHAPES (int)(sizeof SHAPE_RANKS / sizeof SHAPE_RANKS[0])

static void unary_cases(void) {
    static const struct {
        const char *op;
        float lo, hi;
        int opset;
    } OPS[] = {
        {"Relu", -3, 3, 14},     {"Sigmoid", -12, 12, 13}, {"Tanh", -6, 6, 13},
        {"Tanh", -0.5f, 0.5f, 13}, {"Exp", -10, 10, 13},   {"Neg", -3, 3, 13},
        {"Abs", -3, 3, 13},      {"Sqrt", 0, 100, 13},     {"Erf", -5, 5, 13},
        {"Erf", -0.01f, 0.01f, 13}, {"LeakyRelu", -3, 3, 16}, {"Gelu", -6, 6, 20},
    };
    for (size_t k = 0; k < sizeof OPS / sizeof OPS[0]; k++)
        for (int s = 0; s < N_SHAPES; s++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "%s [%g,%g) shape %d", OPS[k].op, OPS[k].lo, OPS[k].hi, s);
            vc_begin(&c, label, OPS[k].opset, TOL_EW);
            vc_input(&c, "x", SHAPES[s], SHAPE_RANKS[s], OPS[k].lo, OPS[k].hi);
            mb_node(c.m, OPS[k].op, "x", "y");
            if (strcmp(OPS[k].op, "LeakyRelu") == 0) mb_attr_float(c.m, "alpha", 0.2f);
            vc_run(&c, 1);
        }
    int64_t d[] = {5, 17};
    vcase c;
    vc_begin(&c, "Gelu tanh", 20, TOL_EW);
    vc_input(&c, "x", d, 2, -6, 6);
    mb_node(c.m, "Gelu", "x", "y");
    mb_attr_string(c.m, "approximate", "tanh");
    vc_run(&c, 1);

    /* Clip: attributes (opset 6), constant bounds, a bound fed at run
     * time, no bounds at all */
    vc_begin(&c, "Clip-6 attributes", 6, TOL_EW);
    vc_input(&c, "x", d, 2, -3, 3);
    mb_node(c.m, "Clip", "x", "y");
    mb_attr_float(c.m, "min", -0.5f);
    mb_attr_float(c.m, "max", 1.25f);
    vc_run(&c, 1);
    float lo = -1.0f, hi = 0.75f;
    vc_begin(&c, "Clip-13 constant bounds", 13, TOL_EW);
    vc_input(&c, "x", d, 2, -3, 3);
    mb_init_float(c.m, "lo", NULL, 0, &lo);
    mb_init_float(c.m, "hi", NULL, 0, &hi);
    c.n_weights = 2;
    mb_node(c.m, "Clip", "x,lo,hi", "y");
    vc_run(&c, 1);
    vc_begin(&c, "Clip-13 max fed at run time", 13, TOL_EW);
    vc_input(&c, "x", d, 2, -3, 3);
    vc_input(&c, "hi", NULL, 0, 0.25f, 0.5f);
    mb_node(c.m, "Clip", "x,,hi", "y");
    vc_run(&c, 1);
    vc_begin(&c, "Clip-13 no bounds", 13, TOL_EW);
    vc_input(&c, "x", d, 2, -3, 3);
    mb_node(c.m, "Clip", "x", "y");
    vc_run(&c, 1);
}

static void binary_cases(void) {
    static const struct {
        int ra, rb;
        int64_t a[6], b[6];
    } SH[] = {
        {1, 1, {17}, {17}},
        {1, 1, {257}, {257}},
        {2, 0, {3, 17}, {0}},              /* scalar */
        {0, 2, {0}, {3, 17}},
        {2, 2, {5, 17}, {1, 17}},          /* row */
        {2, 2, {5, 17}, {5, 1}},           /* column */
        {3, 1, {2, 3, 17}, {17}},          /* rank mismatch */
        {1, 3, {3}, {2, 1, 3}},
        {3, 2, {3, 1, 5}, {4, 1}},         /* both broadcast */
        {6, 6, {2, 1, 3, 1, 2, 3}, {1, 2, 1, 3, 1, 3}}, /* six dimensions, alternating */
        {2, 2, {0, 3}, {1, 3}},            /* empty */
        {2, 1, {1, 1}, {1}},
        {2, 2, {300, 257}, {300, 1}},
    };
    static const char *OPS[] = {"Add", "Sub", "Mul", "Div"};
    for (int o = 0; o < 4; o++)
        for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "%s shapes %zu", OPS[o], s);
            vc_begin(&c, label, 14, TOL_EW);
            vc_input(&c, "a", SH[s].a, SH[s].ra, -4, 4);
            /* denominators kept away from 0 */
            vc_input(&c, "b", SH[s].b, SH[s].rb, 0.5f, 4);
            mb_node(c.m, OPS[o], "a,b", "y");
            vc_run(&c, 1);
        }
}

static void matmul_cases(void) {
    static const struct {
        int ra, rb;
        int64_t a[4], b[4];
    } SH[] = {
        {2, 2, {1, 1}, {1, 1}},
        {2, 2, {3, 17}, {17, 5}},
        {2, 2, {17, 257}, {257, 3}},
        {2, 2, {33, 47}, {47, 65}},        /* no dimension a multiple of 16 */
        {2, 2, {64, 32}, {32, 48}},
        {4, 2, {2, 3, 4, 5}, {5, 6}},      /* batched */
        {3, 3, {2, 1, 5}, {1, 5, 7}},      /* batch broadcast both ways */
        {4, 3, {2, 1, 4, 5}, {3, 5, 6}},
        {1, 2, {17}, {17, 5}},             /* vector @ matrix */
        {2, 1, {5, 17}, {17}},             /* matrix @ vector */
        {1, 1, {17}, {17}},                /* dot product */
        {3, 1, {2, 5, 17}, {17}},
        {2, 2, {3, 0}, {0, 4}},            /* K = 0: zeros */
        {2, 2, {0, 5}, {5, 4}},            /* empty */
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "MatMul shapes %zu", s);
        vc_begin(&c, label, 13, TOL_MM);
        vc_input(&c, "a", SH[s].a, SH[s].ra, -1, 1);
        vc_input(&c, "b", SH[s].b, SH[s].rb, -1, 1);
        mb_node(c.m, "MatMul", "a,b", "y");
        vc_run(&c, 1);
    }
}

static void gemm_cases(void) {
    const int64_t M = 17, K = 33, N = 19;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int ck = 0; ck < 5; ck++) {
                /* C: none, scalar, row, column, full */
                static const int CRANK[] = {-1, 0, 1, 2, 2};
                int64_t cdims[2] = {ck == 3 ? M : ck == 4 ? M : 1, ck == 3 ? 1 : N};
                if (ck == 2) cdims[0] = N;
                vcase c;
                char label[64];
                snprintf(label, sizeof label, "Gemm transA %d transB %d C %d", ta, tb, ck);
                vc_begin(&c, label, 13, TOL_MM);
                int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N};
                vc_input(&c, "a", ad, 2, -1, 1);
                vc_input(&c, "b", bd, 2, -1, 1);
                if (CRANK[ck] >= 0) vc_input(&c, "c", cdims, CRANK[ck], -1, 1);
                mb_node(c.m, "Gemm", CRANK[ck] >= 0 ? "a,b,c" : "a,b", "y");
                mb_attr_int(c.m, "transA", ta);
                mb_attr_int(c.m, "transB", tb);
                mb_attr_float(c.m, "alpha", 0.75f);
                mb_attr_float(c.m, "beta", ck ? -1.5f : 1.0f);
                vc_run(&c, 1);
            }
}

static void softmax_cases(void) {
    static const struct {
        int rank, opset, axis; /* axis 99: the default */
        int64_t d[3];
        int on_vk;
    } SH[] = {
        {2, 13, 99, {1, 1}, 1},   {2, 13, 99, {3, 17}, 1},  {3, 13, -1, {2, 5, 257}, 1},
        {2, 13, 1, {4, 1000}, 1}, {2, 13, 99, {0, 5}, 1},   {1, 13, 0, {300}, 1},
        {2, 11, 99, {6, 33}, 1},  /* opset 11: default axis 1 is the last of rank 2 */
        {3, 11, 99, {2, 3, 4}, 1}, /* opset 11, axis 1 of 3: coerced to 2-D */
        {3, 13, 1, {2, 3, 4}, 1}, /* not the last axis: strided rows */
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "Softmax case %zu", s);
        vc_begin(&c, label, SH[s].opset, TOL_MM);
        vc_input(&c, "x", SH[s].d, SH[s].rank, -8, 8);
        mb_node(c.m, "Softmax", "x", "y");
        if (SH[s].axis != 99) mb_attr_int(c.m, "axis", SH[s].axis);
        vc_run(&c, SH[s].on_vk);
    }
}

static void gather_cases(void) {
    static const int64_t IDX[] = {0, 4, -1, 2, -5, 3, 1, 1, 0, 2, 3, 4};
    static const struct {
        int rd;
        int64_t d[3];
        int ri;
        int64_t i[2];
        int axis, dtype;
    } SH[] = {
        {2, {5, 4}, 1, {3}, 0, ONYX_INT64},
        {2, {5, 4}, 2, {2, 3}, 0, ONYX_INT64},
        {3, {3, 5, 7}, 1, {6}, 1, ONYX_INT64},
        {3, {3, 5, 7}, 1, {6}, -2, ONYX_INT32},
        {1, {5}, 0, {0}, 0, ONYX_INT64}, /* a scalar index */
        {2, {5, 4}, 1, {0}, 0, ONYX_INT64}, /* no indices */
    };
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "Gather case %zu", s);
        vc_begin(&c, label, 13, TOL_EW);
        vc_input(&c, "x", SH[s].d, SH[s].rd, -5, 5);
        vc_input_int(&c, "i", SH[s].dtype, SH[s].i, SH[s].ri, IDX);
        mb_node(c.m, "Gather", "x,i", "y");
        mb_attr_int(c.m, "axis", SH[s].axis);
        vc_run(&c, 1);
    }
    /* out of range: the run fails naming the node and the index, before
     * or after wrapping, and for an int64 beyond 32 bits */
    static const int64_t BAD[][3] = {{0, 5, 1}, {-6, 0, 1}, {0, 1, (int64_t)1 << 40}};
    for (int b = 0; b < 3; b++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "Gather out of range %d", b);
        vc_begin(&c, label, 13, TOL_EW);
        int64_t d[] = {5, 4}, di[] = {3};
        vc_input(&c, "x", d, 2, -5, 5);
        vc_input_int(&c, "i", ONYX_INT64, di, 1, BAD[b]);
        mb_node(c.m, "Gather", "x,i", "y");
        vc_run_expect(&c, 1, "out of range");
    }
}

/* Runs the model once on x (a Relu chain's input: y must be relu(x)) and
 * returns the queue submits the run made; with fail_needle the run must
 * fail with it. */
static long submits_of_run(const uint8_t *buf, size_t len, const float *x, int64_t nx,
                           const char *fail_needle) {
    onyx_session *s = vc_session(buf, len, 1);
    if (!s) return -1;
    ox_vk_stats before, after;
    ox_vulkan_ep_get_stats(s->eps[0], &before);
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, &nx, 1, &tx));
    memcpy(onyx_tensor_data(tx), x, (size_t)nx * sizeof *x);
    const char *in = "x", *out = "y";
    onyx_status *st = onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1);
    if (fail_needle) {
        CHECK(st && strstr(onyx_status_message(st), fail_needle));
    } else {
        CHECK(!st);
        for (int64_t i = 0; ty && i < nx; i++)
            CHECK(((float *)onyx_tensor_data(ty))[i] == (x[i] > 0 ? x[i] : 0.0f));
    }
    if (st) onyx_status_free(st);
    ox_vulkan_ep_get_stats(s->eps[0], &after);
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
    onyx_session_free(s);
    return after.submits - before.submits;
}

/* A run longer than one stream's descriptor pool (512 dispatches) or flag
 * table (64 index checks) submits early and goes on: the results are
 * those of the whole chain, and an out-of-range index past the first
 * submission is still reported. */
static void stream_limit_cases(void) {
    float x[6] = {-1.5f, 0.25f, 3, -0.5f, 2, 0};
    int64_t nx = 6;
    /* 600 Relu: two submissions of dispatches, then one for the copy back */
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, &nx, 1);
    char a[16], b[16];
    for (int i = 0; i < 600; i++) {
        snprintf(a, sizeof a, i ? "h%d" : "x", i - 1);
        snprintf(b, sizeof b, i == 599 ? "y" : "h%d", i);
        mb_node(m, "Relu", a, b);
    }
    mb_output(m, "y", ONYX_FLOAT32, &nx, 1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    CHECK(submits_of_run(buf, len, x, nx, NULL) >= 2);
    free(buf);
    /* Relu, then 70 Gathers with checked indices (identity permutation),
     * the last with an index out of range */
    for (int bad = 0; bad < 2; bad++) {
        m = mb_new(13);
        mb_input(m, "x", ONYX_FLOAT32, &nx, 1);
        mb_node(m, "Relu", "x", "g0");
        int64_t perm[6] = {0, 1, 2, 3, 4, 5}, wrong[6] = {0, 1, 2, 3, 4, 6};
        mb_init_int64(m, "perm", &nx, 1, perm);
        mb_init_int64(m, "wrong", &nx, 1, wrong);
        for (int i = 0; i < 70; i++) {
            char ins[32];
            snprintf(ins, sizeof ins, "g%d,%s", i, i == 69 && bad ? "wrong" : "perm");
            snprintf(b, sizeof b, i == 69 ? "y" : "g%d", i + 1);
            mb_node(m, "Gather", ins, b);
        }
        mb_output(m, "y", ONYX_FLOAT32, &nx, 1);
        buf = mb_serialize(m, &len);
        mb_free(m);
        long n = submits_of_run(buf, len, x, nx, bad ? "index 6 (position 5 of the indices) is out of range" : NULL);
        CHECK(n >= 2);
        free(buf);
    }
}

/* Indices made on the device (Cast) and checked by Gather: once the
 * memory plan puts the run's intermediates in one arena, the Relus after
 * the Gather would take the indices' bytes, and the message naming the
 * bad index reads it back only when the stream is waited for. The index
 * must still be the one the Gather saw. */
static void late_indices_case(void) {
    int64_t n = 6;
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, &n, 1);
    mb_input(m, "f", ONYX_FLOAT32, &n, 1);
    mb_node(m, "Cast", "f", "idx");
    mb_attr_int(m, "to", ONYX_INT64);
    mb_node(m, "Gather", "x,idx", "g");
    mb_node(m, "Relu", "g", "r1");
    mb_node(m, "Relu", "r1", "r2");
    mb_node(m, "Relu", "r2", "r3");
    mb_node(m, "Relu", "r3", "y");
    mb_output(m, "y", ONYX_FLOAT32, &n, 1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = vc_session(buf, len, 1);
    free(buf);
    if (!s) return;
    CHECK(vc_on_vulkan(s) == 6);
    float x[6] = {-1, 2, 3, -4, 5, 6};
    float good[6] = {5, 4, 3, 2, 1, 0}, bad[6] = {5, 4, 9, 2, 1, 0};
    const float *fs[] = {good, good, bad};
    for (int r = 0; r < 3; r++) {
        onyx_tensor *tx = NULL, *tf = NULL, *ty = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, &n, 1, x, sizeof x, &tx));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, &n, 1, (void *)fs[r], sizeof good, &tf));
        const char *in[] = {"x", "f"}, *out = "y";
        const onyx_tensor *ins[] = {tx, tf};
        onyx_status *st = onyx_session_run(s, in, ins, 2, &out, &ty, 1);
        if (r < 2) {
            CHECK(!st);
            for (int i = 0; ty && i < 6; i++)
                CHECK(((float *)onyx_tensor_data(ty))[i] == (x[5 - i] > 0 ? x[5 - i] : 0.0f));
        } else {
            CHECK(st && strstr(onyx_status_message(st),
                               "index 9 (position 2 of the indices) is out of range for axis 0 of size 6"));
        }
        if (st) onyx_status_free(st);
        onyx_tensor_free(ty);
        onyx_tensor_free(tx);
        onyx_tensor_free(tf);
    }
    ox_vk_stats vst;
    ox_vulkan_ep_get_stats(s->eps[0], &vst);
    CHECK(vst.arenas == 1); /* runs two and three used it */
    onyx_session_free(s);
}

/* A float32 value that float16 holds exactly, subnormal halves and
 * negative zero among them. */
static float half_value(int i) {
    uint16_t h = (uint16_t)((i * 2654435761u) >> 16);
    if ((h & 0x7c00u) == 0x7c00u) h &= 0x3fffu; /* no infinities or NaNs */
    if (i % 7 == 0) h &= 0x83ffu;               /* a subnormal (or a zero) */
    if (i == 3) h = 0x8000u;                     /* -0 */
    float f = ox_half_to_float(h);
    return fabsf(f) > 4.0f ? f / 64.0f : f; /* halves again: a power of two */
}


/* A session on Vulkan (every node it takes), then the CPU, with one provider option. */
static onyx_session *option_session(const uint8_t *buf, size_t len, const char *key, const char *value) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    const char *both[] = {"vulkan", "cpu"};
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_providers(o, both, 2));
    CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", "place", "all"));
    CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", key, value));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

/* Weights that float16 holds exactly are stored as float16 for the nodes
 * that read that form (Conv as a GEMM and depthwise, ConvTranspose, MatMul,
 * Gemm): the outputs equal those of the same session with the form
 * masked (float32 weights) bit for bit, and the CPU's within the
 * kernels' tolerance. A weight another kind of node also reads (Add), and
 * one with a value float16 does not hold, stay float32. */
static void half_weights_case(void) {
    mb_model *m = mb_new(13);
    int64_t dx[] = {1, 4, 9, 9}, dw[] = {8, 4, 3, 3}, ddw[] = {8, 1, 3, 3}, dt[] = {8, 2, 2, 2};
    int64_t dm[] = {162, 24}, dg[] = {10, 24}, dk[] = {24}, sd[] = {2}, one[] = {1};
    int64_t shape[] = {1, 288}, s0[] = {0}, s1[] = {162}, ax[] = {1};
    float w[8 * 4 * 9], wdw[8 * 9], wt[8 * 2 * 4], wm[162 * 24], wg[10 * 24], k[24];
    for (int i = 0; i < 8 * 4 * 9; i++) w[i] = half_value(i);
    for (int i = 0; i < 8 * 9; i++) wdw[i] = half_value(1000 + i);
    for (int i = 0; i < 8 * 2 * 4; i++) wt[i] = half_value(2000 + i);
    for (int i = 0; i < 162 * 24; i++) wm[i] = half_value(3000 + i);
    for (int i = 0; i < 10 * 24; i++) wg[i] = i == 37 ? 0.1f : half_value(9000 + i); /* 0.1: no half */
    for (int i = 0; i < 24; i++) k[i] = half_value(12000 + i);
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_init_float(m, "w", dw, 4, w);
    mb_init_float(m, "wdw", ddw, 4, wdw);
    mb_init_float(m, "wt", dt, 4, wt);
    mb_init_float(m, "wm", dm, 2, wm);
    mb_init_float(m, "wg", dg, 2, wg);
    mb_init_float(m, "k", dk, 1, k);
    mb_init_int64(m, "shape", sd, 1, shape);
    mb_node(m, "Conv", "x,w", "c1");            /* [1, 8, 7, 7]: the GEMM form */
    mb_node(m, "Conv", "c1,wdw", "c2");         /* depthwise: [1, 8, 5, 5] */
    mb_attr_int(m, "group", 8);
    mb_node(m, "ConvTranspose", "c2,wt", "c3"); /* [1, 8, 6, 6] */
    mb_attr_int(m, "group", 4);
    mb_node(m, "Reshape", "c3,shape", "r");     /* [1, 288]: its first 162 below */
    mb_node(m, "Slice", "r,s0,s1,ax", "r2");
    mb_init_int64(m, "s0", one, 1, s0);
    mb_init_int64(m, "s1", one, 1, s1);
    mb_init_int64(m, "ax", one, 1, ax);
    mb_node(m, "MatMul", "r2,wm", "h");         /* [1, 24] */
    mb_node(m, "Add", "h,k", "hk");             /* k: read by Add, stays float32 */
    mb_node(m, "Gemm", "hk,wg", "y");           /* [1, 10], transB; wg holds a 0.1 */
    mb_attr_int(m, "transB", 1);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *half = vc_session(buf, len, 1), *full = option_session(buf, len, "disable", "fp16");
    onyx_session *cpu = vc_session(buf, len, 0);
    free(buf);
    onyx_tensor *x = NULL, *yh = NULL, *yf = NULL, *yc = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dx, 4, &x));
    float *px = onyx_tensor_data(x);
    for (int i = 0; px && i < 4 * 81; i++) px[i] = frand(-1, 1);
    const char *in = "x", *out = "y";
    const onyx_tensor *ins[] = {x};
    if (half && full && cpu) {
        CHECK((size_t)vc_on_vulkan(half) == onyx_session_node_count(half));
        CHECK_OK(onyx_session_run(half, &in, ins, 1, &out, &yh, 1));
        CHECK_OK(onyx_session_run(full, &in, ins, 1, &out, &yf, 1));
        CHECK_OK(onyx_session_run(cpu, &in, ins, 1, &out, &yc, 1));
    }

    if (yh && yf && yc) {
        CHECK(onyx_tensor_numel(yh) == 10);
        CHECK(memcmp(onyx_tensor_data(yh), onyx_tensor_data(yf), onyx_tensor_nbytes(yf)) == 0);
        const float *a = onyx_tensor_data(yh), *b = onyx_tensor_data(yc);
        for (int i = 0; i < 10; i++) CHECK_NEAR(a[i], b[i], 1e-4 + 1e-4 * fabs(b[i]));
        ox_vk_stats sh, sf;
        ox_vulkan_ep_get_stats(half->eps[0], &sh);
        ox_vulkan_ep_get_stats(full->eps[0], &sf);
        /* w, wdw, wt and wm as halves; not wg (0.1) nor k (Add); none
         * where ONYX_VK_DISABLE masks fp16 (unit.vulkan_ep.masked) */
        int on = !(ox_vulkan_ep_caps(half->eps[0])->masked & OX_VK_MASK_FP16);
        CHECK(sh.half_weights == (on ? 4 : 0) && sf.half_weights == 0);
        size_t halves = sizeof w + sizeof wdw + sizeof wt + sizeof wm;
        if (on) CHECK(sf.live_bytes - sh.live_bytes >= halves / 2 - 4 * 16);
    }
    onyx_tensor_free(yh);
    onyx_tensor_free(yf);
    onyx_tensor_free(yc);
    onyx_tensor_free(x);
    onyx_session_free(half);
    onyx_session_free(full);
    onyx_session_free(cpu);

    /* A MatMul whose input, its size unknown at placement, turns out past
     * the device's buffers (max_buffer) declines at run time: the CPU then
     * reads the weight back from its float16 copy, widened. */
    m = mb_new(13);
    int64_t dv[] = {-1, 162};
    mb_input(m, "x", ONYX_FLOAT32, dv, 2);
    mb_init_float(m, "wm", dm, 2, wm);
    mb_node(m, "MatMul", "x,wm", "y");
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *declining = option_session(buf, len, "max_buffer", "16384");
    cpu = vc_session(buf, len, 0);
    free(buf);
    int64_t d40[] = {40, 162};
    x = yc = NULL;
    onyx_tensor *yd = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, d40, 2, &x));
    px = onyx_tensor_data(x);
    for (int i = 0; px && i < 40 * 162; i++) px[i] = frand(-1, 1);
    ins[0] = x;
    if (declining && cpu) {
        CHECK_OK(onyx_session_run(declining, &in, ins, 1, &out, &yd, 1));
        CHECK_OK(onyx_session_run(cpu, &in, ins, 1, &out, &yc, 1));
        onyx_provider_stats ps;
        CHECK_OK(onyx_session_provider_stats(declining, "vulkan", &ps));
        ox_vk_stats sd;
        ox_vulkan_ep_get_stats(declining->eps[0], &sd);
        int on = !(ox_vulkan_ep_caps(declining->eps[0])->masked & OX_VK_MASK_FP16);
        CHECK(ps.cpu_fallbacks == 1 && sd.half_weights == (on ? 1 : 0));
    }
    if (yd && yc) {
        const float *a = onyx_tensor_data(yd), *b = onyx_tensor_data(yc);
        CHECK(memcmp(a, b, onyx_tensor_nbytes(yc)) == 0); /* the CPU's product, the same weights */
    }
    onyx_tensor_free(yd);
    onyx_tensor_free(yc);
    onyx_tensor_free(x);
    onyx_session_free(declining);
    onyx_session_free(cpu);
}

/* A chain that stays on the device between nodes (Softmax over a middle
 * axis in the middle). */
static void chain_case(void) {
    vcase c;
    vc_begin(&c, "chain", 13, TOL_MM);
    int64_t dx[] = {2, 8, 33}, dw[] = {33, 17};
    vc_input(&c, "x", dx, 3, -1, 1);
    vc_input(&c, "w", dw, 2, -1, 1);
    mb_node(c.m, "MatMul", "x,w", "h");
    mb_node(c.m, "Relu", "h", "r");
    mb_node(c.m, "Softmax", "r", "s");
    mb_attr_int(c.m, "axis", 1);
    mb_node(c.m, "Tanh", "s", "t");
    mb_node(c.m, "Add", "t,r", "y");
    vc_run(&c, 5);
}

/* Runs after the first allocate no device memory: the stream keeps the
 * buffers its run freed for the next run (on a discrete GPU's driver an
 * allocation costs tens of microseconds, per tensor per run otherwise),
 * and the results stay the same. */
/* y = Softmax(Tanh(x w)) for x of dims [..., 40] and a 40 x 24 weight,
 * times x w again when times_h: serialized, the builder in *m_out for
 * the caller to free (the multi-node cases below). */
static uint8_t *matmul_softmax_model(const int64_t *dx, int rank, int times_h, mb_model **m_out,
                                     size_t *len) {
    mb_model *m = mb_new(13);
    int64_t dw[] = {40, 24};
    mb_input(m, "x", ONYX_FLOAT32, dx, rank);
    float w[40 * 24];
    for (int i = 0; i < 40 * 24; i++) w[i] = frand(-1, 1);
    mb_init_float(m, "w", dw, 2, w);
    mb_node(m, "MatMul", "x,w", "h");
    mb_node(m, "Tanh", "h", "t");
    mb_node(m, "Softmax", "t", times_h ? "s" : "y");
    if (times_h) mb_node(m, "Mul", "s,h", "y");
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    *m_out = m;
    return mb_serialize(m, len);
}

static void reuse_case(void) {
    mb_model *m = NULL;
    int64_t dx[] = {4, 24, 40};
    size_t len = 0;
    uint8_t *buf = matmul_softmax_model(dx, 3, 1, &m, &len);
    onyx_session *vk = vc_session(buf, len, 1);
    onyx_tensor *x = NULL, *first = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dx, 3, &x));
    float *p = onyx_tensor_data(x);
    for (int i = 0; i < 4 * 24 * 40; i++) p[i] = frand(-2, 2);
    const char *in = "x", *out = "y";
    const onyx_tensor *ins[] = {x};
    long allocs[3] = {0}, arenas[3] = {0}, kept[3] = {0};
    uint64_t held[3] = {0}, live[3] = {0};
    for (int r = 0; vk && r < 3; r++) {
        onyx_tensor *y = NULL;
        CHECK_OK(onyx_session_run(vk, &in, ins, 1, &out, &y, 1));
        ox_vk_stats st;
        ox_vulkan_ep_get_stats(vk->eps[0], &st);
        allocs[r] = st.buffer_allocations;
        arenas[r] = st.arenas;
        kept[r] = st.kept_buffers;
        live[r] = st.live_bytes;
        onyx_provider_stats ps;
        CHECK_OK(onyx_session_provider_stats(vk, "vulkan", &ps));
        held[r] = ps.device_bytes;
        if (!first) {
            first = y;
        } else {
            CHECK(y && memcmp(onyx_tensor_data(y), onyx_tensor_data(first),
                              onyx_tensor_nbytes(first)) == 0);
            onyx_tensor_free(y);
        }
    }
    CHECK(vk && vc_on_vulkan(vk) == 4);
    /* the first run allocates per tensor and keeps its buffers for the
     * next; once the memory plan exists, each run's intermediates are
     * views of one device arena, made by the second run and kept */
    CHECK(allocs[0] > 0 && kept[0] > 0 && arenas[0] == 0);
    CHECK(arenas[1] == 1 && allocs[1] == allocs[0] + 1 && kept[1] == 0);
    CHECK(arenas[2] == 1 && allocs[2] == allocs[1] && kept[2] == 0);
    /* what the public stats say the device holds: the weight and the kept
     * buffers, then the weight and the arena, the same once steady */
    for (int r = 0; r < 3; r++) CHECK(held[r] > 40 * 24 * sizeof(float) && held[r] == live[r]);
    CHECK(held[2] == held[1]);
    onyx_tensor_free(first);
    onyx_tensor_free(x);
    onyx_session_free(vk);
    free(buf);
    mb_free(m);
}

/* Kept buffers, and a kept device arena, give way to the memory_budget
 * option. A run at batch 64 keeps its buffers (a second one, its arena);
 * a run at batch 4 (new shapes, no plan yet) fits none of them (a kept
 * buffer is taken only when it wastes at most half) and needs about 2 KiB
 * more. With a budget of what the device held plus 512 bytes, that run
 * stays on the device only if what was kept is freed first. */
static onyx_tensor *batch_input(int64_t batch) {
    int64_t dx[] = {batch, 40};
    onyx_tensor *x = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dx, 2, &x));
    float *p = x ? onyx_tensor_data(x) : NULL;
    for (int64_t i = 0; p && i < batch * 40; i++) p[i] = frand(-2, 2);
    return x;
}

static uint64_t run_batch(onyx_session *s, onyx_tensor *x) {
    const char *in = "x", *out = "y";
    const onyx_tensor *ins[] = {x};
    onyx_tensor *y = NULL;
    CHECK_OK(onyx_session_run(s, &in, ins, 1, &out, &y, 1));
    onyx_tensor_free(y);
    ox_vk_stats st;
    ox_vulkan_ep_get_stats(s->eps[0], &st);
    return st.live_bytes;
}


/* big_runs 1: the first run's kept buffers give way; 2: the second run
 * made the device arena, which the stream keeps, and that gives way. */
static void budget_case(int big_runs) {
    mb_model *m = NULL;
    int64_t dx[] = {-1, 40};
    size_t len = 0;
    uint8_t *buf = matmul_softmax_model(dx, 2, 1, &m, &len);
    onyx_tensor *big = batch_input(64), *small = batch_input(4);
    onyx_session *free_run = vc_session(buf, len, 1);
    uint64_t held = 0;
    for (int r = 0; free_run && big && r < big_runs; r++) held = run_batch(free_run, big);
    if (free_run) {
        ox_vk_stats st;
        ox_vulkan_ep_get_stats(free_run->eps[0], &st);
        CHECK(st.arenas == big_runs - 1);
    }
    onyx_session_free(free_run);
    CHECK(held > 0);
    char budget[32];
    snprintf(budget, sizeof budget, "%llu", (unsigned long long)held + 512);
    onyx_session *s = option_session(buf, len, "memory_budget", budget);
    if (s && big && small) {
        for (int r = 0; r < big_runs - 1; r++) run_batch(s, big);
        CHECK(run_batch(s, big) == held);
        run_batch(s, small);
        onyx_provider_stats ps;
        memset(&ps, 0, sizeof ps);
        CHECK_OK(onyx_session_provider_stats(s, "vulkan", &ps));
        CHECK(ps.device_faults == 0 && ps.runs_rescued == 0);
    }
    onyx_session_free(s);
    onyx_tensor_free(big);
    onyx_tensor_free(small);
    free(buf);
    mb_free(m);
}

/* A device whose largest allocation holds every tensor but not the run's
 * arena keeps running, its tensors allocated one by one (no arena, no
 * fault, the same results). */
static void capped_arena_case(void) {
    mb_model *m = NULL;
    int64_t dx[] = {-1, 40};
    size_t len = 0;
    uint8_t *buf = matmul_softmax_model(dx, 2, 1, &m, &len);
    onyx_tensor *mid = batch_input(32);
    /* batch 32: x 5120 bytes, the others 3072 each, the arena over 9 KiB */
    onyx_session *capped = option_session(buf, len, "limits", "maxMemoryAllocationSize=6144");
    onyx_session *plain = vc_session(buf, len, 1);
    const char *in = "x", *out = "y";
    const onyx_tensor *ins[] = {mid};
    onyx_tensor *want = NULL;
    if (capped && plain && mid) {
        CHECK_OK(onyx_session_run(plain, &in, ins, 1, &out, &want, 1));
        for (int r = 0; r < 3 && want; r++) {
            onyx_tensor *y = NULL;
            CHECK_OK(onyx_session_run(capped, &in, ins, 1, &out, &y, 1));
            CHECK(y && memcmp(onyx_tensor_data(y), onyx_tensor_data(want), onyx_tensor_nbytes(want)) == 0);
            onyx_tensor_free(y);
        }
        ox_vk_stats st;
        ox_vulkan_ep_get_stats(capped->eps[0], &st);
        onyx_provider_stats ps;
        CHECK_OK(onyx_session_provider_stats(capped, "vulkan", &ps));
        CHECK(st.arenas == 0 && ps.device_faults == 0 && ps.cpu_fallbacks == 0);
        CHECK(vc_on_vulkan(capped) == 4);
    }
    onyx_tensor_free(want);
    onyx_session_free(capped);
    onyx_session_free(plain);

    onyx_tensor_free(mid);
    free(buf);
    mb_free(m);
}

/* One session run from several threads at once (sessions allow it): the
 * provider's queue, command buffer and staging buffer are shared, under
 * its lock. Every run must match the CPU's result. */
typedef struct thread_job {
    onyx_session *s;
    onyx_tensor *x;
    const float *want;
    int64_t n;
    int bad;
} thread_job;

static void *thread_runs(void *arg) {
    thread_job *j = arg;
    const char *in = "x", *out = "y";
    for (int r = 0; r < 20; r++) {
        onyx_tensor *y = NULL;
        const onyx_tensor *ins[] = {j->x};
        onyx_status *st = onyx_session_run(j->s, &in, ins, 1, &out, &y, 1);
        if (st) {
            j->bad++;
            onyx_status_free(st);
            continue;
        }
        const float *p = onyx_tensor_data(y);
        for (int64_t i = 0; i < j->n; i++)
            if (fabs((double)p[i] - (double)j->want[i]) > 1e-4 * fabs((double)j->want[i]) + 1e-5) {
                j->bad++;
                break;
            }
        onyx_tensor_free(y);
    }
    return NULL;
}

static void threads_case(void) {
    mb_model *m = NULL;
    int64_t dx[] = {16, 40};
    size_t len = 0;
    uint8_t *buf = matmul_softmax_model(dx, 2, 0, &m, &len);
    onyx_session *vk = vc_session(buf, len, 1), *cpu = vc_session(buf, len, 0);
    enum { T = 4 };
    onyx_tensor *x[T] = {NULL}, *want[T] = {NULL};
    thread_job jobs[T];
    pthread_t th[T];
    for (int t = 0; vk && cpu && t < T; t++) {
        CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dx, 2, &x[t]));
        float *p = onyx_tensor_data(x[t]);
        for (int i = 0; i < 16 * 40; i++) p[i] = frand(-2, 2);
        const char *in = "x", *out = "y";
        const onyx_tensor *ins[] = {x[t]};
        CHECK_OK(onyx_session_run(cpu, &in, ins, 1, &out, &want[t], 1));
        jobs[t] = (thread_job){vk, x[t], want[t] ? onyx_tensor_data(want[t]) : NULL, 16 * 24, 0};
    }
    int started = 0;
    for (int t = 0; vk && cpu && t < T && jobs[t].want; t++, started++)
        CHECK(pthread_create(&th[t], NULL, thread_runs, &jobs[t]) == 0);
    for (int t = 0; t < started; t++) {
        pthread_join(th[t], NULL);
        CHECK(jobs[t].bad == 0);
    }
    CHECK(started == T);
    /* the optimizer fuses Tanh into the product (onyx.FusedMatMul, which
     * the provider runs): two nodes, both on the device */
    if (vk) CHECK(vc_on_vulkan(vk) == 2);
    for (int t = 0; t < T; t++) {
        onyx_tensor_free(x[t]);
        onyx_tensor_free(want[t]);
    }
    onyx_session_free(vk);
    onyx_session_free(cpu);
    free(buf);
    mb_free(m);
}

/* Tensors beyond the device's storage-buffer range stay on the CPU when
 * their size is known at load: an input too large (for Softmax: the
 * elementwise unary kernels take it in windows, vulkan_cases_bounds.c), and a MatMul and a
 * broadcasting Add whose inputs fit but whose output does not. Placement
 * only: nothing runs. */
static void limit_cases(const ox_vk_caps *caps) {
    int64_t big = (int64_t)(caps->max_storage_buffer_range / 4) + 1;
    if (big > INT32_MAX) big = (int64_t)INT32_MAX + 1;
    int64_t side = (int64_t)sqrt((double)big) + 1;
    for (int k = 0; k < 3; k++) {
        mb_model *m = mb_new(13);
        int64_t d[] = {big}, a[] = {side, 1}, b[] = {1, side};
        if (k == 0) {
            mb_input(m, "x", ONYX_FLOAT32, d, 1);
            mb_node(m, "Softmax", "x", "y");
        } else {
            mb_input(m, "a", ONYX_FLOAT32, a, 2);
            mb_input(m, "b", ONYX_FLOAT32, b, 2);
            mb_node(m, k == 1 ? "MatMul" : "Add", "a,b", "y");
        }
        mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
        size_t len = 0;
        uint8_t *buf = mb_serialize(m, &len);
        onyx_session *s = vc_session(buf, len, 1);
        if (s && vc_on_vulkan(s) != 0) {
            fprintf(stderr, "limit case %d: a tensor beyond %llu bytes was placed on vulkan\n", k,
                    (unsigned long long)caps->max_storage_buffer_range);
            check_failures++;
        }
        onyx_session_free(s);
        free(buf);
        mb_free(m);
    }
}

/* expect_wg: the masked invocation limit (0: the device's own, at least 256). */
static void check_caps(ox_ep *ep, int expect_masked, uint32_t expect_wg) {
    const ox_vk_caps *caps = ox_vulkan_ep_caps(ep);
    char line[1024];
    ox_vulkan_ep_describe(ep, line, sizeof line);
    printf("vulkan device: %s\n", line);
    CHECK(caps->api_version >= (1u << 22 | 1u << 12)); /* 1.1 */
    CHECK(caps->max_storage_buffer_range >= 1u << 16);
    uint32_t tile = 0, wg = ox_vulkan_ep_workgroup(ep, &tile);
    if (expect_wg) {
        /* the largest square tile within wg: 8 x 8 for 64, 4 x 4 for 32 */
        uint32_t want_tile = 1;
        while (4 * want_tile * want_tile <= expect_wg) want_tile *= 2;
        CHECK(caps->max_workgroup_invocations == expect_wg);
        CHECK(wg == expect_wg && tile == want_tile);
    } else {
        CHECK(caps->max_workgroup_invocations >= 256);
        CHECK(wg == 256 && tile == 16);
    }
    CHECK(caps->max_push_constants_size >= 128);
    CHECK(caps->device_name[0] != '\0');
    if (expect_masked) {
        CHECK(caps->masked == (OX_VK_MASK_INT64 | OX_VK_MASK_FP16 | OX_VK_MASK_SUBGROUP |
                               OX_VK_MASK_HOSTMAP));
        CHECK(!caps->shader_int64 && !caps->shader_float16 && !caps->storage_buffer_16bit);
        CHECK(caps->subgroup_size == 0 && !caps->subgroup_reduce);
        CHECK(!caps->host_mapped);
    } else {
        CHECK(caps->masked == 0);
    }
}

/* A session of Relu on {"vulkan", "cpu"} with these provider options
 * (key, value pairs); its creation status. */
static onyx_status *create_with_options(const char *const *kv, int n_kv, onyx_session **s) {
    int64_t d[] = {4};
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, d, 1);
    mb_output(m, "y", ONYX_FLOAT32, d, 1);
    mb_node(m, "Relu", "x", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session_options *o = NULL;
    onyx_status *st = onyx_session_options_create(&o);
    const char *providers[] = {"vulkan", "cpu"};
    if (!st) st = onyx_session_options_set_providers(o, providers, 2);
    for (int i = 0; !st && i + 1 < n_kv; i += 2)
        if (kv[i][0] != '@') st = onyx_session_options_set_provider_option(o, "vulkan", kv[i], kv[i + 1]);
    /* "@cache_dir" is the session's cache folder, not a provider option */
    for (int i = 0; !st && i + 1 < n_kv; i += 2)
        if (strcmp(kv[i], "@cache_dir") == 0) st = onyx_session_options_set_cache_dir(o, kv[i + 1]);
    if (!st) st = onyx_session_create_from_buffer(env, buf, len, o, s);
    onyx_session_options_free(o);
    free(buf);
    return st;
}

/* ONYX_VK_DISABLE or the disable option with a name it does not know, an
 * unknown option and a device index past the devices: each is the
 * caller's mistake, so the session fails naming it even though "cpu" is
 * listed (only a missing driver or device falls back). A valid device
 * index and disable option work. */
static void option_cases(void) {
    setenv("ONYX_VK_DISABLE", "int64,bogus", 1);
    ox_error err = {0};
    ox_ep *ep = ox_vulkan_ep_create(NULL, &err);
    CHECK(!ep);
    CHECK(strstr(err.msg, "ONYX_VK_DISABLE or the disable option names 'bogus'") != NULL);
    if (ep) ep->ops->destroy(ep);
    onyx_session *s = NULL;
    CHECK_FAILS(create_with_options(NULL, 0, &s), ONYX_INVALID_ARGUMENT, "names 'bogus'");
    unsetenv("ONYX_VK_DISABLE");
    const char *bad_disable[] = {"disable", "fp16+nonsense"};
    CHECK_FAILS(create_with_options(bad_disable, 2, &s), ONYX_INVALID_ARGUMENT, "names 'nonsense'");
    const char *bad_key[] = {"devcie", "0"};
    CHECK_FAILS(create_with_options(bad_key, 2, &s), ONYX_INVALID_ARGUMENT,
                "provider 'vulkan' has no option 'devcie' (its options: device, disable, place, pipeline_cache, max_buffer");
    const char *far[] = {"device", "7"};
    CHECK_FAILS(create_with_options(far, 2, &s), ONYX_INVALID_ARGUMENT, "vulkan: device 7 was asked for; ");
    const char *not_num[] = {"device", "gpu0"};
    CHECK_FAILS(create_with_options(not_num, 2, &s), ONYX_INVALID_ARGUMENT,
                "vulkan: option device='gpu0' is not a device index");
    /* set again, an option replaces its earlier value (device 7 is gone) */
    const char *bad_place[] = {"place", "everywhere"};
    CHECK_FAILS(create_with_options(bad_place, 2, &s), ONYX_INVALID_ARGUMENT,
                "vulkan: option place='everywhere' must be 'dense' (the default) or 'all'");
    /* by default a lone light node is no group worth two copies: the CPU
     * runs it */
    CHECK_OK(create_with_options(NULL, 0, &s));
    if (s) {
        CHECK(strcmp(onyx_session_node_provider(s, 0), "cpu") == 0);
        onyx_session_free(s);
    }
    const char *good[] = {"device", "7", "disable", "subgroup+hostmap", "device", "0", "place", "all"};
    CHECK_OK(create_with_options(good, 8, &s));
    if (s) {
        CHECK(strcmp(onyx_session_node_provider(s, 0), "vulkan") == 0);
        const ox_vk_caps *caps = ox_vulkan_ep_caps(s->eps[0]);
        CHECK((caps->masked & OX_VK_MASK_SUBGROUP) && (caps->masked & OX_VK_MASK_HOSTMAP));
        onyx_session_free(s);
    }
}

/* y = -(x @ w) for x of shape [rows, 16] and w [16, 2] on {"vulkan" with a 8 KiB
 * buffer budget and place=all, "cpu"}, checked against a plain product
 * (1e-5 relative + 1e-6 absolute: other summation orders); returns the
 * provider's stats after the run. Neg, which no pass fuses into the
 * product, keeps two nodes. */
static void decline_run(onyx_session *s, int64_t rows, const float *w, onyx_provider_stats *st) {
    int64_t dims[2] = {rows, 16};
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dims, 2, &tx));
    float *x = onyx_tensor_data(tx);
    for (int64_t i = 0; i < rows * 16; i++) x[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
    for (int64_t r = 0; ty && r < rows; r++)
        for (int c = 0; c < 2; c++) {
            double want = 0;
            for (int k = 0; k < 16; k++) want += (double)x[r * 16 + k] * w[k * 2 + c];
            want = -want;
            double got = ((const float *)onyx_tensor_data(ty))[r * 2 + c];
            CHECK(fabs(got - want) <= 1e-5 * fabs(want) + 1e-6);
        }
    CHECK_OK(onyx_session_provider_stats(s, "vulkan", st));
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
}

/* A tensor found too large only at run time (a symbolic dimension) makes
 * its node decline: the CPU runs that node on host copies, its output
 * goes back to the device for the next node (Neg, whose input fits), the provider counts the
 * fallback, and later runs with small inputs use the device again. */
static void decline_case(void) {
    int64_t xd[2] = {-1, 16}, wd[2] = {16, 2}, yd[2] = {-1, 2};
    float w[32];
    for (int i = 0; i < 32; i++) w[i] = (float)((i * 13) % 17) / 8.0f - 1.0f;
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, xd, 2);
    mb_init_float(m, "w", wd, 2, w);
    mb_node(m, "MatMul", "x,w", "h");
    mb_node(m, "Neg", "h", "y");
    mb_output(m, "y", ONYX_FLOAT32, yd, 2);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = option_session(buf, len, "max_buffer", "8192");
    free(buf);
    if (!s) return;
    CHECK(strcmp(onyx_session_node_provider(s, 0), "vulkan") == 0);
    onyx_provider_stats a, b, c;
    decline_run(s, 4, w, &a);   /* x of 256 bytes: all on the device */
    decline_run(s, 256, w, &b); /* x of 16 KiB: MatMul declines; h of 2 KiB stays */
    decline_run(s, 4, w, &c);
    CHECK(a.cpu_fallbacks == 0 && a.kernel_launches >= 2);
    CHECK(b.cpu_fallbacks == 1 && b.kernel_launches >= a.kernel_launches + 1);
    CHECK(c.cpu_fallbacks == 1 && c.kernel_launches >= b.kernel_launches + 2);
    onyx_session_free(s);
    /* a budget that is no byte count is the caller's mistake */
    const char *bad[] = {"max_buffer", "12kb"};
    CHECK_FAILS(create_with_options(bad, 2, &s), ONYX_INVALID_ARGUMENT,
                "vulkan: option max_buffer='12kb' is not a decimal count of at least 4096");
}

/* A pipeline the driver will not build (ONYX_VK_REFUSE_SHADERS plays the
 * driver) makes its nodes decline: MatMul and Softmax run on the CPU in
 * every run, Neg between them (no pass fuses it into the product) stays
 * on the device, and the results are the CPU provider's (1e-5 relative +
 * 1e-6 absolute). */
static void refused_shader_case(void) {
    int64_t xd[2] = {3, 5}, wd[2] = {5, 4}, yd[2] = {3, 4};
    float w[20], x[15];
    for (int i = 0; i < 20; i++) w[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
    for (int i = 0; i < 15; i++) x[i] = (float)((i * 5) % 9) / 4.0f - 1.0f;
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, xd, 2);
    mb_init_float(m, "w", wd, 2, w);
    mb_node(m, "MatMul", "x,w", "h");
    mb_node(m, "Neg", "h", "r");
    mb_node(m, "Softmax", "r", "y");
    mb_output(m, "y", ONYX_FLOAT32, yd, 2);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    setenv("ONYX_VK_REFUSE_SHADERS", "matmul,softmax,softmax_subgroup", 1);
    onyx_session *vk = vc_session(buf, len, 1), *cpu = vc_session(buf, len, 0);
    unsetenv("ONYX_VK_REFUSE_SHADERS");
    free(buf);
    onyx_tensor *tx = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, xd, 2, x, sizeof x, &tx));
    const char *in = "x", *out = "y";
    for (int run = 1; vk && cpu && run <= 2; run++) {
        onyx_tensor *yv = NULL, *yc = NULL;
        CHECK_OK(onyx_session_run(vk, &in, (const onyx_tensor *const *)&tx, 1, &out, &yv, 1));
        CHECK_OK(onyx_session_run(cpu, &in, (const onyx_tensor *const *)&tx, 1, &out, &yc, 1));
        for (int i = 0; yv && yc && i < 12; i++) {
            float a = ((const float *)onyx_tensor_data(yv))[i], b = ((const float *)onyx_tensor_data(yc))[i];
            CHECK(fabsf(a - b) <= 1e-5f * fabsf(b) + 1e-6f);
        }
        onyx_provider_stats st;
        CHECK_OK(onyx_session_provider_stats(vk, "vulkan", &st));
        CHECK(st.cpu_fallbacks == (uint64_t)(2 * run));
        CHECK(st.kernel_launches >= (uint64_t)run); /* Neg */
        onyx_tensor_free(yv);
        onyx_tensor_free(yc);
    }
    onyx_tensor_free(tx);
    onyx_session_free(vk);
    onyx_session_free(cpu);
}

/* The pipeline cache file: written when a session goes, read by the next
 * one on this device; a file for anything else (here: a damaged header)
 * is ignored, and the session still runs. */
static void pipeline_cache_case(void) {
    char path[] = "/tmp/onyx_vk_cacheXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    remove(path); /* the provider writes it; an empty file would be "damaged" too */
    const char *kv[] = {"pipeline_cache", path, "place", "all"};
    for (int round = 0; round < 3; round++) {
        onyx_session *s = NULL;
        CHECK_OK(create_with_options(kv, 4, &s));
        if (!s) break;
        ox_vk_stats st;
        ox_vulkan_ep_get_stats(s->eps[0], &st);
        /* round 0: no file yet; 1: the file of round 0; 2: damaged */
        CHECK(st.pipeline_cache_loaded == (round == 1));
        int64_t d[] = {4};
        onyx_tensor *x = NULL, *y = NULL;
        CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, d, 1, &x));
        for (int i = 0; i < 4; i++) ((float *)onyx_tensor_data(x))[i] = (float)i - 2.0f;
        const char *in = "x", *out = "y";
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1));
        if (y) CHECK(((float *)onyx_tensor_data(y))[0] == 0.0f && ((float *)onyx_tensor_data(y))[3] == 1.0f);
        onyx_tensor_free(x);
        onyx_tensor_free(y);
        onyx_session_free(s);
        if (round == 1) {
            /* flip a byte of the onyx version in the header */
            FILE *f = fopen(path, "r+b");
            CHECK(f != NULL);
            if (f) {
                fseek(f, 12, SEEK_SET);
                fputc('#', f);
                fclose(f);
            }
        }
    }
    remove(path);
    const char *empty[] = {"pipeline_cache", ""};
    onyx_session *s = NULL;
    CHECK_FAILS(create_with_options(empty, 2, &s), ONYX_INVALID_ARGUMENT,
                "vulkan: option pipeline_cache needs a file name");
}

/* Without the option, a session with a cache folder keeps the pipeline
 * cache there, one file per device and driver: the next session loads
 * it; a file whose driver version is not this driver's (a driver update)
 * is ignored and rewritten. */
static void pipeline_cache_default_case(void) {
    char dir[] = "/tmp/onyx_vk_cachedirXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const char *kv[] = {"@cache_dir", dir, "place", "all"};
    char pattern[128], path[256] = "";
    snprintf(pattern, sizeof pattern, "ls %s/vulkan/pipelines-*-onyx-*.bin 2>/dev/null", dir);
    for (int round = 0; round < 4; round++) {
        onyx_session *s = NULL;
        CHECK_OK(create_with_options(kv, 4, &s));
        if (!s) break;
        ox_vk_stats st;
        ox_vulkan_ep_get_stats(s->eps[0], &st);
        /* 0: none yet; 1: round 0's; 2: another driver's; 3: round 2's */
        CHECK(st.pipeline_cache_loaded == (round == 1 || round == 3));
        onyx_session_free(s);
        FILE *ls = popen(pattern, "r");
        if (ls && fgets(path, sizeof path, ls)) path[strcspn(path, "\n")] = 0;
        if (ls) pclose(ls);
        CHECK(path[0] != 0);
        if (round == 1 && path[0]) {
            /* the header's driver version (after magic, format, onyx
             * version, vendor and device ids) */
            FILE *f = fopen(path, "r+b");
            CHECK(f != NULL);
            if (f) {
                uint32_t driver = 0;
                CHECK(fseek(f, 36, SEEK_SET) == 0 && fread(&driver, 4, 1, f) == 1);
                driver ^= 1;
                CHECK(fseek(f, 36, SEEK_SET) == 0 && fwrite(&driver, 4, 1, f) == 1);
                fclose(f);
            }
        }
    }
    if (path[0]) remove(path);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/vulkan", dir);
    rmdir(sub);
    rmdir(dir);
}

static int run_unavailable(void) {
    ox_error err = {0};
    ox_ep *ep = ox_vulkan_ep_create(NULL, &err);
    CHECK(!ep);
    if (ep) {
        ep->ops->destroy(ep);
        fprintf(stderr, "a Vulkan device was found although none was expected\n");
        CHECK_DONE();
    }
    printf("creation failed as expected: %s\n", err.msg);
    CHECK(strncmp(err.msg, "vulkan: ", 8) == 0);
    /* {"vulkan", "cpu"}: runs on the CPU */
    vcase c;
    vc_begin(&c, "fallback", 13, TOL_EW);
    int64_t d[] = {3, 4}, w[] = {4, 2};
    vc_input(&c, "x", d, 2, -1, 1);
    vc_input(&c, "w", w, 2, -1, 1);
    mb_node(c.m, "MatMul", "x,w", "h");
    mb_node(c.m, "Relu", "h", "y");
    vc_run(&c, 0);
    /* {"vulkan"} alone: the device was asked for, so it is an error */
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    mb_node(m, "Relu", "x", "y");
    size_t len = 0;
    uint8_t *buf = mb_serialize(m, &len);
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *only[] = {"vulkan"};
    CHECK_OK(onyx_session_options_set_providers(o, only, 1));
    onyx_session *s = NULL;
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &s), ONYX_NOT_IMPLEMENTED,
                "provider 'vulkan': vulkan: ");
    onyx_session_free(s);
    onyx_session_options_free(o);
    free(buf);
    mb_free(m);
    CHECK_DONE();
}

int main(int argc, char **argv) {
    int masked = argc > 1 && strcmp(argv[1], "--expect-masked") == 0;
    int unavailable = argc > 1 && strcmp(argv[1], "--expect-unavailable") == 0;
    int bounded = argc > 1 && strcmp(argv[1], "--expect-bounded") == 0;
    uint32_t expect_wg = 0;
    if (argc > 2 && strcmp(argv[1], "--expect-wg") == 0) expect_wg = (uint32_t)atoi(argv[2]);
    if (argc > 1 && strcmp(argv[1], "--expect-wg") == 0 && (expect_wg < 32 || expect_wg > 256)) {
        fprintf(stderr, "FAILED: --expect-wg needs a size of 32 to 256\n");
        return 1;
    }
    CHECK_OK(onyx_env_create(&env));
    int found = 0;
    for (size_t i = 0; i < onyx_env_provider_count(env); i++)
        found += strcmp(onyx_env_provider_name(env, i), "vulkan") == 0;
    CHECK(found == 1);
    if (unavailable) {
        int rc = run_unavailable();
        onyx_env_free(env);
        return rc;
    }
    ox_error err = {0};
    ox_ep *probe = ox_vulkan_ep_create(NULL, &err);
    if (!probe) {
        const char *allow = getenv("ONYX_VK_ALLOW_NO_DEVICE");
        if (allow && strcmp(allow, "1") == 0) {
            printf("SKIPPED: no usable Vulkan device (%s); ONYX_VK_ALLOW_NO_DEVICE=1\n", err.msg);
            onyx_env_free(env);
            return SKIPPED;
        }
        fprintf(stderr,
                "FAILED: onyx was built with the Vulkan provider but it cannot start here: %s\n"
                "(set ONYX_VK_ALLOW_NO_DEVICE=1 where no Vulkan device is expected)\n",
                err.msg);
        onyx_env_free(env);
        return 1;
    }
    check_caps(probe, masked, expect_wg);
    if (bounded) {
        const ox_vk_caps *caps = ox_vulkan_ep_caps(probe);
        CHECK(caps->max_storage_buffer_range <= 16777216);
        for (int d = 0; d < 3; d++) CHECK(caps->max_workgroup_count[d] == 7);
    }
    keep_driver_loaded = probe;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unary_cases();
    binary_cases();
    matmul_cases();
    gemm_cases();
    softmax_cases();
    gather_cases();
    vulkan_nn_cases();
    vulkan_fused_cases();
    vulkan_data_cases();
    vulkan_index_cases();
    chain_case();
    reuse_case();
    capped_arena_case();
    half_weights_case();
    budget_case(1);
    budget_case(2);
    stream_limit_cases();
    late_indices_case();
    limit_cases(ox_vulkan_ep_caps(keep_driver_loaded));
    threads_case();
    if (!masked) option_cases();
    if (!masked) {
        pipeline_cache_case();
        pipeline_cache_default_case();
    }
    decline_case();
    if (!masked) refused_shader_case();
    /* its split counts are worked out for 256-invocation workgroups */
    if (!masked && !bounded && !expect_wg) vulkan_bounds_cases(keep_driver_loaded);
    printf("%ld dispatches split, into %ld slices\n", vc_split, vc_slices);
    if (bounded) CHECK(vc_split > 0 && vc_slices > vc_split);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%d cases in %.1f s\n", n_cases,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    for (int t = 0; t < VC_TOL_CLASSES; t++)
        printf("%s: max |diff| %.3g, max relative %.3g (|cpu| > 1e-3), worst diff / bound %.3f\n",
               VC_TOL_NAMES[t], max_abs[t], max_rel[t], worst[t]);
    onyx_env_free(env);
    CHECK_DONE();
}
