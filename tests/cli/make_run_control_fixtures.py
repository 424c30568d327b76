"""Writes the models tests/cli/test_cli.sh uses for --time-limit-ms.

Run with the project's Python (.venv): python tests/cli/make_run_control_fixtures.py
The files are committed, so the CLI test needs no Python.
"""
import os

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def loop_forever():
    """Loop with trip count INT64_MAX and no condition: x + 1 forever.

    x is a graph input, so no optimizer can fold the Loop away."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"], name="keep_going"),
         helper.make_node("Add", ["x_in", "one"], ["x_out"], name="step")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [1])],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    loop = helper.make_node("Loop", ["M", "", "x"], ["x_final"], name="loop", body=body)
    graph = helper.make_graph(
        [loop], "loop_forever",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("x_final", TensorProto.FLOAT, [1])],
        [helper.make_tensor("M", TensorProto.INT64, [], [2**63 - 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "loop_forever.onnx"))


if __name__ == "__main__":
    loop_forever()
