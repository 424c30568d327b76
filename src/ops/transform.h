/* What the data-movement schemas (ops/transform.c) and their kernels must
 * decide alike. */
#ifndef ONYX_OPS_TRANSFORM_H
#define ONYX_OPS_TRANSFORM_H

#include <stdint.h>

#include "core/error.h"

/* Resolves a Slice on a tensor of shape dims[0..rank): starts, ends, and
 * the optional axes and steps (n entries each) become per-axis start,
 * step and output size. Fails on bad axes, repeated axes or zero steps. */
int ox_transform_slice_plan(const int64_t *dims, int rank, const int64_t *starts,
                            const int64_t *ends, const int64_t *axes, const int64_t *steps,
                            int n, int64_t *start_out, int64_t *step_out, int64_t *dims_out,
                            ox_error *err);

#endif
