/* What the files of the Vulkan `data` family share (vk_kernels_data.c,
 * vk_data_ew.c, vk_data_resize.c): element classes, the kernels each file
 * exports to the family's one table, and the host-side shape helpers. */
#ifndef ONYX_EP_VULKAN_VK_DATA_H
#define ONYX_EP_VULKAN_VK_DATA_H

#include "ep/vulkan/vk_kernel.h"

/* Dimensions the broadcasting shaders walk (after folding). */
#define VKD_MAX_RANK 6

/* Bytes per element the movement shaders handle for a dtype: 4 and 8
 * move as words, 1 as bytes; 0 for anything else. */
int vkd_elem_bytes(ox_dtype t);
/* The type is a tensor of a dtype vkd_elem_bytes handles. */
int vkd_movable(const ir_type *t);

/* Element strides of t for an output of rank r (t aligned to the right),
 * 0 where t broadcasts. */
void vkd_bcast_strides(const ox_tensor *t, int r, int64_t *st);

/* Fails when a kernel finds its output unallocated (data-dependent
 * shapes are not expected for these operators). */
int vkd_have_output(ox_kernel_ctx *c, int i);

/* vk_data_ew.c: elementwise, Where, Cast. */
int vkd_k_pow(ox_kernel_ctx *c);
int vkd_k_max(ox_kernel_ctx *c);
int vkd_k_min(ox_kernel_ctx *c);
int vkd_k_mod(ox_kernel_ctx *c);
int vkd_k_equal(ox_kernel_ctx *c);
int vkd_k_less(ox_kernel_ctx *c);
int vkd_k_greater(ox_kernel_ctx *c);
int vkd_k_less_equal(ox_kernel_ctx *c);
int vkd_k_greater_equal(ox_kernel_ctx *c);
int vkd_k_and(ox_kernel_ctx *c);
int vkd_k_or(ox_kernel_ctx *c);
int vkd_k_xor(ox_kernel_ctx *c);
int vkd_k_not(ox_kernel_ctx *c);
int vkd_k_unary(ox_kernel_ctx *c);
int vkd_k_where(ox_kernel_ctx *c);
int vkd_k_cast(ox_kernel_ctx *c);
int vkd_s_pow(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_minmax(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_mod(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_compare(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_logical(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_not(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_unary(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_where(const ir_node *node, const ir_type *const *in, int n);
int vkd_s_cast(const ir_node *node, const ir_type *const *in, int n);

/* vk_data_resize.c */
int vkd_k_resize(ox_kernel_ctx *c);
int vkd_s_resize(const ir_node *node, const ir_type *const *in, int n);

#endif
