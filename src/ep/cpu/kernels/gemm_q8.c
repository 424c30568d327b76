/* Exact 8-bit products (see gemm_q8.h).
 *
 * Both paths work on zero-point-shifted operands. The VNNI path first
 * brings every operand to the signedness vpdpbusd wants (B unsigned, A
 * signed) by flipping the top bit, which moves the zero point by 128:
 * (a - za) is unchanged. It then expands
 *   sum_k (a - za)(b - zb) = S - zb * rowsum(a) - za * (colsum(b) - K * zb)
 * with S = sum_k a * b from the dot products, all in wrapping 32-bit
 * arithmetic. */
#include "ep/cpu/kernels/gemm_q8.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_Q8_X86 1
#endif

/* float32 path: runs of K short enough that every partial sum of
 * products (each below 2^16 in magnitude) stays an exact float32 */
#define K_RUN 256
/* VNNI path: a register tile is ROWS rows of A by 32 columns of B (two
 * vectors of 16 int32 sums); tasks take ROW_BLOCK rows of one panel */
#define ROWS 8
#define PANEL 32
#define ROW_BLOCK 64
/* the fewest 8-bit products worth a task of their own (about 10 us) */
#define TASK_MACS (1 << 20)

enum { PATH_FLOAT = 0, PATH_VNNI = 1 };

struct ox_q8_packed_b {
    int path;
    int64_t K, N;
    /* PATH_FLOAT: K x N floats b - zb */
    float *f;
    /* PATH_VNNI: K4 = K rounded up to 4, Np = N rounded up to PANEL;
     * panels of PANEL columns one after another (see pack_panel); per
     * column the shifted zero point zb and d = colsum(b) - K * zb */
    int64_t K4, Np;
    uint8_t *b;
    int32_t *zb, *d;
};

static int q8_path(void) {
#ifdef OX_Q8_X86
    if (ox_cpu_isa_active() == OX_ISA_AVX512 && __builtin_cpu_supports("avx512vnni")) return PATH_VNNI;
#endif
    return PATH_FLOAT;
}

const char *ox_gemm_q8_path(void) { return q8_path() == PATH_VNNI ? "avx512-vnni" : "float32"; }

static inline int32_t q8_at(const ox_q8_matrix *x, int64_t i) {
    return x->is_signed ? ((const int8_t *)x->data)[i] : ((const uint8_t *)x->data)[i];
}

static inline int32_t q8_zero(const ox_q8_matrix *x, int64_t line) {
    return x->zero ? x->zero[x->zero_per_line ? line : 0] : 0;
}

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static void *alloc_bytes(int64_t count, size_t size) {
    size_t n;
    if (count < 0 || !ox_mul_size((size_t)count, size, &n)) return NULL;
    return malloc(n ? n : 1);
}

void ox_q8_packed_b_free(ox_q8_packed_b *p) {
    if (!p) return;
    free(p->f);
    free(p->b);
    free(p->zb);
    free(p->d);
    free(p);
}

static int pack_float(ox_q8_packed_b *p, const ox_q8_matrix *B) {
    int64_t K = p->K, N = p->N;
    if (!(p->f = alloc_bytes(K * N, sizeof(float)))) return -1;
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++) p->f[k * N + n] = (float)(q8_at(B, k * B->ld + n) - q8_zero(B, n));
    return 0;
}

#ifdef OX_Q8_X86
/* Four rows of a whole panel (PANEL bytes each, from s with row stride
 * ld) interleaved into PANEL groups of 4 bytes at dst, top bits flipped
 * by flip, and each group's sum added to sum[]. Only the VNNI path packs
 * panels, so the machine has AVX-512 BW and VNNI. */
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2"))) static void
pack_rows4(const uint8_t *s, int64_t ld, uint8_t flip, uint8_t *dst, uint32_t *sum) {
    const __m256i f = _mm256_set1_epi8((char)flip);
    const __m256i r0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)s), f);
    const __m256i r1 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(s + ld)), f);
    const __m256i r2 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(s + 2 * ld)), f);
    const __m256i r3 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(s + 3 * ld)), f);
    /* per 128-bit lane: bytes of rows 0,1 then 2,3 paired, then the
     * pairs paired: each 32-bit group is one column's four rows */
    const __m256i lo01 = _mm256_unpacklo_epi8(r0, r1), hi01 = _mm256_unpackhi_epi8(r0, r1);
    const __m256i lo23 = _mm256_unpacklo_epi8(r2, r3), hi23 = _mm256_unpackhi_epi8(r2, r3);
    const __m256i c0 = _mm256_unpacklo_epi16(lo01, lo23), c4 = _mm256_unpackhi_epi16(lo01, lo23);
    const __m256i c8 = _mm256_unpacklo_epi16(hi01, hi23), c12 = _mm256_unpackhi_epi16(hi01, hi23);
    /* c0 holds columns 0-3 and 16-19, c4 4-7 and 20-23, ... */
    const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(c0, c4, 0x20)),
                                         _mm256_permute2x128_si256(c8, c12, 0x20), 1);
    const __m512i b = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(c0, c4, 0x31)),
                                         _mm256_permute2x128_si256(c8, c12, 0x31), 1);
    _mm512_storeu_si512(dst, a);
    _mm512_storeu_si512(dst + 64, b);
    const __m512i ones = _mm512_set1_epi8(1);
    _mm512_storeu_si512(sum, _mm512_dpbusd_epi32(_mm512_loadu_si512(sum), a, ones));
    _mm512_storeu_si512(sum + 16, _mm512_dpbusd_epi32(_mm512_loadu_si512(sum + 16), b, ones));
}
#endif

