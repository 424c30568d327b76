/* CPU kernel of CausalConvWithState (opset 27): a depthwise 1-D
 * convolution over [past_state, input] along the last axis, so output t
 * sees inputs t - k + 1 .. t, with an optional fused SiLU, and the last
 * k - 1 values of that concatenation handed back as the next state.
 * Works in float32; float16 and bfloat16 round the convolution to their
 * own precision before the activation, as a native kernel would. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/conv_extra.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

/* float32 view of a float tensor: its data, or a converted copy in
 * *owned; NULL only when out of memory. */
static const float *f32_view(const ox_tensor *t, float **owned) {
    *owned = NULL;
    if (t->dtype == ONYX_FLOAT32) return t->data;
    *owned = ox_cpu_to_f32(t);
    return *owned;
}

static float round_to(ox_dtype t, float v) {
    if (t == ONYX_FLOAT16) return ox_half_to_float(ox_float_to_half(v));
    if (t == ONYX_BFLOAT16) return ox_bf16_to_float(ox_float_to_bf16(v));
    return v;
}

int ox_cpu_causal_conv_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1);
    const ox_tensor *B = ox_cpu_input(ctx, 2), *P = ox_cpu_input(ctx, 3);
    ox_tensor *Y = ox_cpu_output(ctx, 0), *S = ox_cpu_output(ctx, 1);
    const char *op = "CausalConvWithState";
    if (!X || !W)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input and weight are required", op);
    ox_dtype dt = X->dtype;
    if (dt != ONYX_FLOAT32 && dt != ONYX_FLOAT16 && dt != ONYX_BFLOAT16)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported", op,
                              ox_dtype_name(dt));
    if (X->rank != 3 || W->rank != 3)
        return ox_kernel_fail(
            ctx, ONYX_INVALID_ARGUMENT,
            "%s: input (batch, channels, length) and weight (channels, 1, k) must be 3-D", op);
    int64_t NB = X->dims[0], C = X->dims[1], L = X->dims[2], K = W->dims[2];
    if (W->dims[0] != C || W->dims[1] != 1 || K < 1 || W->dtype != dt)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: weight must be (%lld, 1, k) with k >= 1 and the input's type",
                              op, (long long)C);
    if (B && (B->rank != 1 || B->dims[0] != C || B->dtype != dt))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: bias must be (%lld) of the input's type", op, (long long)C);
    int64_t sdims[3] = {NB, C, K - 1};
    if (P && (!ox_shape_equal(P->dims, P->rank, sdims, 3) || P->dtype != dt))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: past_state must be (%lld, %lld, %lld) of the input's type", op,
                              (long long)NB, (long long)C, (long long)(K - 1));
    if ((Y && !ox_shape_equal(Y->dims, Y->rank, X->dims, 3)) ||
        (S && !ox_shape_equal(S->dims, S->rank, sdims, 3)))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shapes do not match the inputs",
                              op);
    const char *act = ir_attr_string(ctx->node, "activation", "none");
    int silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
    if (!silu && strcmp(act, "none") != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: activation '%s' is not one of 'none', 'silu', 'swish'", op, act);
    int64_t T = K - 1 + L; /* padded length */
    float *xo, *wo, *bo = NULL, *po = NULL;
    const float *x = f32_view(X, &xo), *w = f32_view(W, &wo);
    const float *b = B ? f32_view(B, &bo) : NULL, *p = P ? f32_view(P, &po) : NULL;
    float *pad = malloc(sizeof(float) * (size_t)(T > 0 ? T : 1));
    float *y = Y && dt != ONYX_FLOAT32 ? malloc(sizeof(float) * (size_t)(NB * C * L + 1)) : NULL;
    float *s =
        S && dt != ONYX_FLOAT32 ? malloc(sizeof(float) * (size_t)(NB * C * (K - 1) + 1)) : NULL;
    int rc = 0;
    if (!x || !w || (B && !b) || (P && !p) || !pad || (Y && dt != ONYX_FLOAT32 && !y) ||
        (S && dt != ONYX_FLOAT32 && !s)) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    float *yf = Y ? (y ? y : Y->data) : NULL, *sf = S ? (s ? s : S->data) : NULL;
    for (int64_t n = 0; n < NB; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t plane = n * C + c;
            /* [past_state or zeros, input] */
            for (int64_t t = 0; t < K - 1; t++) pad[t] = p ? p[plane * (K - 1) + t] : 0.0f;
            memcpy(pad + K - 1, x + plane * L, sizeof(float) * (size_t)L);
            const float *wk = w + c * K;
            float bias = b ? b[c] : 0.0f;
            for (int64_t t = 0; t < L && yf; t++) {
                float acc = bias;
                for (int64_t k = 0; k < K; k++) acc += wk[k] * pad[t + k];
                acc = round_to(dt, acc);
                if (silu) acc = acc * (1.0f / (1.0f + expf(-acc)));
                yf[plane * L + t] = acc;
            }
            if (sf) memcpy(sf + plane * (K - 1), pad + L, sizeof(float) * (size_t)(K - 1));
        }
    if (y) ox_cpu_from_f32(Y, y);
    if (s) ox_cpu_from_f32(S, s);
done:
    free(xo);
    free(wo);
    free(bo);
    free(po);
    free(pad);
    free(y);
    free(s);
    return rc;
}
