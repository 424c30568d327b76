/* Dense matrix multiplication shared by the CPU kernels (Gemm, MatMul,
 * Conv, ConvTranspose, Einsum) and the window geometry shared by the
 * convolution and pooling kernels. */
#ifndef ONYX_EP_CPU_KERNELS_GEMM_H
#define ONYX_EP_CPU_KERNELS_GEMM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/stop.h"
#include "core/threadpool.h"

/* C = alpha * op(A) * op(B) + beta * C with C of size M x N (row stride
 * ldc). op(A) is M x K: A itself (row stride lda) or, with trans_a, the
 * transpose of a K x M matrix. Likewise op(B) is K x N. When beta is 0
 * the old contents of C are never read (NaNs in it do not propagate).
 * pool may be NULL. stop (may be NULL) is polled between blocks of work;
 * once it asks to stop, the call returns 0 early with C unspecified (its
 * owner discards the result). Returns 0, or -1 when scratch memory could
 * not be allocated (C is then unspecified). */
int ox_gemm_f32(ox_threadpool *pool, const ox_stop *stop, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                float *C, int64_t ldc);
/* op(B) packed once for many products (constant weights): every slab of
 * op(B)'s rows laid out as the packed path packs it at run time, over the
 * whole width. */
typedef struct ox_gemm_packed_b {
    int trans_b;
    int64_t K, N, Np, kc; /* Np: N rounded up to whole column panels */
    size_t bytes;
    float *data;
} ox_gemm_packed_b;

/* Packs op(B) (K x N; B itself with row stride ldb, or with trans_b the
 * transpose of an N x K matrix). -1 when K or N is not positive or
 * memory runs out. */
int ox_gemm_pack_b_f32(int trans_b, int64_t K, int64_t N, const float *B, int64_t ldb,
                       ox_gemm_packed_b *out);
void ox_gemm_packed_b_free(ox_gemm_packed_b *p);

/* The constant B of one node's products (a kernel's state): packed on the
 * first product that reads the pack (a row vector, which reads it as one
 * stream of memory, or a product large enough for the packed path), so
 * weights only ever in tiny products cost no second copy. B must outlive
 * it. Any number of runs may use it at once. */
typedef struct ox_gemm_weights ox_gemm_weights;
ox_gemm_weights *ox_gemm_weights_new(int trans_b, int64_t K, int64_t N, const float *B,
                                     int64_t ldb);
void ox_gemm_weights_free(ox_gemm_weights *w);
/* Whether the pack exists yet (for describing the kernel). */
int ox_gemm_weights_packed(const ox_gemm_weights *w);
int64_t ox_gemm_weights_k(const ox_gemm_weights *w);
int64_t ox_gemm_weights_n(const ox_gemm_weights *w);
/* ox_gemm_f32 with A not transposed and op(B) the weights; packing them
 * first if this product is the first to need the pack (when packing
 * runs out of memory the product packs per run instead). */
int ox_gemm_f32_weights(ox_threadpool *pool, const ox_stop *stop, int64_t M, float alpha,
                        const float *A, int64_t lda, ox_gemm_weights *w, float beta, float *C,
                        int64_t ldc);
int ox_gemm_f64(ox_threadpool *pool, const ox_stop *stop, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                double beta, double *C, int64_t ldc);

/* Short float32 vector loops written with explicit vector types: the
 * default -O2 build does not auto-vectorize loops whose trip count is
 * not a known multiple of the vector width. */
typedef float ox_v4f __attribute__((vector_size(16)));
typedef int32_t ox_v4i __attribute__((vector_size(16)));

#define OX_V4F_LOAD(v, p) memcpy(&(v), (p), sizeof(ox_v4f))
#define OX_V4F_STORE(p, v) memcpy((p), &(v), sizeof(ox_v4f))
#define OX_V4F_SPLAT(a) ((ox_v4f){0, 0, 0, 0} + (a))

/* y += a * x */
static inline void ox_vec_axpy(float *restrict y, const float *restrict x, float a, int64_t n) {
    int64_t i = 0;
    ox_v4f av = OX_V4F_SPLAT(a);
    for (; i + 8 <= n; i += 8) {
        ox_v4f x0, x1, y0, y1;
        OX_V4F_LOAD(x0, x + i);
        OX_V4F_LOAD(x1, x + i + 4);
        OX_V4F_LOAD(y0, y + i);
        OX_V4F_LOAD(y1, y + i + 4);
        y0 += av * x0;
        y1 += av * x1;
        OX_V4F_STORE(y + i, y0);
        OX_V4F_STORE(y + i + 4, y1);
    }
    for (; i < n; i++) y[i] += a * x[i];
}

/* y = a * x + b */
static inline void ox_vec_affine(float *restrict y, const float *restrict x, float a, float b,
                                 int64_t n) {
    int64_t i = 0;
    ox_v4f av = OX_V4F_SPLAT(a), bv = OX_V4F_SPLAT(b);
    for (; i + 4 <= n; i += 4) {
        ox_v4f v;
        OX_V4F_LOAD(v, x + i);
        v = v * av + bv;
        OX_V4F_STORE(y + i, v);
    }
    for (; i < n; i++) y[i] = x[i] * a + b;
}

/* y += b */
static inline void ox_vec_add_scalar(float *restrict y, float b, int64_t n) {
    int64_t i = 0;
    ox_v4f bv = OX_V4F_SPLAT(b);
    for (; i + 4 <= n; i += 4) {
        ox_v4f v;
        OX_V4F_LOAD(v, y + i);
        v += bv;
        OX_V4F_STORE(y + i, v);
    }
    for (; i < n; i++) y[i] += b;
}

/* y += x */
static inline void ox_vec_add(float *restrict y, const float *restrict x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        ox_v4f a, v;
        OX_V4F_LOAD(a, x + i);
        OX_V4F_LOAD(v, y + i);
        v += a;
        OX_V4F_STORE(y + i, v);
    }
    for (; i < n; i++) y[i] += x[i];
}

/* y = max(y, x), keeping y where x is not greater */
static inline void ox_vec_max(float *restrict y, const float *restrict x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        ox_v4f a, b;
        OX_V4F_LOAD(a, y + i);
        OX_V4F_LOAD(b, x + i);
        ox_v4i m = b > a;
        ox_v4f r = (ox_v4f)(((ox_v4i)b & m) | ((ox_v4i)a & ~m));
        OX_V4F_STORE(y + i, r);
    }
    for (; i < n; i++)
        if (x[i] > y[i]) y[i] = x[i];
}

/* Auto-padding modes of Conv, ConvTranspose and the pooling ops. */
typedef enum ox_auto_pad {
    OX_PAD_NOTSET = 0,
    OX_PAD_SAME_UPPER = 1,
    OX_PAD_SAME_LOWER = 2,
    OX_PAD_VALID = 3,
} ox_auto_pad;

/* Parses the auto_pad attribute; -1 for an unknown string. */
int ox_parse_auto_pad(const char *s);

/* One spatial axis of a sliding window: input size, kernel size, stride
 * and dilation in; resolved pads and output size out. Pads given by the
 * pads attribute are read from *pad_begin / *pad_end and replaced when
 * auto_pad says so. Returns -1 when the window does not fit. */
int ox_window_axis(int64_t in, int64_t k, int64_t stride, int64_t dil, int auto_pad,
                   int ceil_mode, int64_t *pad_begin, int64_t *pad_end, int64_t *out);

#endif
