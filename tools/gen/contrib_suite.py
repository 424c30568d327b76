#!/usr/bin/env python3
"""Writes a conformance suite for the com.microsoft contrib operators onyx
implements, in the ONNX backend-test layout (node/<test>/model.onnx and
test_data_set_0/{input,output}_K.pb), with ONNX Runtime's outputs as the
expected values. onyx's conformance runner then runs it like any suite.

Cases cover each operator's attributes and corners (activations with
parameters, the residual input of FusedConv, transposed FusedMatMul
operands with alpha, skip tensors that broadcast over the batch, omitted
optional inputs and requested optional outputs).

usage: contrib_suite.py OUT_DIR
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
rng = np.random.default_rng(20261202)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def case(name, op, inputs, outputs, attrs=None, domain=MS, opset=17, initializers=None,
         atol=None, in_type=TensorProto.FLOAT, out_type=TensorProto.FLOAT):
    """inputs: list of (name, array) fed at run time, None for an omitted
    optional input; outputs: list of output names ("" for omitted); atol:
    an absolute tolerance for the case (data.json, as the ONNX suites
    give one), where ONNX Runtime's own kernel is an approximation."""
    initializers = initializers or {}
    in_names = [n if n is not None else "" for n, _ in inputs]
    node = helper.make_node(op, in_names, outputs, domain=domain, **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, in_type, a.shape)
                    for n, a in inputs if n is not None and n not in initializers]
    inits = [numpy_helper.from_array(a, n) for n, a in initializers.items()]
    graph_outputs = [helper.make_tensor_value_info(o, out_type, None)
                     for o in outputs if o]
    graph = helper.make_graph([node], name, graph_inputs, graph_outputs, inits)
    imports = [helper.make_opsetid("", opset)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=imports, ir_version=8)
    feeds = {n: a for n, a in inputs if n is not None and n not in initializers}
    so = ort.SessionOptions()
    # the operators themselves, not what ORT would rewrite them into
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    results = sess.run([o for o in outputs if o], feeds)
    return name, model, list(feeds.values()), results, atol


