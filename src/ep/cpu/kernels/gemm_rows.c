/* The float32 GEMM's unpacked paths (see gemm_job.h): products too small
 * or too thin for the packed tiles of gemm.c, where A's rows meet B's
 * columns as dot products or row updates, and a row vector against
 * constant weights' pack. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/gemm_job.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_GEMM_X86 1
#endif

#define NR OX_GEMM_NR

static float dot_f32(const float *x, const float *y, int64_t n) {
    ox_v4f s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        ox_v4f a0, a1, b0, b1;
        memcpy(&a0, x + k, sizeof a0);
        memcpy(&a1, x + k + 4, sizeof a1);
        memcpy(&b0, y + k, sizeof b0);
        memcpy(&b1, y + k + 4, sizeof b1);
        s0 += a0 * b0;
        s1 += a1 * b1;
    }
    s0 += s1;
    float s = (s0[0] + s0[1]) + (s0[2] + s0[3]);
    for (; k < n; k++) s += x[k] * y[k];
    return s;
}

/* Four dot products of a with the rows b, b + ldb, b + 2 ldb, b + 3 ldb
 * into out: a fully connected layer's columns four at a time, so each
 * load of a serves four rows of weights (reading the weights is all
 * the time such a product takes). next: the four rows (same stride) to
 * ask the memory for meanwhile, or NULL. A row of a large layer is a
 * page or more, where the hardware's prefetchers start over: asking for
 * the next rows as these are read took MobileNetV3's classifier from
 * about 0.35 to 0.31 ms in the model, its weights coming from memory,
 * on an AMD Zen 4 machine. */
typedef void (*dot4_fn)(const float *a, const float *b, int64_t ldb, int64_t n, float *out,
                        const float *next);

static void dot4_portable(const float *a, const float *b, int64_t ldb, int64_t n, float *out,
                          const float *next) {
    (void)next;
    for (int r = 0; r < 4; r++) out[r] = dot_f32(a, b + r * ldb, n);
}

#ifdef OX_GEMM_X86
__attribute__((target("avx2,fma"))) static void dot4_avx2(const float *a, const float *b, int64_t ldb,
                                                          int64_t n, float *out, const float *next) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        /* one line of each next row per 16 floats */
        if (next && (k & 8) == 0)
            for (int r = 0; r < 4; r++) __builtin_prefetch(next + r * ldb + k, 0, 3);
        __m256 x = _mm256_loadu_ps(a + k);
        s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + k), s0);
        s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + ldb + k), s1);
        s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 2 * ldb + k), s2);
        s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 3 * ldb + k), s3);
    }
    /* lanes of the four sums pairwise, then the two halves: out[r] */
    __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(s0, s1), _mm256_hadd_ps(s2, s3));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1)));
    for (; k < n; k++)
        for (int r = 0; r < 4; r++) out[r] += a[k] * b[r * ldb + k];
}
#endif

static dot4_fn pick_dot4(void) {
#ifdef OX_GEMM_X86
    if (ox_gemm_avx2()) return dot4_avx2;
#endif
    return dot4_portable;
}

/* s[r] = a . row x + r of B for r < w (w at most 4), each by dot4's own
 * sequence: a ragged end as four copies of one row. A column's value then
 * does not depend on where the pool began the range it falls in. With
 * ahead set, the next four rows, when B (rows of B in all) has them,
 * are asked for meanwhile. */
static void dot_rows(dot4_fn dot4, const float *a, const float *B, int64_t ldb, int64_t K,
                     int64_t x, int64_t w, float *s, int64_t rows, int ahead) {
    if (w == 4) {
        dot4(a, B + x * ldb, ldb, K, s, ahead && x + 8 <= rows ? B + (x + 4) * ldb : NULL);
        return;
    }
    for (int64_t r = 0; r < w; r++) {
        float t[4];
        dot4(a, B + (x + r) * ldb, 0, K, t, NULL);
        s[r] = t[0];
    }
}

void ox_gemm_scale_rows(float *C, int64_t ldc, int64_t r0, int64_t r1, int64_t n, float beta) {
    for (int64_t i = r0; i < r1; i++) {
        float *c = C + i * ldc;
        if (beta == 0.0f)
            memset(c, 0, (size_t)n * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t x = 0; x < n; x++) c[x] *= beta;
    }
}

/* Rows [r0, r1) of C straight from A and B: dot products when op(B) has
 * contiguous columns, row updates (axpy) otherwise. */
