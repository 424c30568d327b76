/* Shared between the contrib schemas and their kernels: which ONNX
 * operator a fused contrib operator extends, and which activations the
 * fused operators may name. */
#ifndef ONYX_OPS_CONTRIB_H
#define ONYX_OPS_CONTRIB_H

#include "core/layout.h" /* OX_CHANNEL_BLOCK */
#include "ir/ir.h"

/* Fills *view with node seen as its base ONNX operator (FusedConv as a
 * Conv of opset 11 with its first three inputs, FusedGemm as Gemm, ...):
 * same attributes, inputs and outputs. The view borrows node's arrays.
 * Returns -1 when the operator has no base. */
int ox_contrib_base_view(const ir_node *node, ir_node *view);

/* Whether `activation` (Relu, Sigmoid, Tanh, LeakyRelu, Clip,
 * HardSigmoid, Elu, Softplus) is one the fused operators support. */
int ox_contrib_activation_known(const char *name);

#endif
