/* CPU kernels of the random generators.
 *
 * Seeding (there is no process-wide generator):
 *  - with a 'seed' attribute, every run of the node restarts a generator
 *    from that seed alone, so the node is deterministic: the same model
 *    gives the same values on every run and in every session. Two nodes
 *    with the same seed draw the same stream, as with other frameworks.
 *  - without one, each run mixes a per-node call counter (atomic, kept in
 *    the kernel state so concurrent runs of one session never share a
 *    value), the node's address and the current time into a fresh seed.
 *
 * The stream itself is xoshiro256** seeded through splitmix64. Values are
 * not meant to match any other runtime: the ONNX spec calls these ops
 * non-deterministic across implementations even with a seed. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_random;

/* ---- generator ---- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(rng *g, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) g->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *g) {
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_unit(rng *g) { return (double)(rng_next(g) >> 11) * 0x1.0p-53; }

/* Uniform in (0, 1]: safe to take the logarithm of. */
static double rng_unit_open0(rng *g) { return ((double)(rng_next(g) >> 11) + 1.0) * 0x1.0p-53; }

typedef struct random_state {
    atomic_uint_fast64_t calls;
} random_state;

static int random_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)in;
    random_state *st = malloc(sizeof *st);
    if (!st) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    atomic_init(&st->calls, 0);
    *state = st;
    return 0;
}

static void random_release(void *state) { free(state); }

static uint64_t mix64(uint64_t v) {
    uint64_t x = v;
    return splitmix64(&x);
}

static void seed_for_run(ox_kernel_ctx *ctx, rng *g) {
    const ir_attr *a = ir_node_attr(ctx->node, "seed");
    if (a) {
        float f = a->f;
        if (f == 0.0f) f = 0.0f; /* -0 and +0 are the same seed */
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        rng_seed(g, 0x5eedULL << 32 | bits);
        return;
    }
    random_state *st = ctx->state;
    uint64_t count = st ? (uint64_t)atomic_fetch_add(&st->calls, 1) : 0;
    struct timespec ts = {0, 0};
    timespec_get(&ts, TIME_UTC);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    /* The stack address varies between threads when no state exists. */
    uint64_t where = (uint64_t)(uintptr_t)ctx->node ^ rotl((uint64_t)(uintptr_t)&ts, 29);
    rng_seed(g, mix64(count) ^ rotl(mix64(where), 17) ^ rotl(mix64(now), 41));
}

/* ---- output writing ---- */

static void put(void *data, ox_dtype t, size_t i, double v) {
    switch (t) {
    case ONYX_FLOAT32: ((float *)data)[i] = (float)v; break;
    case ONYX_FLOAT64: ((double *)data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)data)[i] = ox_float_to_half((float)v); break;
    case ONYX_BFLOAT16: ((uint16_t *)data)[i] = ox_float_to_bf16((float)v); break;
    default: ox_set_f64(data, t, i, v); break;
    }
}

static int out_float_ok(const ox_tensor *y) {
    return y->dtype == ONYX_FLOAT16 || y->dtype == ONYX_FLOAT32 || y->dtype == ONYX_FLOAT64 ||
           y->dtype == ONYX_BFLOAT16;
}

static ox_tensor *the_output(ox_kernel_ctx *ctx) { return ctx->n_outputs > 0 ? ctx->outputs[0] : NULL; }

static int check_float_out(ox_kernel_ctx *ctx, const ox_tensor *y) {
    if (!out_float_ok(y))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: output dtype %s is not float16/32/64 or bfloat16",
                              ctx->node->op_type, ox_dtype_name(y->dtype));
    return 0;
}

/* ---- RandomNormal(Like) ---- */

