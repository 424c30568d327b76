/* Schemas of the com.microsoft contrib operators that ONNX Runtime writes into its saved optimized graphs. */
#include "ops/op.h"

const ox_op_table ox_ops_contrib = {NULL, 0};
