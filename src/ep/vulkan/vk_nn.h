/* What the Vulkan `nn` kernel files share (vk_kernels_nn.c holds the
 * table): the kernels and placement checks of each file, and the
 * attribute checks of the sliding-window operators. */
#ifndef ONYX_EP_VULKAN_VK_NN_H
#define ONYX_EP_VULKAN_VK_NN_H

#include "ep/vulkan/vk_kernel.h"

/* Spatial axes the window shaders take (depth, height, width). */
#define VK_NN_MAX_SPATIAL 3
/* Bound on every window attribute and extent the shaders see: products
 * such as output index * stride stay inside 32-bit signed arithmetic. */
#define VK_NN_MAX_ATTR (1 << 20)

/* Attribute `name` of the node: NULL when absent; fails ctx when it has
 * a count other than `want`. Returns -1 on failure. */
int ox_vk_nn_attr_ints(ox_kernel_ctx *c, const char *name, int want, const int64_t **v);
/* For supports(), over r spatial axes (1 to 3): kernel_shape, strides and
 * dilations, where present, have r values in [1, VK_NN_MAX_ATTR], pads
 * 2r and output_padding r in [0, VK_NN_MAX_ATTR], output_shape r or
 * r + 2 non-negative values; auto_pad is a known mode. */
int ox_vk_nn_window_attrs_ok(const ir_node *node, int r);
/* t is a tensor of known rank in [lo, hi]. */
int ox_vk_nn_rank_in(const ir_type *t, int lo, int hi);

/* vk_nn_conv.c */
int ox_vk_nn_conv(ox_kernel_ctx *c);
int ox_vk_nn_conv_transpose(ox_kernel_ctx *c);
int ox_vk_nn_s_conv(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_nn_fused_conv(ox_kernel_ctx *c);
int ox_vk_nn_s_fused_conv(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_nn_s_conv_transpose(const ir_node *node, const ir_type *const *in, int n);

/* vk_nn_pool.c */
int ox_vk_nn_maxpool(ox_kernel_ctx *c);
int ox_vk_nn_avgpool(ox_kernel_ctx *c);
int ox_vk_nn_global_avg(ox_kernel_ctx *c);
int ox_vk_nn_global_max(ox_kernel_ctx *c);
int ox_vk_nn_s_pool(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_nn_s_global_pool(const ir_node *node, const ir_type *const *in, int n);

/* vk_nn_norm.c */
int ox_vk_nn_batchnorm(ox_kernel_ctx *c);
int ox_vk_nn_instancenorm(ox_kernel_ctx *c);
int ox_vk_nn_layernorm(ox_kernel_ctx *c);
int ox_vk_nn_groupnorm(ox_kernel_ctx *c);
int ox_vk_nn_s_batchnorm(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_nn_s_instancenorm(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_nn_s_layernorm(const ir_node *node, const ir_type *const *in, int n);
int ox_vk_nn_s_groupnorm(const ir_node *node, const ir_type *const *in, int n);

#endif