static void gemm_rows_direct(const gemm_job_f32 *j, int64_t r0, int64_t r1) {
    ox_gemm_scale_rows(j->C, j->ldc, r0, r1, j->N, j->beta);
    for (int64_t i = r0; i < r1; i++) {
        if (ox_stop_requested(j->stop)) return;
        float *c = j->C + i * j->ldc;
        if (!j->ta && (j->tb || (j->N == 1 && j->ldb == 1))) {
            const float *a = j->A + i * j->lda;
            for (int64_t x = 0; x < j->N; x++) c[x] += j->alpha * dot_f32(a, j->B + x * j->ldb, j->K);
            continue;
        }
        for (int64_t k = 0; k < j->K; k++) {
            float av = j->ta ? j->A[k * j->lda + i] : j->A[i * j->lda + k];
            av *= j->alpha;
            if (av == 0.0f) continue;
            if (!j->tb) {
                ox_vec_axpy(c, j->B + k * j->ldb, av, j->N);
            } else {
                for (int64_t x = 0; x < j->N; x++) c[x] += av * j->B[x * j->ldb + k];
            }
        }
    }
}

void ox_gemm_rows_direct_range(void *arg, int64_t r0, int64_t r1) {
    gemm_rows_direct(arg, r0, r1);
}

/* One row of A times B, split over column ranges of the output. */
void ox_gemm_row_vector_range(void *arg, int64_t c0, int64_t c1) {
    const gemm_job_f32 *j = arg;
    float *c = j->C;
    for (int64_t x = c0; x < c1; x++) c[x] = j->beta == 0.0f ? 0.0f : c[x] * j->beta;
    if (j->tb && !j->ta) {
        dot4_fn dot4 = pick_dot4();
        for (int64_t x = c0; x < c1; x += 4) {
            const int64_t w = c1 - x < 4 ? c1 - x : 4;
            float s[4];
            dot_rows(dot4, j->A, j->B, j->ldb, j->K, x, w, s, j->N, 1);
            for (int64_t r = 0; r < w; r++) c[x + r] += j->alpha * s[r];
        }
        return;
    }
    if (j->tb) {
        for (int64_t x = c0; x < c1; x++) {
            float s = 0.0f;
            for (int64_t k = 0; k < j->K; k++) s += j->A[k * j->lda] * j->B[x * j->ldb + k];
            c[x] += j->alpha * s;
        }
        return;
    }
    for (int64_t k = 0; k < j->K; k++) {
        float av = j->alpha * (j->ta ? j->A[k * j->lda] : j->A[k]);
        ox_vec_axpy(c + c0, j->B + k * j->ldb + c0, av, c1 - c0);
    }
}

/* Few rows of A against a transposed B (a fully connected layer on a
 * small batch): columns [c0, c1) of C as dot products, so each row of B
 * is read once and nothing is packed. */
void ox_gemm_few_rows_tb_range(void *arg, int64_t c0, int64_t c1) {
    const gemm_job_f32 *j = arg;
    dot4_fn dot4 = pick_dot4();
    for (int64_t x = c0; x < c1; x += 4) {
        if (ox_stop_requested(j->stop)) return;
        const int64_t w = c1 - x < 4 ? c1 - x : 4;
        for (int64_t i = 0; i < j->M; i++) {
            float s[4];
            /* the first row of A reads B from memory, the others from cache */
            dot_rows(dot4, j->A + i * j->lda, j->B, j->ldb, j->K, x, w, s, j->N, i == 0);
            float *c = j->C + i * j->ldc + x;
            for (int64_t r = 0; r < w; r++) {
                float v = j->alpha * s[r];
                c[r] = j->beta == 0.0f ? v : v + j->beta * c[r];
            }
        }
    }
}

/* A row vector times constant weights (a fully connected layer at batch
 * 1) reads their pack: 16-column panels, slab after slab of K, so a task
 * reads its panels of each slab as one run of memory, where dot products
 * with the rows of a transposed B read eight streams at once (four rows
 * and the four asked for ahead). The weights come from memory, and one
 * stream is what the hardware prefetcher follows best: MobileNetV3's
 * 1024 x 1000 classifier on an AMD Zen 4, caches flushed before each
 * product, 0.20 -> 0.15 ms. panel_dot adds one panel's products over kc
 * rows of the slab to acc (16 sums): four partial sums, over k mod 4,
 * added in one order, so a column's value never depends on the split. */