static int k_normal(ox_kernel_ctx *ctx) {
    ox_tensor *y = the_output(ctx);
    if (!y) return 0;
    if (check_float_out(ctx, y) != 0) return -1;
    double mean = ir_attr_float(ctx->node, "mean", 0.0f);
    double scale = ir_attr_float(ctx->node, "scale", 1.0f);
    rng g;
    seed_for_run(ctx, &g);
    size_t n = (size_t)ox_tensor_numel(y);
    const double two_pi = 6.283185307179586476925286766559;
    /* Box-Muller yields two independent normals per pair of uniforms. */
    for (size_t i = 0; i < n; i += 2) {
        double r = sqrt(-2.0 * log(rng_unit_open0(&g)));
        double th = two_pi * rng_unit(&g);
        put(y->data, y->dtype, i, mean + scale * r * cos(th));
        if (i + 1 < n) put(y->data, y->dtype, i + 1, mean + scale * r * sin(th));
    }
    return 0;
}

/* ---- RandomUniform(Like) ---- */

static int k_uniform(ox_kernel_ctx *ctx) {
    ox_tensor *y = the_output(ctx);
    if (!y) return 0;
    if (check_float_out(ctx, y) != 0) return -1;
    double low = ir_attr_float(ctx->node, "low", 0.0f);
    double high = ir_attr_float(ctx->node, "high", 1.0f);
    if (!(low <= high) || !isfinite(low) || !isfinite(high))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: low (%g) must be finite and <= high (%g)",
                              ctx->node->op_type, low, high);
    rng g;
    seed_for_run(ctx, &g);
    size_t n = (size_t)ox_tensor_numel(y);
    double span = high - low;
    if (y->dtype == ONYX_FLOAT32) {
        float *o = y->data;
        float hi = (float)high, lo = (float)low;
        for (size_t i = 0; i < n; i++) {
            float v = (float)(low + span * rng_unit(&g));
            /* Rounding to float can reach `high`; keep the interval half-open. */
            if (v >= hi && hi > lo) v = nextafterf(hi, lo);
            o[i] = v;
        }
        return 0;
    }
    if (y->dtype == ONYX_FLOAT16 || y->dtype == ONYX_BFLOAT16) {
        int bf = y->dtype == ONYX_BFLOAT16;
        uint16_t *o = y->data;
        for (size_t i = 0; i < n; i++) {
            float v = (float)(low + span * rng_unit(&g));
            uint16_t hb = bf ? ox_float_to_bf16(v) : ox_float_to_half(v);
            float back = bf ? ox_bf16_to_float(hb) : ox_half_to_float(hb);
            /* Same for the 16-bit types (sign-magnitude bit patterns): step
             * one ulp towards low when rounding hit high. */
            if (back >= high && high > low) hb = (hb & 0x8000) ? hb + 1 : hb ? hb - 1 : 0x8001;
            o[i] = hb;
        }
        return 0;
    }
    double *o = y->data;
    for (size_t i = 0; i < n; i++) o[i] = low + span * rng_unit(&g);
    return 0;
}

/* ---- Bernoulli ---- */

static double get_prob(const ox_tensor *x, size_t i) {
    switch (x->dtype) {
    case ONYX_FLOAT32: return ((const float *)x->data)[i];
    case ONYX_FLOAT64: return ((const double *)x->data)[i];
    default: return ox_get_f64(x->data, x->dtype, i);
    }
}

static int k_bernoulli(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    ox_tensor *y = the_output(ctx);
    if (!x) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Bernoulli: input is required");
    if (!y) return 0;
    if (x->kind != OX_KIND_TENSOR || !(x->dtype == ONYX_FLOAT16 || x->dtype == ONYX_FLOAT32 ||
                                       x->dtype == ONYX_FLOAT64 || x->dtype == ONYX_BFLOAT16))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Bernoulli: input must be a float16/32/64 or bfloat16 tensor");
    size_t n = (size_t)ox_tensor_numel(x);
    if ((size_t)ox_tensor_numel(y) != n)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Bernoulli: output size does not match the input");
    for (size_t i = 0; i < n; i++) {
        double p = get_prob(x, i);
        if (!(p >= 0.0 && p <= 1.0))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Bernoulli: probability %g at index %zu is outside [0, 1]", p, i);
    }
    rng g;
    seed_for_run(ctx, &g);
    for (size_t i = 0; i < n; i++) put(y->data, y->dtype, i, rng_unit(&g) < get_prob(x, i) ? 1.0 : 0.0);
    return 0;
}

