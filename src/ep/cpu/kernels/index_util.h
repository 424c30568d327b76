/* What the CPU indexing kernels share: index reading and checking
 * (kernels/index.c) and the scatter kernels that live in kernels/scatter.c
 * but are registered in index.c's table. */
#ifndef ONYX_EP_CPU_KERNELS_INDEX_UTIL_H
#define ONYX_EP_CPU_KERNELS_INDEX_UTIL_H

#include <stdint.h>

#include "ep/ep.h"

/* Element i of an integer index tensor, as int64. */
int64_t ox_cpu_index_at(const ox_tensor *t, int64_t i);
/* Normalises index v (found at position pos of `what`) against an axis of
 * size n; fails naming the value, its position and the allowed range. */
int ox_cpu_index_norm(ox_kernel_ctx *ctx, const char *what, int64_t pos, int64_t v, int64_t n, int axis,
                      int64_t *out);
/* Contiguous element strides of dims. */
void ox_cpu_index_strides(const int64_t *dims, int rank, int64_t *stride);
/* Input i as a tensor; fails when it is missing or not a tensor. */
int ox_cpu_index_input(ox_kernel_ctx *ctx, int i, const char *what, const ox_tensor **out);
/* Element offset in x of index tuple t (m components from data axis b)
 * within batch `batch` (GatherND, ScatterND); fails when out of range. */
int ox_cpu_index_nd_offset(ox_kernel_ctx *ctx, const ox_tensor *x, const int64_t *xs, int b, const ox_tensor *ind,
                           int64_t t, int64_t m, int64_t batch_stride, int64_t batch, int64_t *out);

/* kernels/scatter.c */
int ox_cpu_scatter_nd(ox_kernel_ctx *ctx);
int ox_cpu_scatter_elements(ox_kernel_ctx *ctx); /* also Scatter-9 */
int ox_cpu_supports_scatter(const ir_node *node, const ir_type *const *in, int n);
int ox_cpu_tensor_scatter(ox_kernel_ctx *ctx);

#endif
