/* Exact 8-bit convolution, the core of ConvInteger and QLinearConv. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_Q8_H
#define ONYX_EP_CPU_KERNELS_CONV_Q8_H

#include <stdint.h>

#include "core/stop.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/conv_geom.h"

/* y (N x M x output positions, int32) = the convolution of (X - xz) with
 * (W - wz[m]), X and W int8 or uint8 (xz and wz[] in their ranges), exact
 * and wrapping modulo 2^32 like int32 arithmetic. Padding reads xz, so it
 * adds nothing. Returns 0, or -1 when scratch memory runs out; stop is
 * polled between images and groups (y is then unspecified). */
int ox_conv_q8(ox_threadpool *pool, const ox_stop *stop, const conv_geom *g, const ox_tensor *X, int32_t xz,
               const ox_tensor *W, const int32_t *wz, int32_t *y);

#endif
