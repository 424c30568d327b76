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
            /* the taps inside the row: ow in [lo, hi) */
            const int64_t s = g->stride[1], iw0 = kc[1] * g->dil[1] - g->pb[1];
            int64_t lo = iw0 >= 0 ? 0 : (-iw0 + s - 1) / s;
            int64_t hi = iw0 >= IW ? 0 : (IW - iw0 + s - 1) / s;
            if (hi > OW) hi = OW;
            if (lo > hi) lo = hi;
            const uint8_t *src = xc + ih * IW + iw0;
            memset(dst, pad, (size_t)lo);
            if (s == 1)
                memcpy(dst + lo, src + lo, (size_t)(hi - lo));
            else
                for (int64_t ow = lo; ow < hi; ow++) dst[ow] = src[ow * s];
            memset(dst + hi, pad, (size_t)(OW - hi));
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

typedef struct cols_job {
    const conv_geom *g;
    const uint8_t *x;
    uint8_t pad;
    uint8_t *cols;
} cols_job;

/* rows [r0, r1) of the im2col matrix, row c * k_sz + t */
static void cols_rows(void *arg, int64_t r0, int64_t r1) {
    const cols_job *j = arg;
    const conv_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t c = r / g->k_sz, t = r % g->k_sz, kc[OX_MAX_RANK];
        for (int d = g->r - 1; d >= 0; d--) {
            kc[d] = t % g->k[d];
            t /= g->k[d];
        }
        cols_row(g, j->x + c * g->in_sz, kc, j->pad, j->cols + r * g->out_sz);
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
            cols_job cj = {g, xg, pad, cols};
            ox_parallel_for(pool, K, P >= 4096 ? 1 : 4096 / P, cols_rows, &cj);
            ox_q8_matrix a = {(const uint8_t *)W->data + grp * g->Mg * K, W->dtype == ONYX_INT8, K,
                              wz + grp * g->Mg, 1};
            ox_q8_matrix b = {cols, X->dtype == ONYX_INT8, P, &xz, 0};
            rc = ox_gemm_q8(pool, stop, g->Mg, P, K, &a, &b, y + (n * g->M + grp * g->Mg) * P, P);
        }
    free(cols);
    return rc;
}
