/* What the normalization schemas (ops/normalization.c) and their kernels
 * must decide alike. */
#ifndef ONYX_OPS_NORMALIZATION_H
#define ONYX_OPS_NORMALIZATION_H

#include "ir/ir.h"

/* Whether a BatchNormalization node normalizes with batch statistics:
 * training_mode from opset 14; before that, whether any of the optional
 * statistics outputs is wanted (and, up to opset 6, is_test is unset). */
int ox_batchnorm_training(const ir_node *n);

#endif
