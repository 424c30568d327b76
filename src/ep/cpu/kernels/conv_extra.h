/* Kernels of the convolution family that live outside conv.c, which
 * owns the family's kernel table. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_EXTRA_H
#define ONYX_EP_CPU_KERNELS_CONV_EXTRA_H

#include "ep/ep.h"

/* CausalConvWithState (causal_conv.c). */
int ox_cpu_causal_conv_compute(ox_kernel_ctx *ctx);
/* DeformConv (deform_conv.c). */
int ox_cpu_deform_conv_compute(ox_kernel_ctx *ctx);

#endif