/* Columns [n0, n0 + PANEL) of B for the VNNI tile: K4 / 4 groups of
 * PANEL x 4 bytes, column c's bytes of k = 4g..4g+3 at g * PANEL * 4 +
 * c * 4, in unsigned form (an int8 becomes uint8 by adding 128, that is
 * by flipping its top bit, and so does its zero point), 0 beyond K and N;
 * and per column zb and d (0 beyond N). */
static void pack_panel(const ox_q8_matrix *B, int64_t K, int64_t N, int64_t n0, uint8_t *dst, int32_t *zb,
                       int32_t *d) {
    const int64_t K4 = round_up(K, 4);
    const int cols = N - n0 < PANEL ? (int)(N - n0) : PANEL;
    const uint8_t flip = B->is_signed ? 0x80 : 0;
    const uint8_t *src = B->data;
    uint32_t sum[PANEL] = {0};
    memset(dst, 0, (size_t)(K4 * PANEL));
    int64_t k = 0;
#ifdef OX_Q8_X86
    if (cols == PANEL)
        for (; k + 4 <= K; k += 4) pack_rows4(src + k * B->ld + n0, B->ld, flip, dst + k * PANEL, sum);
#endif
    for (; k < K; k++) {
        uint8_t *row = dst + (k / 4) * PANEL * 4 + (k & 3);
        const uint8_t *s = src + k * B->ld + n0;
        for (int c = 0; c < cols; c++) {
            row[c * 4] = s[c] ^ flip;
            sum[c] += row[c * 4];
        }
    }
    const int32_t shift = B->is_signed ? 128 : 0;
    for (int c = 0; c < PANEL; c++) {
        uint32_t z = c < cols ? (uint32_t)(q8_zero(B, n0 + c) + shift) : 0;
        zb[c] = (int32_t)z;
        d[c] = c < cols ? (int32_t)(sum[c] - (uint32_t)K * z) : 0;
    }
}

static int pack_vnni(ox_q8_packed_b *p, const ox_q8_matrix *B) {
    p->K4 = round_up(p->K, 4);
    p->Np = round_up(p->N, PANEL);
    if (!(p->b = alloc_bytes(p->K4 * p->Np, 1)) || !(p->zb = alloc_bytes(p->Np, sizeof(int32_t))) ||
        !(p->d = alloc_bytes(p->Np, sizeof(int32_t))))
        return -1;
    for (int64_t n0 = 0; n0 < p->Np; n0 += PANEL)
        pack_panel(B, p->K, p->N, n0, p->b + n0 * p->K4, p->zb + n0, p->d + n0);
    return 0;
}

ox_q8_packed_b *ox_q8_pack_b(int64_t K, int64_t N, const ox_q8_matrix *B) {
    if (K <= 0 || N <= 0) return NULL;
    ox_q8_packed_b *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->path = q8_path();
    p->K = K;
    p->N = N;
    if ((p->path == PATH_VNNI ? pack_vnni(p, B) : pack_float(p, B)) != 0) {
        ox_q8_packed_b_free(p);
        return NULL;
    }
    return p;
}

/* ---------------------------------------------------------------- */
/* float32 path */

