/* Dense matrix multiplication shared by the CPU kernels (Gemm, MatMul,
 * Conv, ConvTranspose, Einsum) and the window geometry shared by the
 * convolution and pooling kernels. */
#ifndef ONYX_EP_CPU_KERNELS_GEMM_H
#define ONYX_EP_CPU_KERNELS_GEMM_H

#include <stdint.h>

#include "core/threadpool.h"

/* C = alpha * op(A) * op(B) + beta * C with C of size M x N (row stride
 * ldc). op(A) is M x K: A itself (row stride lda) or, with trans_a, the
 * transpose of a K x M matrix. Likewise op(B) is K x N. When beta is 0
 * the old contents of C are never read (NaNs in it do not propagate).
 * pool may be NULL. Returns 0, or -1 when scratch memory could not be
 * allocated (C is then unspecified). */
int ox_gemm_f32(ox_threadpool *pool, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                float *C, int64_t ldc);
int ox_gemm_f64(ox_threadpool *pool, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                double beta, double *C, int64_t ldc);

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
