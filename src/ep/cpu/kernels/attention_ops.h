/* Kernels of the attention family beside Attention itself
 * (attention_ops.c), registered in attention.c's table. */
#ifndef ONYX_EP_CPU_KERNELS_ATTENTION_OPS_H
#define ONYX_EP_CPU_KERNELS_ATTENTION_OPS_H

#include "ep/ep.h"

int ox_rotary_embedding_compute(ox_kernel_ctx *ctx);
int ox_linear_attention_compute(ox_kernel_ctx *ctx);
int ox_swiglu_compute(ox_kernel_ctx *ctx);
int ox_flex_attention_compute(ox_kernel_ctx *ctx);

#endif