static int gemm_float(ox_threadpool *pool, const ox_stop *stop, int64_t M, const ox_q8_matrix *A,
                      const ox_q8_packed_b *B, int32_t *C, int64_t ldc) {
    int64_t K = B->K, N = B->N;
    float *a = alloc_bytes(M * K, sizeof(float)), *t = alloc_bytes(M * N, sizeof(float));
    if (!a || !t) {
        free(a);
        free(t);
        return -1;
    }
    for (int64_t m = 0; m < M; m++) {
        int32_t za = q8_zero(A, m);
        for (int64_t k = 0; k < K; k++) a[m * K + k] = (float)(q8_at(A, m * A->ld + k) - za);
    }
    int rc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += K_RUN) {
        int64_t kc = K - k0 < K_RUN ? K - k0 : K_RUN;
        if (ox_gemm_f32(pool, stop, 0, 0, M, N, kc, 1.0f, a + k0, K, B->f + k0 * N, N, 0.0f, t, N) != 0) {
            rc = -1;
            break;
        }
        /* a stopped product leaves t unspecified: never convert it */
        if (ox_stop_requested(stop)) break;
        for (int64_t m = 0; m < M; m++) {
            uint32_t *c = (uint32_t *)(void *)(C + m * ldc);
            const float *tr = t + m * N;
            if (k0 == 0)
                for (int64_t n = 0; n < N; n++) c[n] = (uint32_t)(int32_t)tr[n];
            else
                for (int64_t n = 0; n < N; n++) c[n] += (uint32_t)(int32_t)tr[n];
        }
    }
    free(a);
    free(t);
    return rc;
}

/* ---------------------------------------------------------------- */
/* AVX-512 VNNI path */

#ifdef OX_Q8_X86
typedef struct vnni_job {
    const ox_q8_packed_b *B; /* packed once; NULL: each task packs its panel of b */
    const ox_q8_matrix *b;
    int64_t K, K4, N;
    const int8_t *a;      /* M rows of K4 signed bytes */
    const int32_t *rsum;  /* per row: sum of a */
    const int32_t *za;    /* per row: shifted zero point */
    int32_t *C;
    int64_t M, ldc, row_blocks;
    const ox_stop *stop;
    atomic_int failed;
} vnni_job;

/* One panel: b as pack_panel lays it out, zb and d its columns' */
typedef struct vnni_panel {
    const uint8_t *b;
    const int32_t *zb, *d;
    int64_t n0;
} vnni_panel;

__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline void
vnni_tile(const vnni_job *j, const vnni_panel *pn, int rows, int64_t m0) {
    const int64_t k4n = j->K4 / 4;
    const uint8_t *b = pn->b;
    const int8_t *a = j->a + m0 * j->K4;
    __m512i acc[ROWS][2];
    for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    for (int64_t k4 = 0; k4 < k4n; k4++) {
        const __m512i b0 = _mm512_loadu_si512(b + k4 * PANEL * 4), b1 = _mm512_loadu_si512(b + k4 * PANEL * 4 + 64);
        for (int r = 0; r < rows; r++) {
            int32_t four;
            memcpy(&four, a + r * j->K4 + k4 * 4, sizeof four);
            const __m512i va = _mm512_set1_epi32(four);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, va);
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, va);
        }
    }
    for (int v = 0; v < 2; v++) {
        int64_t n = pn->n0 + 16 * v;
        if (n >= j->N) break;
        __mmask16 mask = j->N - n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (j->N - n)) - 1);
        const __m512i zb = _mm512_loadu_si512(pn->zb + 16 * v), d = _mm512_loadu_si512(pn->d + 16 * v);
        for (int r = 0; r < rows; r++) {
            __m512i s = _mm512_sub_epi32(acc[r][v], _mm512_mullo_epi32(zb, _mm512_set1_epi32(j->rsum[m0 + r])));
            s = _mm512_sub_epi32(s, _mm512_mullo_epi32(d, _mm512_set1_epi32(j->za[m0 + r])));
            _mm512_mask_storeu_epi32(j->C + (m0 + r) * j->ldc + n, mask, s);
        }
    }
}

/* rows as a constant, so the compiler keeps the tile in registers */
#define VNNI_ROWS(R) \
    case R: vnni_tile(j, pn, R, m); break;

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void vnni_rows(const vnni_job *j,
                                                                             const vnni_panel *pn,
                                                                             int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; m += ROWS) {
        switch (m1 - m < ROWS ? (int)(m1 - m) : ROWS) {
            VNNI_ROWS(1) VNNI_ROWS(2) VNNI_ROWS(3) VNNI_ROWS(4)
            VNNI_ROWS(5) VNNI_ROWS(6) VNNI_ROWS(7) VNNI_ROWS(8)
        }
    }
}

/* B packed once: a task is a block of rows of one panel */
static void vnni_tasks_packed(void *arg, int64_t t0, int64_t t1) {
    const vnni_job *j = arg;
    for (int64_t t = t0; t < t1; t++) {
        if (ox_stop_requested(j->stop)) return;
        int64_t n0 = (t / j->row_blocks) * PANEL, m0 = (t % j->row_blocks) * ROW_BLOCK;
        vnni_panel pn = {j->B->b + n0 * j->K4, j->B->zb + n0, j->B->d + n0, n0};
        vnni_rows(j, &pn, m0, m0 + ROW_BLOCK < j->M ? m0 + ROW_BLOCK : j->M);
    }
}

