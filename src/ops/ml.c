/* Schemas of the ai.onnx.ml operators (tree ensembles, linear models, scalers, encoders...). */
#include "ops/op.h"

const ox_op_table ox_ops_ml = {NULL, 0};
