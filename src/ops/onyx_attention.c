/* Schemas of onyx's own operators on attention blocks (domain "onyx",
 * version 1), written by the optimizer at level ALL. They stay ONNX
 * nodes, so an optimized graph can be saved with an opset import of
 * domain "onyx".
 *
 * onyx.RotaryEmbedding(X, cos_cache, sin_cache, position_ids?) -> Y
 *   written by src/optimizer/fuse_rotary.c for the rotary embeddings that
 *   models exported before opset 23 write out (x * cos + rotate_half(x) *
 *   sin). The inputs, attributes (interleaved, num_heads,
 *   rotary_embedding_dim) and results of ONNX RotaryEmbedding-23, so that
 *   a graph importing an older opset can hold it, with one difference:
 *   without position_ids the caches may be [1, S, rotary_dim / 2], one
 *   table for every batch entry (a model's rotary table with its batch
 *   axis broadcast), as well as [B, S, rotary_dim / 2].
 *   X          float32, float16 or bfloat16 [B, H, S, D], or [B, S, H * D]
 *              with num_heads
 *   cos_cache, sin_cache
 *              X's type; [B or 1, S, rotary_dim / 2], or [max_position,
 *              rotary_dim / 2] with position_ids
 *   Y          X's type and shape
 * Its CPU kernel is RotaryEmbedding-23's (src/ep/cpu/kernels/attention_ops.c). */
#include "ops/attention.h"
#include "ops/op.h"

static const ox_op_schema OPS[] = {
    {"onyx", "RotaryEmbedding", 1, 1, 3, 4, 1, 1, ox_infer_rotary_embedding},
};

const ox_op_table ox_ops_onyx_attention = {OPS, sizeof OPS / sizeof OPS[0]};
