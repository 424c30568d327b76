/* Schemas of onyx's own fused operators on matrix products (domain
 * "onyx", version 1), written by the optimizer at level ALL
 * (src/optimizer/fuse_matmul.c). They stay ONNX nodes, so an optimized
 * graph can be saved with an opset import of domain "onyx".
 *
 * onyx.FusedMatMul(A, B, bias?) -> Y
 *   Y = activation(MatMul(A, B) + bias)
 *   A      float32 tensor [..., M, K] (or [K])
 *   B      float32 matrix [K, N], or [N, K] with transB (2-D only: the
 *          weights of a linear layer)
 *   bias   optional float32 with N elements along the last axis ([N],
 *          [1, N], [1, 1, N]...; its rank at most A's), broadcast over
 *          every row of Y
 *   Y      MatMul's output shape, [..., M, N]
 * Attributes:
 *   transB             int: 1 when B is stored [N, K] and the product
 *                      reads its transpose (Gemm's transB), so a fused
 *                      Gemm keeps its weights as they are, with no copy
 *                      at load; 0 (the default) otherwise
 *   activation         string: "" (none, the default), Relu, Clip,
 *                      Sigmoid, HardSigmoid, HardSwish, SiLU, LeakyRelu,
 *                      Tanh, Gelu (exact, erf), GeluTanh (tanh fit)
 *   activation_params  floats: Clip min, max; HardSigmoid alpha, beta;
 *                      LeakyRelu alpha (the standalone operators'
 *                      defaults when absent)
 * The activation is computed as the standalone ONNX operator computes it
 * (src/ep/cpu/kernels/activation.h); its name is checked by the kernel. */
#include "ops/contrib.h"
#include "ops/op.h"

static int infer_fused_matmul(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "A") || ox_infer_need_tensor(c, 1, "B") ||
        ox_infer_check_float(c, 0, "A", 1))
        return -1;
    const ir_type *b = ox_infer_in(c, 1);
    if (b->rank >= 0 && b->rank != 2)
        return ox_infer_fail(c, ox_infer_bad_code(c), "FusedMatMul: B must be 2-D, got rank %d",
                             b->rank);
    ir_node view;
    const ox_op_schema *mm = ox_op_find("", "MatMul", 13);
    if (ox_contrib_base_view(c->node, &view) != 0 || !mm || !mm->infer)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "FusedMatMul: MatMul is not available");
    int trans_b = ir_attr_int(c->node, "transB", 0) != 0;
    /* with transB, MatMul's rule runs on B's transposed type */
    ir_type bt = *b;
    if (trans_b && bt.rank == 2) {
        bt.dims[0] = b->dims[1];
        bt.dims[1] = b->dims[0];
        bt.dim_params[0] = b->dim_params[1];
        bt.dim_params[1] = b->dim_params[0];
    }
    const ir_type *ins[2] = {ox_infer_in(c, 0), &bt};
    ox_infer_ctx sub = *c;
    sub.node = &view;
    sub.n_inputs = 2;
    sub.inputs = ins;
    if (mm->infer(&sub) != 0) return -1;
    const ir_type *bias = ox_infer_in(c, 2), *y = ox_infer_out(c, 0);
    if (!bias || bias->rank < 0) return 0;
    if (ox_infer_same_dtype(c, 0, 2, "A", "bias")) return -1;
    int64_t n = bt.rank == 2 ? bt.dims[1] : -1;
    int ok = bias->rank >= 1 && (y->rank < 0 || bias->rank <= y->rank);
    for (int d = 0; ok && d < bias->rank - 1; d++) ok = bias->dims[d] == 1 || bias->dims[d] < 0;
    if (ok && n >= 0 && bias->dims[bias->rank - 1] >= 0) ok = bias->dims[bias->rank - 1] == n;
    if (!ok)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "FusedMatMul: bias must hold N = %lld values along the last axis",
                             (long long)n);
    return 0;
}

static const ox_op_schema OPS[] = {
    {"onyx", "FusedMatMul", 1, 1, 2, 3, 1, 1, infer_fused_matmul},
};

const ox_op_table ox_ops_onyx_matmul = {OPS, sizeof OPS / sizeof OPS[0]};
