/* Private to the index family's files (vk_kernels_index.c and
 * vk_index_scatter.c): shared helpers and the kernels the single table in
 * vk_kernels_index.c lists. */
#ifndef ONYX_EP_VULKAN_VK_INDEX_H
#define ONYX_EP_VULKAN_VK_INDEX_H

#include "ep/vulkan/vk_kernel.h"
#include "ops/op.h"

/* Dimensions the index shaders' push constants hold. */
#define OX_VK_IDX_RANK 8

/* An int32 or int64 tensor type. */
int ox_vk_idx_type(const ir_type *t);
/* Elements the data-moving shaders copy as one or two 32-bit words:
 * float32, int32, int64. */
int ox_vk_idx_words_type(const ir_type *t);
uint32_t ox_vk_idx_words(const ox_tensor *t);
/* Row-major element strides of t. */
void ox_vk_idx_strides(const ox_tensor *t, int64_t *st);
/* GatherElements and ScatterElements: every indices dimension but the
 * axis fits in the data's; fails ctx naming the dimension otherwise. */
int ox_vk_idx_elements_fit(ox_kernel_ctx *c, const ox_tensor *x, const ox_tensor *ind, int64_t axis);
/* The push constants both shaders share: indices dimensions and data
 * strides, for a rank-r walk over the indices. */
void ox_vk_idx_elements_walk(const ox_tensor *x, const ox_tensor *ind, uint32_t *dims, uint32_t *xs);

int ox_vk_k_gather_nd(ox_kernel_ctx *c);
int ox_vk_s_gather_nd(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_k_scatter_nd(ox_kernel_ctx *c);
int ox_vk_s_scatter_nd(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_k_scatter_elements(ox_kernel_ctx *c);
int ox_vk_s_scatter_elements(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_k_nonzero(ox_kernel_ctx *c);
int ox_vk_s_nonzero(const ir_node *node, const ir_type *const *in, int n);

#endif
