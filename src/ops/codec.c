/* Schema of the image decoding operator (ImageDecoder, opset 20). */
#include "ops/op.h"

const ox_op_table ox_ops_codec = {NULL, 0};
