"""The onnxruntime-style API on small in-memory models and the bundled
example, against onnxruntime in the same process."""

import importlib.metadata

import ml_dtypes
import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime
import pytest
from onnx import TensorProto

import onyx
import tiny_models
from conftest import built_file


def test_version_is_the_library_and_the_package_version():
    assert onyx.__version__ == importlib.metadata.version("onyx")
    assert onyx.__version__.count(".") == 2


def test_providers_are_named_like_onnxruntime():
    available = onyx.get_available_providers()
    assert available == onyx.get_all_providers()
    assert "CPUExecutionProvider" in available
    assert all(p.endswith("ExecutionProvider") for p in available)
    assert onyx.get_device() in ("CPU", "GPU")
    cpu = [d for d in onyx.get_devices("cpu")]
    assert len(cpu) == 1 and cpu[0]["provider"] == "cpu" and cpu[0]["usable"] == "yes"


def test_session_describes_inputs_and_outputs():
    sess = onyx.InferenceSession(tiny_models.two_io())
    inputs, outputs = sess.get_inputs(), sess.get_outputs()
    assert [(i.name, i.type, i.shape) for i in inputs] == [
        ("a", "tensor(float)", ["n", 3]), ("b", "tensor(float)", [None, 3])]
    assert [o.name for o in outputs] == ["s", "p"]
    assert outputs[0].shape == ["n", 3]
    ref = onnxruntime.InferenceSession(tiny_models.two_io())
    assert [(i.name, i.type) for i in ref.get_inputs()] == [(i.name, i.type) for i in inputs]
    assert "NodeArg(name='a'" in repr(inputs[0])
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_run_all_or_named_outputs_matches_onnxruntime():
    model = tiny_models.two_io()
    sess, ref = onyx.InferenceSession(model), onnxruntime.InferenceSession(model)
    rng = np.random.default_rng(1)
    feed = {"a": rng.standard_normal((5, 3), dtype=np.float32),
            "b": rng.standard_normal((5, 3), dtype=np.float32)}
    got, want = sess.run(None, feed), ref.run(None, feed)
    assert len(got) == 2
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=0, atol=0)  # one add or multiply: exact
    (p,) = sess.run(["p"], feed)
    np.testing.assert_array_equal(p, want[1])
    s, p = sess.run(["s", "p"], {"a": feed["a"].tolist(), "b": feed["b"]})  # lists convert
    np.testing.assert_array_equal(s, want[0])


def test_session_from_path_options_and_providers(tmp_path):
    path = tmp_path / "add.onnx"
    path.write_bytes(tiny_models.add_one())
    opts = onyx.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    sess = onyx.InferenceSession(str(path), sess_options=opts,
                                 providers=["CPUExecutionProvider"])
    assert sess.get_session_options() is opts
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x + 1)
    for level in onyx.GraphOptimizationLevel:
        opts.graph_optimization_level = level
        assert onyx.InferenceSession(path, opts, providers=["cpu"]).run(None, {"x": x})[0][1, 3] == 8


def test_vulkan_provider_and_its_options_when_built():
    if "VulkanExecutionProvider" not in onyx.get_available_providers():
        # a build without Vulkan refuses it by its onyx name
        with pytest.raises(onyx.InvalidArgument, match="vulkan"):
            onyx.InferenceSession(tiny_models.add_one(), providers=["vulkan"])
        return
    sess = onyx.InferenceSession(tiny_models.add_one(),
                                 providers=["VulkanExecutionProvider", "CPUExecutionProvider"],
                                 provider_options=[{"place": "all"}, {}])
    assert sess.get_providers() == ["VulkanExecutionProvider", "CPUExecutionProvider"]
    assert sess.get_provider_options()["VulkanExecutionProvider"] == {"place": "all"}
    x = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x + 1)
    with pytest.raises(onyx.InvalidArgument, match="no_such_key"):
        onyx.InferenceSession(tiny_models.add_one(), providers=[("vulkan", {"no_such_key": "1"})])


def test_unavailable_onnxruntime_provider_is_dropped_with_a_warning():
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        sess = onyx.InferenceSession(tiny_models.add_one(),
                                     providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]


