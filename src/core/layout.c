#include "core/layout.h"

/* Positions go in runs of 64, so that the blocked side of a run (4 KiB)
 * stays in L1 while the 16 planes pass. */
#define RUN 64

int64_t ox_layout_block_at(int64_t C, int64_t S, int64_t n, int64_t cb, int64_t *blk, int64_t *pl) {
    const int64_t Cb = (C + OX_CHANNEL_BLOCK - 1) / OX_CHANNEL_BLOCK, c0 = cb * OX_CHANNEL_BLOCK;
    *blk = (n * Cb + cb) * S * OX_CHANNEL_BLOCK;
    *pl = (n * C + c0) * S;
    return C - c0 < OX_CHANNEL_BLOCK ? C - c0 : OX_CHANNEL_BLOCK;
}

void ox_layout_block(const float *planar, float *blocked, int64_t C, int64_t S, int64_t n, int64_t cb) {
    int64_t bo, po;
    const int64_t cn = ox_layout_block_at(C, S, n, cb, &bo, &po);
    for (int64_t p0 = 0; p0 < S; p0 += RUN) {
        const int64_t pn = S - p0 < RUN ? S - p0 : RUN;
        for (int64_t c = 0; c < OX_CHANNEL_BLOCK; c++) {
            float *b = blocked + bo + p0 * OX_CHANNEL_BLOCK + c;
            const float *s = planar + po + c * S + p0;
            for (int64_t p = 0; p < pn; p++) b[p * OX_CHANNEL_BLOCK] = c < cn ? s[p] : 0.0f;
        }
    }
}

void ox_layout_unblock(const float *blocked, float *planar, int64_t C, int64_t S, int64_t n, int64_t cb) {
    int64_t bo, po;
    const int64_t cn = ox_layout_block_at(C, S, n, cb, &bo, &po);
    for (int64_t p0 = 0; p0 < S; p0 += RUN) {
        const int64_t pn = S - p0 < RUN ? S - p0 : RUN;
        for (int64_t c = 0; c < cn; c++) {
            const float *b = blocked + bo + p0 * OX_CHANNEL_BLOCK + c;
            float *d = planar + po + c * S + p0;
            for (int64_t p = 0; p < pn; p++) d[p] = b[p * OX_CHANNEL_BLOCK];
        }
    }
}

ox_tensor *ox_layout_unblocked_copy(const ox_tensor *t, int64_t C, ox_error *err) {
    const int64_t Cb = (C + OX_CHANNEL_BLOCK - 1) / OX_CHANNEL_BLOCK;
    if (t->kind != OX_KIND_TENSOR || t->dtype != ONYX_FLOAT32 || t->rank < 4 || C < 1 || t->dims[1] != Cb ||
        t->dims[t->rank - 1] != OX_CHANNEL_BLOCK) {
        ox_fail(err, ONYX_INVALID_ARGUMENT, "not a channel-blocked float32 tensor of %lld channels", (long long)C);
        return NULL;
    }
    int64_t dims[OX_MAX_RANK], S = 1;
    for (int d = 0; d < t->rank - 1; d++) dims[d] = t->dims[d];
    dims[1] = C;
    for (int d = 2; d < t->rank - 1; d++) S *= t->dims[d];
    ox_tensor *p = ox_tensor_new(ONYX_FLOAT32, dims, t->rank - 1, err);
    if (!p) return NULL;
    for (int64_t n = 0; n < t->dims[0]; n++)
        for (int64_t cb = 0; cb < Cb; cb++) ox_layout_unblock(t->data, p->data, C, S, n, cb);
    return p;
}