typedef void (*panel_dot_fn)(const float *a, const float *bp, int64_t kc, float *acc);

static void panel_dot_portable(const float *a, const float *bp, int64_t kc, float *acc) {
    ox_v4f s[4][4] = {{{0}}};
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4, bp += 4 * NR)
        for (int r = 0; r < 4; r++)
            for (int q = 0; q < 4; q++) {
                ox_v4f b;
                memcpy(&b, bp + r * NR + 4 * q, sizeof b);
                s[r][q] += a[k + r] * b;
            }
    for (; k < kc; k++, bp += NR)
        for (int q = 0; q < 4; q++) {
            ox_v4f b;
            memcpy(&b, bp + 4 * q, sizeof b);
            s[0][q] += a[k] * b;
        }
    for (int q = 0; q < 4; q++) {
        ox_v4f t = (s[0][q] + s[1][q]) + (s[2][q] + s[3][q]), c;
        memcpy(&c, acc + 4 * q, sizeof c);
        c += t;
        memcpy(acc + 4 * q, &c, sizeof c);
    }
}

#ifdef OX_GEMM_X86
__attribute__((target("avx2,fma"))) static void panel_dot_avx2(const float *a, const float *bp, int64_t kc,
                                                               float *acc) {
    __m256 s[4][2];
    for (int r = 0; r < 4; r++) s[r][0] = s[r][1] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4, bp += 4 * NR)
        for (int r = 0; r < 4; r++) {
            const __m256 x = _mm256_broadcast_ss(a + k + r);
            s[r][0] = _mm256_fmadd_ps(x, _mm256_load_ps(bp + r * NR), s[r][0]);
            s[r][1] = _mm256_fmadd_ps(x, _mm256_load_ps(bp + r * NR + 8), s[r][1]);
        }
    for (; k < kc; k++, bp += NR) {
        const __m256 x = _mm256_broadcast_ss(a + k);
        s[0][0] = _mm256_fmadd_ps(x, _mm256_load_ps(bp), s[0][0]);
        s[0][1] = _mm256_fmadd_ps(x, _mm256_load_ps(bp + 8), s[0][1]);
    }
    for (int h = 0; h < 2; h++) {
        __m256 t = _mm256_add_ps(_mm256_add_ps(s[0][h], s[1][h]), _mm256_add_ps(s[2][h], s[3][h]));
        _mm256_storeu_ps(acc + 8 * h, _mm256_add_ps(_mm256_loadu_ps(acc + 8 * h), t));
    }
}
#endif

static panel_dot_fn pick_panel_dot(void) {
#ifdef OX_GEMM_X86
    if (ox_gemm_avx2()) return panel_dot_avx2;
#endif
    return panel_dot_portable;
}

/* Panels per group: the group's sums (64 x 16 floats) stay in L1. */
#define ROW_PANELS 64

/* Panels [p0, p1) of the pack times the row vector A, into C. */
void ox_gemm_row_vector_packed_range(void *arg, int64_t p0, int64_t p1) {
    const gemm_job_f32 *j = arg;
    const ox_gemm_packed_b *pb = j->pb;
    const panel_dot_fn dot = pick_panel_dot();
    float acc[ROW_PANELS * NR];
    for (int64_t g0 = p0; g0 < p1; g0 += ROW_PANELS) {
        if (ox_stop_requested(j->stop)) return;
        const int64_t g1 = p1 - g0 < ROW_PANELS ? p1 : g0 + ROW_PANELS;
        memset(acc, 0, sizeof(float) * (size_t)((g1 - g0) * NR));
        for (int64_t k0 = 0; k0 < pb->K; k0 += pb->kc) {
            const int64_t kc = pb->K - k0 < pb->kc ? pb->K - k0 : pb->kc;
            const float *slab = pb->data + k0 * pb->Np;
            for (int64_t p = g0; p < g1; p++) dot(j->A + k0, slab + p * NR * kc, kc, acc + (p - g0) * NR);
        }
        const int64_t c0 = g0 * NR, c1 = g1 * NR < j->N ? g1 * NR : j->N;
        for (int64_t x = c0; x < c1; x++) {
            const float v = j->alpha * acc[x - c0];
            j->C[x] = j->beta == 0.0f ? v : v + j->beta * j->C[x];
        }
    }
}
