/* Exact 8-bit convolution (see conv_q8.h): per image and group, the
 * weights (Mg x Cg*kernel, one zero point per output channel) times the
 * im2col matrix of the input's bytes (Cg*kernel x output positions, the
 * input's zero point where a tap falls in the padding), through the 8-bit
 * GEMM straight into the output. */
#include "ep/cpu/kernels/conv_q8.h"

#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/gemm_q8.h"

/* One im2col row: tap (kernel coordinates kc) of one input channel xc
 * over every output position. */
static void cols_row(const conv_geom *g, const uint8_t *xc, const int64_t *kc, uint8_t pad, uint8_t *row) {
    if (g->r == 2) {
        const int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
        for (int64_t oh = 0; oh < OH; oh++) {
            uint8_t *dst = row + oh * OW;
            int64_t ih = oh * g->stride[0] - g->pb[0] + kc[0] * g->dil[0];
            if (ih < 0 || ih >= IH) {
                memset(dst, pad, (size_t)OW);
                continue;
            }
            const uint8_t *src = xc + ih * IW;
            int64_t iw = kc[1] * g->dil[1] - g->pb[1];
            for (int64_t ow = 0; ow < OW; ow++, iw += g->stride[1]) dst[ow] = iw >= 0 && iw < IW ? src[iw] : pad;
        }
        return;
    }
    /* any other spatial rank: each position's coordinates, last fastest */
    int64_t oc[OX_MAX_RANK] = {0};
    for (int64_t p = 0; p < g->out_sz; p++) {
        int64_t off = 0, inside = 1;
        for (int d = 0; d < g->r; d++) {
            int64_t i = oc[d] * g->stride[d] - g->pb[d] + kc[d] * g->dil[d];
            inside &= i >= 0 && i < g->in[d];
            off = off * g->in[d] + i;
        }
        row[p] = inside ? xc[off] : pad;
        for (int d = g->r - 1; d >= 0; d--) {
            if (++oc[d] < g->out[d]) break;
            oc[d] = 0;
        }
    }
}

static void cols_build(const conv_geom *g, const uint8_t *x, uint8_t pad, uint8_t *cols) {
    int64_t kc[OX_MAX_RANK] = {0};
    for (int64_t t = 0; t < g->k_sz; t++) {
        for (int64_t c = 0; c < g->Cg; c++)
            cols_row(g, x + c * g->in_sz, kc, pad, cols + (c * g->k_sz + t) * g->out_sz);
        for (int d = g->r - 1; d >= 0; d--) {
            if (++kc[d] < g->k[d]) break;
            kc[d] = 0;
        }
    }
}

int ox_conv_q8(ox_threadpool *pool, const ox_stop *stop, const conv_geom *g, const ox_tensor *X, int32_t xz,
               const ox_tensor *W, const int32_t *wz, int32_t *y) {
    const int64_t K = g->Cg * g->k_sz, P = g->out_sz;
    if (g->N == 0 || g->M == 0 || P == 0) return 0;
    size_t bytes;
    if (!ox_mul_size((size_t)K, (size_t)P, &bytes)) return -1;
    uint8_t *cols = malloc(bytes ? bytes : 1);
    if (!cols) return -1;
    const uint8_t pad = (uint8_t)xz; /* the zero point's byte, int8 or uint8 */
    int rc = 0;
    for (int64_t n = 0; rc == 0 && n < g->N; n++)
        for (int64_t grp = 0; rc == 0 && grp < g->G; grp++) {
            if (ox_stop_requested(stop)) break;
            const uint8_t *xg = (const uint8_t *)X->data + (n * g->C + grp * g->Cg) * g->in_sz;
            cols_build(g, xg, pad, cols);
            ox_q8_matrix a = {(const uint8_t *)W->data + grp * g->Mg * K, W->dtype == ONYX_INT8, K,
                              wz + grp * g->Mg, 1};
            ox_q8_matrix b = {cols, X->dtype == ONYX_INT8, P, &xz, 0};
            rc = ox_gemm_q8(pool, stop, g->Mg, P, K, &a, &b, y + (n * g->M + grp * g->Mg) * P, P);
        }
    free(cols);
    return rc;
}
