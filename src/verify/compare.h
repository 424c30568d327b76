/* Comparing a value with its reference under an absolute and a relative
 * tolerance: what shadow runs (verify_first_runs) decide on. */
#ifndef ONYX_VERIFY_COMPARE_H
#define ONYX_VERIFY_COMPARE_H

#include <stdint.h>

#include "core/tensor.h"

typedef struct ox_compare {
    int64_t count;   /* elements compared */
    int64_t bad;     /* elements with |t - r| > atol + rtol * |r| */
    double max_abs;  /* largest |t - r| */
    int64_t at;      /* its element index, -1 if none */
    char why[128];   /* set when the two cannot be compared element-wise */
} ox_compare;

/* 1 when t matches ref: same kind, type and shape, and every element
 * within |t - r| <= atol + rtol * |r| (NaN matches NaN, equal infinities
 * match; strings and booleans must be equal). 0 otherwise, with *out
 * saying how far apart they are. Sequences and optionals compare their
 * items. Both must be host values. */
int ox_values_match(const ox_tensor *t, const ox_tensor *ref, double atol, double rtol,
                    ox_compare *out);

#endif
