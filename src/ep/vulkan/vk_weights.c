/* Weights on the device (ox_ep_ops.upload_weight and reads_compact).
 * A float32 weight whose every value float16 holds exactly (a model
 * exported in float16 and promoted to float32 for the CPU) is stored as
 * float16, two to a 32-bit word: half the device memory and half the
 * bandwidth of its reads, with the same values, so the outputs are those
 * of the float32 weight bit for bit. The kernels that read weights
 * (Conv, ConvTranspose, MatMul, Gemm, onyx FusedConv and FusedMatMul:
 * input 1) have a variant reading that form (shaders/weights.glsl); the
 * planner stores a weight so only when every node reading it is one of
 * them. ONYX_VK_DISABLE=fp16 (or the
 * disable option) keeps every weight in float32. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "ep/vulkan/vk_internal.h"

/* 1 when float16 holds every value exactly (no infinities or NaNs). */
static int halves_exact(const float *f, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(f[i])) return 0;
        float back = ox_half_to_float(ox_float_to_half(f[i]));
        if (memcmp(&back, &f[i], sizeof back) != 0) return 0;
    }
    return 1;
}

int ox_vk_reads_compact(ox_ep *ep, const ir_node *node, int input) {
    (void)ep;
    static const char *const READERS[] = {"Conv", "ConvTranspose", "MatMul", "Gemm"};
    if (input != 1) return 0;
    if (strcmp(node->domain, "onyx") == 0)
        return strcmp(node->op_type, "FusedConv") == 0 || strcmp(node->op_type, "FusedMatMul") == 0;
    if (node->domain[0] != '\0') return 0;
    for (size_t i = 0; i < sizeof READERS / sizeof READERS[0]; i++)
        if (strcmp(node->op_type, READERS[i]) == 0) return 1;
    return 0;
}

void *ox_vk_upload_weight(ox_ep *ep, const ox_tensor *host, int compact, ox_error *err) {
    vk_ep *v = (vk_ep *)ep;
    int64_t n = ox_tensor_numel(host);
    int half = compact && host->dtype == ONYX_FLOAT32 && n > 0 && !(v->caps.masked & OX_VK_MASK_FP16) &&
               halves_exact(host->data, n);
    size_t bytes = half ? (size_t)(n + 1) / 2 * 4 : host->nbytes;
    vk_buf *b = ox_vk_buf_new(v, bytes, err);
    if (!b) return NULL;
    int rc;
    if (half) {
        uint16_t *h = calloc((size_t)(n + 1), sizeof *h);
        if (!h) {
            ox_vk_buf_free(v, b);
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            return NULL;
        }
        const float *f = host->data;
        for (int64_t i = 0; i < n; i++) h[i] = ox_float_to_half(f[i]);
        rc = ox_vk_write(v, b, 0, h, bytes, err);
        free(h);
        b->half = 1;
    } else {
        rc = ox_vk_write(v, b, 0, host->data, host->nbytes, err);
    }
    if (rc != 0) {
        ox_vk_buf_free(v, b);
        return NULL;
    }
    atomic_fetch_add(&v->weight_uploads, 1);
    if (half) atomic_fetch_add(&v->half_weights, 1);
    return b;
}

int ox_vk_read_tensor(vk_ep *v, const vk_buf *b, void *dst, size_t bytes, ox_error *err) {
    if (!b || !b->half) return ox_vk_read(v, b, 0, dst, bytes, err);
    /* float16 pairs widened back to the weight's float32 values */
    int64_t n = (int64_t)(bytes / sizeof(float));
    uint16_t *h = malloc((size_t)(n + 1) * sizeof *h);
    if (!h) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = ox_vk_read(v, b, 0, h, (size_t)n * sizeof *h, err);
    if (rc == 0) ox_half_to_float_n(h, dst, n);
    free(h);
    return rc;
}
