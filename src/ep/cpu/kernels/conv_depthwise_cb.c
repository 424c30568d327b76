/* Depthwise convolution of small planes, eight channels at a time (see
 * conv_fast.h). On a 7x7 or 14x14 plane the per-plane kernel of
 * conv_depthwise.c spends most of its time around the arithmetic (phase
 * rows, a vector mostly past the row end, the set-up per plane). Here a
 * block of eight channels is first laid out channel-innermost in a
 * zero-padded tile (the padded plane, each position holding the eight
 * channels' values), so that one vector holds one position of eight
 * channels: each kernel tap is one load and one multiply-add per four
 * output positions, whatever the plane's width. The results are put back
 * into the planes row by row, then the planes get the epilogue. AVX2
 * (used on AVX-512 machines too); multiplier 1 only. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_DWC_X86 1
#endif

#define CB 8 /* channels per block: one AVX2 vector */
/* planes of at most this many outputs take this kernel */
#define DWC_MAX_PLANE 1024
/* the padded tile may not exceed this many floats (8 MiB) */
#define DWC_MAX_TILE ((int64_t)1 << 21)

typedef struct dwc_job {
    const ox_dw_args *a;
    const ox_stop *stop;
    int64_t PH, PW, blocks; /* tile rows and columns, channel blocks per image */
    int64_t slack;          /* floats past the tile that a last step may read */
    atomic_int failed;
} dwc_job;

#ifdef OX_DWC_X86
/* One block: channels [c0, c0 + nc) of image n. t: the tile, w8: the
 * block's weights tap-major, r8: one output row, channel-innermost. */
__attribute__((target("avx2,fma"))) static void dwc_block(const dwc_job *j, int64_t n, int64_t c0,
                                                          int nc, float *t, float *w8, float *r8) {
    const ox_dw_args *a = j->a;
    const int64_t PH = j->PH, PW = j->PW, taps = a->KH * a->KW, plane = a->OH * a->OW;
    memset(t, 0, sizeof(float) * (size_t)(PH * PW * CB + j->slack));
    for (int c = 0; c < nc; c++) {
        const float *xp = a->x + (n * a->C + c0 + c) * a->IH * a->IW;
        for (int64_t ih = 0; ih < a->IH; ih++) {
            int64_t py = ih + a->ph;
            if (py >= PH) break;
            for (int64_t iw = 0; iw < a->IW; iw++) {
                int64_t px = iw + a->pw;
                if (px >= PW) break;
                t[(py * PW + px) * CB + c] = xp[ih * a->IW + iw];
            }
        }
    }
    for (int64_t k = 0; k < taps; k++)
        for (int c = 0; c < CB; c++) w8[k * CB + c] = c < nc ? a->w[(c0 + c) * taps + k] : 0.0f;
    const int64_t xs = a->sw * CB, kx = a->dw * CB;
    for (int64_t oh = 0; oh < a->OH; oh++) {
        if (ox_stop_requested(j->stop)) return;
        /* four positions per step; a last step past the row end reads
         * the tile's slack (or the next row) and is not stored */
        for (int64_t ow = 0; ow < a->OW; ow += 4) {
            __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (int64_t kh = 0; kh < a->KH; kh++) {
                const float *tr = t + ((oh * a->sh + kh * a->dh) * PW + ow * a->sw) * CB;
                const float *wr = w8 + kh * a->KW * CB;
                for (int64_t kw = 0; kw < a->KW; kw++) {
                    const __m256 wv = _mm256_loadu_ps(wr + kw * CB);
                    const float *p = tr + kw * kx;
                    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(p), wv, s0);
                    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(p + xs), wv, s1);
                    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 2 * xs), wv, s2);
                    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 3 * xs), wv, s3);
                }
            }
            _mm256_storeu_ps(r8 + ow * CB, s0);
            _mm256_storeu_ps(r8 + (ow + 1) * CB, s1);
            _mm256_storeu_ps(r8 + (ow + 2) * CB, s2);
            _mm256_storeu_ps(r8 + (ow + 3) * CB, s3);
        }
        for (int c = 0; c < nc; c++) {
            float *yp = a->y + (n * a->C + c0 + c) * plane + oh * a->OW;
            for (int64_t o = 0; o < a->OW; o++) yp[o] = r8[o * CB + c];
        }
    }
    for (int c = 0; c < nc; c++) {
        int64_t m = c0 + c;
        float *yp = a->y + (n * a->C + m) * plane;
        const float *bias = a->bias ? a->bias + m : NULL;
        if (bias || a->z || a->act.kind != OX_ACT_NONE)
            /* one bias for the whole plane: the plane is handled as one row */
            ox_conv_epilogue(yp, plane, 1, plane, bias, a->z ? a->z + (n * a->C + m) * plane : NULL,
                             plane, &a->act, a->isa);
    }
}

static void dwc_tasks(void *arg, int64_t t0, int64_t t1) {
    dwc_job *j = arg;
    const ox_dw_args *a = j->a;
    size_t tile = (size_t)(j->PH * j->PW * CB + j->slack), w = (size_t)(a->KH * a->KW * CB),
           row = (size_t)((a->OW + 3) / 4 * 4 * CB);
    float *buf = aligned_alloc(64, ((tile + w + row) * sizeof(float) + 63) / 64 * 64);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t t = t0; t < t1; t++) {
        int64_t n = t / j->blocks, c0 = (t % j->blocks) * CB;
        int nc = (int)(a->C - c0 < CB ? a->C - c0 : CB);
        dwc_block(j, n, c0, nc, buf, buf + tile, buf + tile + w);
    }
    free(buf);
}
#endif

int ox_conv_depthwise_blocked_f32(ox_threadpool *pool, const ox_stop *stop, const ox_dw_args *a) {
#ifndef OX_DWC_X86
    (void)pool;
    (void)stop;
    (void)a;
    return 0;
#else
    int64_t outs;
    if (a->isa < OX_ISA_AVX2 || a->mult != 1 || !ox_mul_i64(a->OH, a->OW, &outs) ||
        outs > DWC_MAX_PLANE || a->ph < 0 || a->pw < 0)
        return 0;
    dwc_job j = {.a = a, .stop = stop};
    /* the padded extent the outputs read; the plane sizes are small here,
     * but the kernel extent and strides are attributes: checked, and
     * strides past 8 (no model's) left to the per-plane kernel */
    int64_t ph, pw, cells, eh, ew;
    if (a->sh < 1 || a->sw < 1 || a->sh > 8 || a->sw > 8 || !ox_muladd_i64(a->KH - 1, a->dh, 1, &eh) ||
        !ox_muladd_i64(a->KW - 1, a->dw, 1, &ew) || !ox_muladd_i64(a->OH - 1, a->sh, eh, &ph) ||
        !ox_muladd_i64(a->OW - 1, a->sw, ew, &pw) || !ox_mul_i64(ph, pw, &cells) ||
        cells > DWC_MAX_TILE / CB)
        return 0;
    j.PH = ph;
    j.PW = pw;
    /* a step's last position reads up to 3 * sw columns past the row */
    j.slack = 3 * a->sw * CB;
    j.blocks = (a->C + CB - 1) / CB;
    atomic_init(&j.failed, 0);
    ox_parallel_for(pool, a->N * j.blocks, 1, dwc_tasks, &j);
    return atomic_load(&j.failed) ? -1 : 1;
#endif
}
