/* Schemas of the Attention, RotaryEmbedding and the other transformer-block operators of ai.onnx (opset 23+). */
#include "ops/op.h"

const ox_op_table ox_ops_attention = {NULL, 0};
