/* Kernels of the convolution family that live outside conv.c, which
 * owns the family's kernel table. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_EXTRA_H
#define ONYX_EP_CPU_KERNELS_CONV_EXTRA_H

#include "ep/cpu/kernels/conv_geom.h"
#include "ep/ep.h"

/* The geometry of a forward (transpose 0) or transposed convolution from
 * the node's attributes and X, W and Y, checked (conv.c); -1 with the
 * kernel's error set when it is not one. */
int ox_conv_geom_make(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *w, const ox_tensor *y,
                      int transpose, conv_geom *g);
/* -1 with the error set unless the bias is absent or 1-D with m values. */
int ox_conv_check_bias(ox_kernel_ctx *ctx, const ox_tensor *b, int64_t m);

/* The float convolution Y = act(Conv(X, W, b)) of geometry g by the
 * paths a Conv node takes, without its session-time choices (weights
 * packed for this run): for kernels that run a convolution of their own
 * (conv_chain.c's fallback). 0, or -1 with the kernel's error set. */
struct ox_act;
int ox_conv_f32_unplanned(ox_kernel_ctx *ctx, const conv_geom *g, const float *x, const float *w, const float *b,
                          const struct ox_act *act, float *y);

/* 1 when the float32 Conv (or FusedConv) node with constant weights w
 * takes Winograd's path: the choice its kernel makes at session creation
 * from the weights, the attributes and the output's type out (its
 * positions per image, where known, decide for convolutions of fewer
 * than 32 input or output channels and for planes of fewer than 16
 * positions; out may be NULL). The optimizer's block_channels pass asks
 * it with the type inference gave the node's output, which is what the
 * kernel sees at session creation. */
int ox_conv_takes_winograd(const ir_node *node, const ox_tensor *w, const ir_type *out);

/* CausalConvWithState (causal_conv.c). */
int ox_cpu_causal_conv_compute(ox_kernel_ctx *ctx);
/* ConvInteger and QLinearConv (conv_integer.c). */
int ox_cpu_conv_integer_compute(ox_kernel_ctx *ctx);
int ox_cpu_qlinear_conv_compute(ox_kernel_ctx *ctx);
/* DeformConv (deform_conv.c). */
int ox_cpu_deform_conv_compute(ox_kernel_ctx *ctx);

#endif
