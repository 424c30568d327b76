/* Sliding-window geometry shared by the convolution and pooling schemas
 * (defined in ops/conv.c). */
#ifndef ONYX_OPS_WINDOW_H
#define ONYX_OPS_WINDOW_H

#include "ops/op.h"

/* Output spatial sizes of a sliding window over `in` (r dims, -1
 * unknown) with the given kernel, reading strides, dilations, pads,
 * auto_pad and (if use_ceil) ceil_mode from the node. */
int ox_infer_window(ox_infer_ctx *c, const int64_t *in, int r, const int64_t *kernel, int use_ceil,
                    int64_t *out);

#endif