/* ---- Multinomial ---- */

static int k_multinomial(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    ox_tensor *y = the_output(ctx);
    if (!x) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Multinomial: input is required");
    if (!y) return 0;
    if (x->kind != OX_KIND_TENSOR || x->rank != 2 || !ox_dtype_is_float(x->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Multinomial: input must be a 2-D float tensor");
    if (y->dtype != ONYX_INT32 && y->dtype != ONYX_INT64)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Multinomial: output must be int32 or int64");
    int64_t batch = x->dims[0], classes = x->dims[1];
    int64_t samples = y->rank == 2 ? y->dims[1] : -1;
    if (y->rank != 2 || y->dims[0] != batch)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Multinomial: output has the wrong shape");
    if (batch == 0 || samples == 0) return 0;
    if (classes == 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Multinomial: class_size is 0, nothing to sample from");
    double *cum = malloc((size_t)classes * sizeof *cum);
    if (!cum) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
    rng g;
    seed_for_run(ctx, &g);
    for (int64_t b = 0; b < batch; b++) {
        size_t row = (size_t)(b * classes);
        /* Inputs are unnormalised log-probabilities: subtract the row max
         * before exp so large logits do not overflow. */
        double mx = -INFINITY;
        for (int64_t k = 0; k < classes; k++) {
            double v = get_prob(x, row + (size_t)k);
            if (isnan(v)) {
                free(cum);
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Multinomial: row %lld holds NaN",
                                      (long long)b);
            }
            if (v > mx) mx = v;
        }
        if (mx == INFINITY || mx == -INFINITY) {
            free(cum);
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Multinomial: row %lld has no finite positive-probability outcome "
                                  "(all -inf, or +inf present)",
                                  (long long)b);
        }
        double total = 0.0;
        for (int64_t k = 0; k < classes; k++) {
            total += exp(get_prob(x, row + (size_t)k) - mx);
            cum[k] = total;
        }
        for (int64_t s = 0; s < samples; s++) {
            double u = rng_unit(&g) * total;
            /* First class whose cumulative weight exceeds u. */
            int64_t lo = 0, hi = classes - 1;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cum[mid] > u)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            size_t at = (size_t)(b * samples + s);
            if (y->dtype == ONYX_INT32)
                ((int32_t *)y->data)[at] = (int32_t)lo;
            else
                ((int64_t *)y->data)[at] = lo;
        }
    }
    free(cum);
    return 0;
}

/* ---- supports ---- */

static int float_in(const ir_type *const *inputs, int n_inputs) {
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_UNDEFINED || t == ONYX_FLOAT16 || t == ONYX_FLOAT32 || t == ONYX_FLOAT64 ||
           t == ONYX_BFLOAT16;
}

static int supports_prob_input(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    return float_in(inputs, n_inputs);
}

static const ox_kernel_def KERNELS[] = {
    {"", "RandomNormal", 1, 22, k_normal, NULL, random_init, random_release, NULL},
    {"", "RandomUniform", 1, 22, k_uniform, NULL, random_init, random_release, NULL},
    {"", "RandomNormalLike", 1, 22, k_normal, NULL, random_init, random_release, NULL},
    {"", "RandomUniformLike", 1, 22, k_uniform, NULL, random_init, random_release, NULL},
    {"", "Bernoulli", 15, 22, k_bernoulli, supports_prob_input, random_init, random_release, NULL},
    {"", "Multinomial", 7, 22, k_multinomial, supports_prob_input, random_init, random_release, NULL},
};

const ox_kernel_table ox_cpu_kernels_random = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
