/* Exact products of 8-bit matrices with zero points, shared by the
 * integer kernels (MatMulInteger, QLinearMatMul, ConvInteger,
 * QLinearConv). */
#ifndef ONYX_EP_CPU_KERNELS_GEMM_Q8_H
#define ONYX_EP_CPU_KERNELS_GEMM_Q8_H

#include <stdint.h>

#include "core/stop.h"
#include "core/threadpool.h"

/* One 8-bit operand: int8 or uint8 values, row-major with row stride ld,
 * and its zero points: one for the whole matrix, or one per row (the
 * left operand) or per column (the right one). */
typedef struct ox_q8_matrix {
    const void *data;
    int is_signed;       /* int8 when 1, uint8 when 0 */
    int64_t ld;
    const int32_t *zero; /* NULL: no zero point */
    int zero_per_line;   /* zero[i] per row (A) or column (B) instead of zero[0] */
} ox_q8_matrix;

/* B prepared for ox_gemm_q8_packed: packed once for constant weights. */
typedef struct ox_q8_packed_b ox_q8_packed_b;

/* Packs B of K x N (B[k][n] is B->data[k * ld + n]). NULL when memory
 * runs out or K or N is not positive. */
ox_q8_packed_b *ox_q8_pack_b(int64_t K, int64_t N, const ox_q8_matrix *B);
void ox_q8_packed_b_free(ox_q8_packed_b *p);

/* C (M x N, row stride ldc) = sum_k (A[m][k] - za) * (B[k][n] - zb) for
 * A of M x K, exactly, wrapping modulo 2^32 as the int32 arithmetic of
 * the ONNX reference does. Machines with AVX-512 VNNI (unless
 * ONYX_CPU_ISA caps the choice below avx512) take 8-bit dot products; the
 * others the float32 GEMM over runs of at most 256 of K, whose sums are
 * integers below 2^24 and so exact in float32, added up in int32. Returns
 * 0, or -1 when scratch memory runs out. stop is polled between blocks
 * (C is then unspecified). */
int ox_gemm_q8_packed(ox_threadpool *pool, const ox_stop *stop, int64_t M, const ox_q8_matrix *A,
                      const ox_q8_packed_b *B, int32_t *C, int64_t ldc);

/* The same with B packed for this product only. */
int ox_gemm_q8(ox_threadpool *pool, const ox_stop *stop, int64_t M, int64_t N, int64_t K,
               const ox_q8_matrix *A, const ox_q8_matrix *B, int32_t *C, int64_t ldc);

/* The path the products take on this machine: "avx512-vnni" or "float32". */
const char *ox_gemm_q8_path(void);

#endif
