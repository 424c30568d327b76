/* What the CPU data-movement kernels (kernels/transform.c) share with the
 * ones split out of that file (kernels/transform_pad.c), whose table
 * entries stay in transform.c. */
#ifndef ONYX_EP_CPU_KERNELS_TRANSFORM_UTIL_H
#define ONYX_EP_CPU_KERNELS_TRANSFORM_UTIL_H

#include <stdint.h>

#include "ep/ep.h"

/* Integer entries of 0-D or 1-D input i (at most max) as int64; *count is
 * -1 when the input is omitted. Fails on a non-integer or longer input. */
int ox_cpu_transform_read_ints(ox_kernel_ctx *ctx, int i, const char *what, int64_t *out, int max, int *count);
/* Entries of the ints attribute `name`; *count is -1 when it is absent. */
int ox_cpu_transform_attr_ints(ox_kernel_ctx *ctx, const char *name, int64_t *out, int max, int *count);

/* kernels/transform_pad.c */
int ox_cpu_pad(ox_kernel_ctx *ctx);
int ox_cpu_center_crop_pad(ox_kernel_ctx *ctx);

#endif