# every element type numpy (with ml_dtypes) can hold, through Identity
DTYPES = [
    (TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
    (TensorProto.FLOAT16, np.float16), (TensorProto.BFLOAT16, ml_dtypes.bfloat16),
    (TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8),
    (TensorProto.INT16, np.int16), (TensorProto.UINT16, np.uint16),
    (TensorProto.INT32, np.int32), (TensorProto.UINT32, np.uint32),
    (TensorProto.INT64, np.int64), (TensorProto.UINT64, np.uint64),
    (TensorProto.BOOL, np.bool_), (TensorProto.COMPLEX64, np.complex64),
    (TensorProto.COMPLEX128, np.complex128),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
    (TensorProto.INT4, ml_dtypes.int4), (TensorProto.UINT4, ml_dtypes.uint4),
    (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn),
]


@pytest.mark.parametrize("onnx_type,np_type", DTYPES, ids=[str(t[1]) for t in DTYPES])
def test_every_element_type_round_trips(onnx_type, np_type):
    assert onyx._onyx.HAVE_ML_DTYPES == 1
    sess = onyx.InferenceSession(tiny_models.identity(onnx_type))
    x = (np.arange(12) % 5).astype(np_type).reshape(3, 4)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == np.dtype(np_type) and y.shape == (3, 4)
    np.testing.assert_array_equal(y.view(np.uint8), x.view(np.uint8))
    assert sess.get_inputs()[0].type.startswith("tensor(")


def test_strings_in_and_out():
    sess = onyx.InferenceSession(tiny_models.identity(TensorProto.STRING))
    for x in (np.array([["a", "bé"], ["", "long string"]]),
              np.array(["x", "y", "z"], dtype=object)):
        (y,) = sess.run(None, {"x": x})
        assert y.dtype == object and y.shape == x.shape
        assert y.tolist() == x.tolist()
    with pytest.raises(onyx.InvalidArgument, match="not str"):
        sess.run(None, {"x": np.array([1, 2], dtype=object)})


def test_scalars_and_empty_tensors():
    sess = onyx.InferenceSession(tiny_models.identity(TensorProto.FLOAT))
    (y,) = sess.run(None, {"x": np.float32(2.5)})
    assert y.shape == () and y == np.float32(2.5)
    (y,) = sess.run(None, {"x": np.zeros((0, 3), np.float32)})
    assert y.shape == (0, 3)


def test_run_options_terminate_and_time_limit():
    sess = onyx.InferenceSession(tiny_models.slow_loop(2_000_000))
    x = np.zeros(4, np.float32)
    ro = onyx.RunOptions()
    ro.terminate = True
    with pytest.raises(onyx.Cancelled, match="cancel"):
        sess.run(None, {"x": x}, ro)
    ro.terminate = False
    assert ro.terminate is False
    ro.time_limit_ms = 20
    with pytest.raises(onyx.Timeout):
        sess.run(None, {"x": x}, ro)
    (y,) = onyx.InferenceSession(tiny_models.slow_loop(10)).run(None, {"x": x}, ro)
    np.testing.assert_array_equal(y, x + 10)


def test_bundled_example_matches_onnxruntime(build_dir):
    model = built_file(build_dir, "examples/bars.onnx")
    tensor = onnx.TensorProto()
    tensor.ParseFromString(built_file(build_dir, "examples/vertical_bar.pb").read_bytes())
    x = onnx.numpy_helper.to_array(tensor)
    sess, ref = onyx.InferenceSession(str(model)), onnxruntime.InferenceSession(str(model))
    name = sess.get_inputs()[0].name
    got, want = sess.run(None, {name: x}), ref.run(None, {name: x})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-4)  # probabilities (prob tolerance)
    assert int(np.argmax(got[0])) == 0  # the vertical bar is class 0


def test_without_ml_dtypes_the_storage_types_stand_in(tmp_path):
    """With ml_dtypes missing, bfloat16 comes back as its uint16 bits and
    int4 as int8 values (onyx's one-element-per-byte layout)."""
    import subprocess
    import sys
    (tmp_path / "bf16.onnx").write_bytes(tiny_models.identity(TensorProto.BFLOAT16))
    (tmp_path / "i4.onnx").write_bytes(tiny_models.identity(TensorProto.INT4))
    code = f"""
import sys
sys.modules["ml_dtypes"] = None  # import ml_dtypes now fails
import numpy as np, onyx
assert onyx._onyx.HAVE_ML_DTYPES == 0
y = onyx.InferenceSession({str(tmp_path / "bf16.onnx")!r}).run(
    None, {{"x": np.array([0x3F80, 0x4000], np.uint16)}})[0]
assert y.dtype == np.uint16 and y.tolist() == [0x3F80, 0x4000], y
y = onyx.InferenceSession({str(tmp_path / "i4.onnx")!r}).run(
    None, {{"x": np.array([-8, 7], np.int8)}})[0]
assert y.dtype == np.int8 and y.tolist() == [-8, 7], y
print("ok")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
