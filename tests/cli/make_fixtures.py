"""Writes the small models and tensor files tests/cli/test_cli.sh uses.

Run from anywhere with the project's Python (.venv): python tests/cli/make_fixtures.py
The files are committed, so the CLI test needs no Python.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def cast_model(name, src, dst, shape, opset):
    node = helper.make_node("Cast", ["input"], ["output"], to=dst)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("input", src, shape)],
        [helper.make_tensor_value_info("output", dst, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name + ".onnx"))


def save_pb(name, tensor):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(tensor.SerializeToString())


os.makedirs(OUT, exist_ok=True)
# bfloat16 input: ONNX test data written before bfloat16 had a numpy type
# (and numpy itself) stores bfloat16 bits as UINT16.
cast_model("cast_bf16_to_float", TensorProto.BFLOAT16, TensorProto.FLOAT, [2, 3], 13)
bits = (np.arange(6, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
save_pb("bf16_as_uint16.pb", helper.make_tensor("input", TensorProto.UINT16, [2, 3],
                                                bits.tobytes(), raw=True))
save_pb("bf16.pb", helper.make_tensor("input", TensorProto.BFLOAT16, [2, 3],
                                      bits.tobytes(), raw=True))
# string outputs and inputs
cast_model("cast_float_to_string", TensorProto.FLOAT, TensorProto.STRING, [3], 13)
cast_model("cast_string_to_float", TensorProto.STRING, TensorProto.FLOAT, [3], 13)
save_pb("floats3.pb", helper.make_tensor("input", TensorProto.FLOAT, [3], [1.5, -2.0, 1e10]))
# the narrow types: float8 and int4 out, packed int4 in
cast_model("cast_float_to_float8e4m3fn", TensorProto.FLOAT, TensorProto.FLOAT8E4M3FN, [3], 19)
cast_model("cast_float_to_int4", TensorProto.FLOAT, TensorProto.INT4, [3], 21)
cast_model("cast_int4_to_float", TensorProto.INT4, TensorProto.FLOAT, [3], 21)
# -8, 7, -1 packed two per byte, first in the low nibble
save_pb("int4.pb", helper.make_tensor("input", TensorProto.INT4, [3], [-8, 7, -1]))
# Cast corners the ONNX suite leaves out: float8e8m0 with round_mode
# "nearest" and saturate=0, double -> float8e5m2 without saturation
# (overflow to infinity), and their expected values from the reference.
node = helper.make_node("Cast", ["input"], ["output"], to=TensorProto.FLOAT8E8M0,
                        round_mode="nearest", saturate=0)
graph = helper.make_graph([node], "e8m0",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT8E8M0, [4])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)]),
          os.path.join(OUT, "cast_e8m0_nearest.onnx"))
save_pb("e8m0_in.pb", helper.make_tensor("input", TensorProto.FLOAT, [4], [3.0, 5.0, 0.7, 1e38]))
node = helper.make_node("Cast", ["input"], ["output"], to=TensorProto.FLOAT8E5M2, saturate=0)
graph = helper.make_graph([node], "e5m2",
                          [helper.make_tensor_value_info("input", TensorProto.DOUBLE, [4])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT8E5M2, [4])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]),
          os.path.join(OUT, "cast_double_to_e5m2.onnx"))
save_pb("doubles4.pb", helper.make_tensor("input", TensorProto.DOUBLE, [4],
                                          [61440.0, 61439.0, -1e300, 0.3]))
# names with terminal control sequences (ESC, BEL, C1 CSI): the CLI must
# print them escaped. Not run through the checker, which is not the point.
ESC_IN, ESC_OUT, ESC_DIM = "x\x1b[2J", "y\x1b[31m\x9b", "b\x1b]0;title\x07"
node = helper.make_node("Relu", [ESC_IN], [ESC_OUT], name="n\x1b[1m")
graph = helper.make_graph([node], "control_names",
                          [helper.make_tensor_value_info(ESC_IN, TensorProto.FLOAT, [ESC_DIM, 2])],
                          [helper.make_tensor_value_info(ESC_OUT, TensorProto.FLOAT, [ESC_DIM, 2])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                  helper.make_opsetid("evil\x1b[5m", 1)]),
          os.path.join(OUT, "control_names.onnx"))
node = helper.make_node("Re\x1b[2Jlu", ["x"], ["y"], domain="dom\x07")
graph = helper.make_graph([node], "control_op",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                  helper.make_opsetid("dom\x07", 1)]),
          os.path.join(OUT, "control_op.onnx"))
# names that are HTML: onyx check --report must escape them
RELU_NAME = '<script>alert("r")</script>'
NEG_NAME = 'n"><img src=x onerror=\'alert(1)\'> & more'
nodes = [helper.make_node("Relu", ["x<in>"], ["a&b'c"], name=RELU_NAME),
         helper.make_node("Neg", ["a&b'c"], ["y</td>"], name=NEG_NAME)]
graph = helper.make_graph(nodes, "html_names",
                          [helper.make_tensor_value_info("x<in>", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y</td>", TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(OUT, "html_names.onnx"))

if __name__ == "__main__":
    from onnx.reference import ReferenceEvaluator

    for model, data in [("cast_e8m0_nearest", "e8m0_in.pb"), ("cast_double_to_e5m2", "doubles4.pb")]:
        ref = ReferenceEvaluator(os.path.join(OUT, model + ".onnx"))
        x = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(OUT, data)))
        print(model, ref.run(None, {"input": x})[0].astype(np.float32))
