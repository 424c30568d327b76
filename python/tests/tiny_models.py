"""Small models built in memory with onnx.helper, as serialized bytes."""

import numpy as np
import onnx
from onnx import TensorProto, helper


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


def add_one(dtype=TensorProto.FLOAT, shape=("batch", 4)):
    """y = x + 1, x of shape [batch, 4] (symbolic first dimension)."""
    one = helper.make_tensor("one", dtype, [], [1])
    return _model([helper.make_node("Add", ["x", "one"], ["y"])],
                  [helper.make_tensor_value_info("x", dtype, list(shape))],
                  [helper.make_tensor_value_info("y", dtype, list(shape))], [one])


def two_io():
    """s = a + b, p = a * b: two inputs, two outputs, one unknown dimension."""
    return _model([helper.make_node("Add", ["a", "b"], ["s"], name="add"),
                   helper.make_node("Mul", ["a", "b"], ["p"], name="mul")],
                  [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 3]),
                   helper.make_tensor_value_info("b", TensorProto.FLOAT, [None, 3])],
                  [helper.make_tensor_value_info("s", TensorProto.FLOAT, ["n", 3]),
                   helper.make_tensor_value_info("p", TensorProto.FLOAT, None)])


def identity(dtype, opset=21):
    """y = x of any shape, for one element type (opset 21 has the 4-bit ones)."""
    return _model([helper.make_node("Identity", ["x"], ["y"])],
                  [helper.make_tensor_value_info("x", dtype, None)],
                  [helper.make_tensor_value_info("y", dtype, None)], opset=opset)


def reduce_sum():
    """s = sum(x): reads all of x, writes one number."""
    return _model([helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                  [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])], opset=17)


def slow_loop(iterations):
    """A Loop of `iterations` Adds over x: a run long enough to watch."""
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, None)], [one])
    n = helper.make_tensor("n", TensorProto.INT64, [], [iterations])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    return _model([helper.make_node("Loop", ["n", "cond", "x"], ["y"], body=body)],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [n, cond])


def big_output(n):
    """y = Expand(x, [n]): n floats out of one in (outputs without copies)."""
    shape = helper.make_tensor("shape", TensorProto.INT64, [1], [n])
    return _model([helper.make_node("Expand", ["x", "shape"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [shape])


def check(model_bytes):
    onnx.checker.check_model(onnx.load_from_string(model_bytes))
    return model_bytes




def matmul_add():
    """y = relu(x @ w + b), x [3, 4], w [4, 5] and b [5] constants: weights
    big enough to go to an external-data file."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 5],
                           (np.arange(20, dtype=np.float32) / 9 - 1).tolist())
    b = helper.make_tensor("b", TensorProto.FLOAT, [5], [0.5, -0.25, 0.0, 1.0, -1.0])
    return _model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                   helper.make_node("Add", ["m", "b"], ["a"]),
                   helper.make_node("Relu", ["a"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])], [w, b])
