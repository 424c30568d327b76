/* What the data-movement schemas (ops/transform.c) and their kernels must
 * decide alike, and what ops/transform.c shares with the schemas split
 * out of it (ops/transform_pad.c). */
#ifndef ONYX_OPS_TRANSFORM_H
#define ONYX_OPS_TRANSFORM_H

#include <stdint.h>

#include "core/error.h"
#include "ops/op.h"

/* Resolves a Slice on a tensor of shape dims[0..rank): starts, ends, and
 * the optional axes and steps (n entries each) become per-axis start,
 * step and output size. Fails on bad axes, repeated axes or zero steps. */
int ox_transform_slice_plan(const int64_t *dims, int rank, const int64_t *starts,
                            const int64_t *ends, const int64_t *axes, const int64_t *steps,
                            int n, int64_t *start_out, int64_t *step_out, int64_t *dims_out,
                            ox_error *err);

/* Split's size of output i of n along an axis of size d >= 0 when no
 * 'split' list is given: d / n each (inference checks that n divides d),
 * or with Split-18's num_outputs (by_count), ceil(d / n) each and what is
 * left for the last ones. Inference and the kernel (which needs the size
 * of an omitted output) both use it. */
static inline int64_t ox_split_even_size(int64_t d, int n, int i, int by_count) {
    if (!by_count) return d / n;
    /* ceil(d / n) without the d + n - 1 that overflows near INT64_MAX */
    const int64_t chunk = d / n + (d % n != 0), lo = chunk * i;
    return lo >= d ? 0 : (d - lo < chunk ? d - lo : chunk);
}

/* ---- inference helpers of ops/transform.c ---- */

/* Output i as a tensor of known rank whose dims are all unknown. */
int ox_transform_set_rank_only(ox_infer_ctx *c, int i, ox_dtype dt, int rank);
/* Integer entries of a 0-D or 1-D input (at most max); *known = 0 when its
 * value is not available yet (a computed input at load). */
int ox_transform_read_ints(ox_infer_ctx *c, int i, const char *what, int64_t *out, int max, int *count,
                           int *known);
/* Attribute list `attr` before opset `input_opset`, input `idx` from then
 * on. Returns the entry count, -1 when absent, -2 when not known yet;
 * *failed is set when it failed (the error is then in c). */
int ox_transform_attr_or_input_ints(ox_infer_ctx *c, const char *attr, int input_opset, int idx, int64_t *out,
                                    int max, int *failed);

/* ---- schemas in ops/transform_pad.c ---- */
int ox_transform_infer_pad(ox_infer_ctx *c);
int ox_transform_infer_center_crop_pad(ox_infer_ctx *c);

#endif
