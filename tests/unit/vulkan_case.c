/* The Vulkan-versus-CPU case harness (see vulkan_case.h). */
#include "vulkan_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/vulkan/vk_ep.h"
#include "runtime/session.h"

int check_failures; /* shared by every file of test_vulkan_ep (check.h) */
onyx_env *env;
int n_cases;
long vc_split, vc_slices;
double worst[VC_TOL_CLASSES], max_abs[VC_TOL_CLASSES], max_rel[VC_TOL_CLASSES];
const char *const VC_TOL_NAMES[VC_TOL_CLASSES] = {"elementwise", "matmul, gemm, softmax, conv, reductions"};
static const double RTOL[VC_TOL_CLASSES] = {1e-5, 1e-4}, ATOL[VC_TOL_CLASSES] = {1e-6, 1e-5};

static uint32_t rng_state = 12345;
float frand(float lo, float hi) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(rng_state >> 8) / 16777216.0f;
}

int64_t count(const int64_t *dims, int rank) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return n;
}

void vc_begin(vcase *c, const char *label, int opset, int tol) {
    memset(c, 0, sizeof *c);
    c->label = label;
    c->m = mb_new(opset);
    c->tol = tol;
}

void vc_input(vcase *c, const char *name, const int64_t *dims, int rank, float lo, float hi) {
    CHECK(c->n_in < VC_MAX_IN);
    mb_input(c->m, name, ONYX_FLOAT32, dims, rank);
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dims, rank, &t));
    float *p = onyx_tensor_data(t);
    for (int64_t i = 0; i < count(dims, rank); i++) p[i] = frand(lo, hi);
    c->names[c->n_in] = name;
    c->ins[c->n_in++] = t;
}

void vc_input_int(vcase *c, const char *name, int dtype, const int64_t *dims, int rank,
                  const int64_t *vals) {
    CHECK(c->n_in < VC_MAX_IN);
    mb_input(c->m, name, dtype, dims, rank);
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create((onyx_dtype)dtype, dims, rank, &t));
    for (int64_t i = 0; i < count(dims, rank); i++) {
        if (dtype == ONYX_INT64) ((int64_t *)onyx_tensor_data(t))[i] = vals[i];
        else if (dtype == ONYX_BOOL) ((uint8_t *)onyx_tensor_data(t))[i] = vals[i] != 0;
        else ((int32_t *)onyx_tensor_data(t))[i] = (int32_t)vals[i];
    }
    c->names[c->n_in] = name;
    c->ins[c->n_in++] = t;
}

void vc_output(vcase *c, const char *name, int dtype) {
    CHECK(c->n_out < VC_MAX_OUT);
    c->out_names[c->n_out] = name;
    c->out_dtypes[c->n_out++] = dtype;
}

