/* Shape inference shared by the ONNX attention operators' schemas and
 * the onyx-domain operators that reuse their semantics. */
#ifndef ONYX_OPS_ATTENTION_H
#define ONYX_OPS_ATTENTION_H

#include "ops/op.h"

/* RotaryEmbedding-23's rule: the output has the input's type and shape;
 * checks the element types, the rank (3 or 4) and the attributes. */
int ox_infer_rotary_embedding(ox_infer_ctx *c);

#endif