/* B for this product only: a task packs one panel (a few KiB, in L1/L2
 * while every row uses it) and runs every row on it */
static void vnni_tasks_unpacked(void *arg, int64_t t0, int64_t t1) {
    vnni_job *j = arg;
    uint8_t *b = alloc_bytes(j->K4 * PANEL, 1);
    if (!b) {
        atomic_store(&j->failed, 1);
        return;
    }
    int32_t zb[PANEL], d[PANEL];
    for (int64_t t = t0; t < t1; t++) {
        if (ox_stop_requested(j->stop)) break;
        vnni_panel pn = {b, zb, d, t * PANEL};
        pack_panel(j->b, j->K, j->N, pn.n0, b, zb, d);
        vnni_rows(j, &pn, 0, j->M);
    }
    free(b);
}

static int64_t grain(int64_t macs_per_item) {
    return macs_per_item >= TASK_MACS ? 1 : TASK_MACS / (macs_per_item > 0 ? macs_per_item : 1);
}

/* B is either packed (Bp) or the matrix itself (Bm, K x N) */
static int gemm_vnni(ox_threadpool *pool, const ox_stop *stop, int64_t M, int64_t N, int64_t K,
                     const ox_q8_matrix *A, const ox_q8_packed_b *Bp, const ox_q8_matrix *Bm, int32_t *C,
                     int64_t ldc) {
    const int64_t K4 = round_up(K, 4);
    int8_t *a = alloc_bytes(M * K4, 1);
    int32_t *sums = alloc_bytes(2 * M, sizeof(int32_t));
    if (!a || !sums) {
        free(a);
        free(sums);
        return -1;
    }
    /* uint8 becomes int8 by subtracting 128, and so does its zero point */
    const int32_t shift = A->is_signed ? 0 : -128;
    int32_t *rsum = sums, *za = sums + M;
    for (int64_t m = 0; m < M; m++) {
        int8_t *row = a + m * K4;
        uint32_t s = 0;
        for (int64_t k = 0; k < K; k++) {
            row[k] = (int8_t)(q8_at(A, m * A->ld + k) + shift);
            s += (uint32_t)row[k];
        }
        for (int64_t k = K; k < K4; k++) row[k] = 0;
        rsum[m] = (int32_t)s;
        za[m] = q8_zero(A, m) + shift;
    }
    vnni_job j = {Bp, Bm, K, K4, N, a, rsum, za, C, M, ldc, (M + ROW_BLOCK - 1) / ROW_BLOCK, stop, 0};
    atomic_init(&j.failed, 0);
    /* tasks of at least TASK_MACS products: a smaller one costs about
     * as much to hand to a thread as to do */
    const int64_t panels = (N + PANEL - 1) / PANEL, rows = M < ROW_BLOCK ? M : ROW_BLOCK;
    if (Bp)
        ox_parallel_for(pool, j.row_blocks * panels, grain(rows * K4 * PANEL), vnni_tasks_packed, &j);
    else
        ox_parallel_for(pool, panels, grain(M * K4 * PANEL), vnni_tasks_unpacked, &j);
    free(a);
    free(sums);
    return atomic_load(&j.failed) ? -1 : 0;
}
#endif

int ox_gemm_q8_packed(ox_threadpool *pool, const ox_stop *stop, int64_t M, const ox_q8_matrix *A,
                      const ox_q8_packed_b *B, int32_t *C, int64_t ldc) {
    if (M <= 0) return 0;
#ifdef OX_Q8_X86
    if (B->path == PATH_VNNI) return gemm_vnni(pool, stop, M, B->N, B->K, A, B, NULL, C, ldc);
#endif
    return gemm_float(pool, stop, M, A, B, C, ldc);
}

int ox_gemm_q8(ox_threadpool *pool, const ox_stop *stop, int64_t M, int64_t N, int64_t K,
               const ox_q8_matrix *A, const ox_q8_matrix *B, int32_t *C, int64_t ldc) {
    if (M <= 0 || N <= 0) return 0;
    if (K <= 0) {
        for (int64_t m = 0; m < M; m++) memset(C + m * ldc, 0, (size_t)N * sizeof *C);
        return 0;
    }
#ifdef OX_Q8_X86
    if (q8_path() == PATH_VNNI) return gemm_vnni(pool, stop, M, N, K, A, NULL, B, C, ldc);
#endif
    ox_q8_packed_b *p = ox_q8_pack_b(K, N, B);
    if (!p) return -1;
    int rc = ox_gemm_q8_packed(pool, stop, M, A, p, C, ldc);
    ox_q8_packed_b_free(p);
    return rc;
}