onyx_session *vc_session(const uint8_t *buf, size_t len, int with_vulkan) {
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *both[] = {"vulkan", "cpu"}, *cpu[] = {"cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, with_vulkan ? both : cpu, with_vulkan ? 2 : 1));
    /* every node a kernel takes stays on the device, however light */
    if (with_vulkan) CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", "place", "all"));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

int vc_on_vulkan(const onyx_session *s) {
    int k = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        k += strcmp(onyx_session_node_provider(s, i), "vulkan") == 0;
    return k;
}

static int same(float v, float c, int tol, double *ratio) {
    if (isnan(c) || isnan(v)) return isnan(c) && isnan(v);
    if (isinf(c) || isinf(v)) return v == c;
    double d = fabs((double)v - (double)c), bound = RTOL[tol] * fabs((double)c) + ATOL[tol];
    *ratio = d / bound;
    return d <= bound;
}

/* Output o of both runs: shapes equal, float32 within tolerance, other
 * types bit for bit. */
static void compare(const vcase *c, int o, onyx_tensor *yv, onyx_tensor *yc) {
    const char *name = c->out_names[o];
    if (onyx_tensor_dtype(yv) != onyx_tensor_dtype(yc) || onyx_tensor_rank(yv) != onyx_tensor_rank(yc)) {
        fprintf(stderr, "%s: output '%s': types or ranks differ\n", c->label, name);
        check_failures++;
        return;
    }
    for (int d = 0; d < onyx_tensor_rank(yc); d++)
        if (onyx_tensor_dims(yv)[d] != onyx_tensor_dims(yc)[d]) {
            fprintf(stderr, "%s: output '%s': shapes differ in dimension %d\n", c->label, name, d);
            check_failures++;
            return;
        }
    int64_t n = onyx_tensor_numel(yc), bad = 0;
    if (onyx_tensor_dtype(yc) != ONYX_FLOAT32) {
        size_t bytes = onyx_tensor_nbytes(yc);
        if (bytes && memcmp(onyx_tensor_data(yv), onyx_tensor_data(yc), bytes) != 0) {
            fprintf(stderr, "%s: output '%s' (%s) differs from the CPU's\n", c->label, name,
                    onyx_dtype_name(onyx_tensor_dtype(yc)));
            check_failures++;
        }
        return;
    }
    const float *pv = onyx_tensor_data(yv), *pc = onyx_tensor_data(yc);
    for (int64_t i = 0; i < n; i++) {
        double ratio = 0;
        if (!same(pv[i], pc[i], c->tol, &ratio)) {
            if (bad++ < 3)
                fprintf(stderr, "%s: output '%s' element %lld: vulkan %.9g, cpu %.9g\n", c->label,
                        name, (long long)i, pv[i], pc[i]);
        }
        if (ratio > worst[c->tol]) worst[c->tol] = ratio;
        double d = fabs((double)pv[i] - (double)pc[i]);
        if (isfinite(d) && d > max_abs[c->tol]) max_abs[c->tol] = d;
        if (isfinite(d) && fabs(pc[i]) > 1e-3 && d / fabs(pc[i]) > max_rel[c->tol])
            max_rel[c->tol] = d / fabs(pc[i]);
    }
    if (bad) {
        fprintf(stderr, "%s: output '%s': %lld of %lld elements differ\n", c->label, name,
                (long long)bad, (long long)n);
        check_failures++;
    }
}

void vc_run_expect(vcase *c, int expect_vk, const char *fail_needle) {
    /* ONYX_VK_CASES=TEXT: only the cases whose label holds TEXT (a quick
     * look at a few kernels on a borrowed device); other checks still run */
    const char *only = getenv("ONYX_VK_CASES");
    if (only && !strstr(c->label, only)) {
        mb_free(c->m);
        for (int i = 0; i < c->n_in; i++) onyx_tensor_free(c->ins[i]);
        return;
    }
    if (c->n_out == 0) vc_output(c, "y", ONYX_FLOAT32);
    for (int o = 0; o < c->n_out; o++) mb_output(c->m, c->out_names[o], c->out_dtypes[o], NULL, -1);
    size_t len = 0;
    uint8_t *buf = mb_serialize(c->m, &len);
    onyx_session *vk = vc_session(buf, len, 1), *cpu = vc_session(buf, len, 0);
    onyx_tensor *yv[VC_MAX_OUT] = {0}, *yc[VC_MAX_OUT] = {0};
    onyx_status *sv = NULL, *sc = NULL;
    n_cases++;
    if (!vk || !cpu) {
        fprintf(stderr, "%s: session creation failed\n", c->label);
        goto out;
    }
    int placed = vc_on_vulkan(vk);
    if (placed != expect_vk) {
        fprintf(stderr, "%s: %d nodes on vulkan, expected %d\n", c->label, placed, expect_vk);
        check_failures++;
    }
    ox_vk_stats before = {0}, after = {0};
    if (expect_vk) ox_vulkan_ep_get_stats(vk->eps[0], &before);
    sv = onyx_session_run(vk, c->names, (const onyx_tensor *const *)c->ins, (size_t)c->n_in,
                          c->out_names, yv, (size_t)c->n_out);
    sc = onyx_session_run(cpu, c->names, (const onyx_tensor *const *)c->ins, (size_t)c->n_in,
                          c->out_names, yc, (size_t)c->n_out);
    if (fail_needle) {
        if (!sv || !sc || !strstr(onyx_status_message(sv), fail_needle)) {
            fprintf(stderr, "%s: expected both runs to fail, vulkan with '%s'; got '%s' / '%s'\n",
                    c->label, fail_needle, sv ? onyx_status_message(sv) : "success",
                    sc ? onyx_status_message(sc) : "success");
            check_failures++;
        }
    } else if (sv || sc) {
        fprintf(stderr, "%s: run failed: vulkan '%s', cpu '%s'\n", c->label,
                sv ? onyx_status_message(sv) : "ok", sc ? onyx_status_message(sc) : "ok");
        check_failures++;
    } else {
        for (int o = 0; o < c->n_out; o++) compare(c, o, yv[o], yc[o]);
    }
    if (expect_vk && !fail_needle && !sv) {
        ox_vulkan_ep_get_stats(vk->eps[0], &after);
        vc_split += after.split_dispatches - before.split_dispatches;
        vc_slices += after.dispatch_slices - before.dispatch_slices;
        /* a node whose outputs are empty dispatches nothing */
        int64_t n_out = 0;
        for (int o = 0; o < c->n_out; o++) n_out += yc[o] ? onyx_tensor_numel(yc[o]) : 0;
        /* a lone reshaping node is a view of its input: no dispatch */
        int view = vk->graph->n_nodes == 1 && ox_op_output_is_reshape(&vk->graph->nodes[0]);
        if (view && after.kernel_runs != before.kernel_runs) {
            fprintf(stderr, "%s: the reshape dispatched a copy instead of being a view\n", c->label);
            check_failures++;
        } else if (!view && n_out > 0 && after.kernel_runs <= before.kernel_runs) {
            fprintf(stderr, "%s: no dispatch reached the device\n", c->label);
            check_failures++;
        }
        if (c->half_weights) {
            int on = !(ox_vulkan_ep_caps(vk->eps[0])->masked & OX_VK_MASK_FP16);
            if (after.half_weights != (on ? c->half_weights : 0)) {
                fprintf(stderr, "%s: %ld weights held as float16, expected %d\n", c->label, after.half_weights,
                        on ? c->half_weights : 0);
                check_failures++;
            }
        }
        /* what a run allocates it frees or keeps for the next run's
         * tensors; weights may stay on the device, one buffer each */
        if (after.live_buffers - after.kept_buffers > c->n_weights) {
            fprintf(stderr, "%s: %ld device buffers still allocated after the run (%ld kept)\n",
                    c->label, after.live_buffers, after.kept_buffers);
            check_failures++;
        }
    }
out:
    if (sv) onyx_status_free(sv);
    if (sc) onyx_status_free(sc);
    for (int o = 0; o < VC_MAX_OUT; o++) {
        onyx_tensor_free(yv[o]);
        onyx_tensor_free(yc[o]);
    }
    onyx_session_free(vk);
    onyx_session_free(cpu);
    free(buf);
    mb_free(c->m);
    for (int i = 0; i < c->n_in; i++) onyx_tensor_free(c->ins[i]);
}

void vc_run(vcase *c, int expect_vk) { vc_run_expect(c, expect_vk, NULL); }