def cases():
    x = rand(2, 3, 8, 8)
    w = rand(4, 3, 3, 3, scale=0.3)
    b = rand(4)
    z = rand(2, 4, 8, 8)
    conv_attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    for act, params in [("Relu", None), ("LeakyRelu", [0.2]), ("Clip", [-0.5, 0.7]),
                        ("HardSigmoid", [0.3, 0.4]), ("Sigmoid", None), ("Tanh", None)]:
        attrs = dict(conv_attrs, activation=act)
        if params:
            attrs["activation_params"] = params
        yield case(f"test_fusedconv_{act.lower()}", "FusedConv",
                   [("X", x), ("W", w), ("B", b)], ["Y"], attrs)
    yield case("test_fusedconv_relu_residual_z", "FusedConv",
               [("X", x), ("W", w), ("B", b), ("Z", z)], ["Y"], dict(conv_attrs, activation="Relu"))
    yield case("test_fusedconv_no_bias_strided_grouped", "FusedConv",
               [("X", rand(1, 4, 9, 9)), ("W", rand(6, 2, 3, 3)), (None, None)], ["Y"],
               {"kernel_shape": [3, 3], "strides": [2, 2], "group": 2, "activation": "Relu"})

    a, bm, c = rand(5, 7), rand(7, 3), rand(3)
    yield case("test_fusedgemm_relu", "FusedGemm", [("A", a), ("B", bm), ("C", c)], ["Y"],
               {"activation": "Relu"})
    yield case("test_fusedgemm_leakyrelu_trans_alpha_beta", "FusedGemm",
               [("A", rand(7, 5)), ("B", rand(3, 7)), ("C", rand(5, 3))], ["Y"],
               {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0, "activation": "LeakyRelu",
                "activation_alpha": 0.1})

    yield case("test_fusedmatmul_plain", "FusedMatMul", [("A", rand(2, 4, 5)), ("B", rand(5, 6))],
               ["Y"])
    yield case("test_fusedmatmul_transb_alpha", "FusedMatMul",
               [("A", rand(2, 3, 4, 5)), ("B", rand(2, 3, 6, 5))], ["Y"],
               {"transB": 1, "alpha": 0.125})
    yield case("test_fusedmatmul_transa_transb_broadcast", "FusedMatMul",
               [("A", rand(3, 5, 4)), ("B", rand(6, 5))], ["Y"], {"transA": 1, "transB": 1})

    v = rand(2, 5, 16, scale=2.0)
    yield case("test_quickgelu_default_alpha", "QuickGelu", [("X", v)], ["Y"])
    yield case("test_quickgelu_alpha", "QuickGelu", [("X", v)], ["Y"], {"alpha": 1.0})
    yield case("test_contrib_gelu", "Gelu", [("X", v)], ["Y"])
    yield case("test_fastgelu", "FastGelu", [("X", v)], ["Y"], atol=1e-6)
    # ONNX Runtime evaluates tanh with a fast approximation: for x < -4 its
    # outputs (about -5e-7) are off by up to 3e-7 from the exact function,
    # which onyx computes (checked in float64)
    yield case("test_fastgelu_bias", "FastGelu", [("X", v), ("bias", rand(16))], ["Y"],
               atol=1e-6)
    yield case("test_biasgelu", "BiasGelu", [("A", v), ("B", rand(16))], ["C"])

    h = 32
    xs, sk = rand(2, 6, h), rand(2, 6, h)
    g, be, bi = rand(h) + 1.0, rand(h), rand(h)
    yield case("test_skiplayernorm_all_outputs", "SkipLayerNormalization",
               [("input", xs), ("skip", sk), ("gamma", g), ("beta", be), ("bias", bi)],
               ["output", "mean", "inv_std_var", "input_skip_bias_sum"], {"epsilon": 1e-5})
    yield case("test_skiplayernorm_no_beta_bias", "SkipLayerNormalization",
               [("input", xs), ("skip", sk), ("gamma", g)], ["output"], {"epsilon": 1e-6})
    yield case("test_skiplayernorm_skip_broadcast", "SkipLayerNormalization",
               [("input", xs), ("skip", rand(1, 6, h)), ("gamma", g), ("beta", be)], ["output"])
    yield case("test_skiplayernorm_skip_2d", "SkipLayerNormalization",
               [("input", xs), ("skip", rand(6, h)), ("gamma", g), ("beta", be)],
               ["output", "", "", "input_skip_bias_sum"])
    yield case("test_skipsimplifiedlayernorm", "SkipSimplifiedLayerNormalization",
               [("input", xs), ("skip", sk), ("gamma", g), ("bias", bi)],
               ["output", "", "", "input_skip_bias_sum"], {"epsilon": 1e-6})
    yield case("test_simplifiedlayernorm_last_axis", "SimplifiedLayerNormalization",
               [("X", rand(3, 4, h)), ("scale", g)], ["Y"], {"axis": -1, "epsilon": 1e-5},
               domain="")
    yield case("test_simplifiedlayernorm_axis1", "SimplifiedLayerNormalization",
               [("X", rand(3, 4, 8)), ("scale", rand(4, 8))], ["Y", "inv_std_var"],
               {"axis": 1}, domain="")
    yield case("test_layernorm_contrib_opset12", "LayerNormalization",
               [("X", rand(3, 4, h)), ("scale", g), ("B", be)], ["Y"], {"axis": -1,
                                                                          "epsilon": 1e-5},
               domain="", opset=12)


def regex_cases():
    """RegexFullMatch (ai.onnx, RE2 syntax) on the constructs onyx rewrites
    for POSIX: an escaped '-' inside brackets, \\d, non-capturing groups,
    lazy quantifiers, negated classes and word boundaries."""
    words = np.array(["a-z", "abz", "q", "555-1234", "55-1234", "abcdab", "abab", "a__b",
                      "a xb", "!", "foo bar", "foobar", ""], dtype=object)
    for i, pattern in enumerate([r"[a\-z]+", r"\d{3}-\d{4}", r"(?:ab|cd)+", r"a.*?b", r"[^\w\s]",
                                 r"\bfoo\b.*", r"[\w.\-]{0,3}"]):
        yield case(f"test_regex_full_match_posix_rewrite_{i}", "RegexFullMatch",
                   [("X", words)], ["Y"], {"pattern": pattern}, domain="", opset=20,
                   in_type=TensorProto.STRING, out_type=TensorProto.BOOL)


def main():
    out = os.path.join(sys.argv[1], "node")
    if os.path.isdir(out):
        shutil.rmtree(out)
    n = 0
    for name, model, inputs, outputs, atol in [*cases(), *regex_cases()]:
        d = os.path.join(out, name, "test_data_set_0")
        os.makedirs(d)
        if atol is not None:
            with open(os.path.join(out, name, "data.json"), "w") as f:
                json.dump({"atol": atol}, f)
        onnx.save(model, os.path.join(out, name, "model.onnx"))
        for k, a in enumerate(inputs):
            with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a)).SerializeToString())
        for k, a in enumerate(outputs):
            with open(os.path.join(d, f"output_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a)).SerializeToString())
        n += 1
    print(f"contrib suite: {n} cases in {out}")


if __name__ == "__main__":
    main()
