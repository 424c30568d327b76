"""Every way a caller can get it wrong raises an onyx.OnyxError subclass
with onyx's message; none crashes the interpreter."""

import numpy as np
import pytest
from onnx import TensorProto

import onyx
import tiny_models


@pytest.fixture
def sess():
    return onyx.InferenceSession(tiny_models.two_io())


def feed(**over):
    f = {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.float32)}
    f.update(over)
    return {k: v for k, v in f.items() if v is not None}


def test_the_classes_form_a_hierarchy():
    for cls in (onyx.InvalidArgument, onyx.InvalidModel, onyx.NotImplemented,
                onyx.RuntimeFailure, onyx.IOFailure, onyx.OutOfMemory, onyx.NotFound,
                onyx.Cancelled, onyx.Timeout):
        assert issubclass(cls, onyx.OnyxError) and isinstance(cls.code, int)
    assert issubclass(onyx.InvalidArgument, ValueError)
    assert onyx.InvalidGraph is onyx.InvalidModel


def test_wrong_dtype(sess):
    with pytest.raises(onyx.InvalidArgument, match=r"input 'a': expected tensor\(float\).*float64"):
        sess.run(None, feed(a=np.ones((2, 3))))


def test_wrong_shape(sess):
    with pytest.raises(onyx.InvalidArgument, match="'b'"):
        sess.run(None, feed(b=np.ones((2, 4), np.float32)))
    with pytest.raises(onyx.InvalidArgument):
        sess.run(None, feed(b=np.ones((2, 3, 1), np.float32)))


def test_unknown_and_missing_inputs(sess):
    with pytest.raises(onyx.OnyxError, match="nope"):
        sess.run(None, feed(nope=np.ones(1, np.float32)))
    with pytest.raises(onyx.InvalidArgument, match="'b'"):
        sess.run(None, feed(b=None))


def test_unknown_output_name(sess):
    with pytest.raises(onyx.OnyxError, match="nope"):
        sess.run(["nope"], feed())


def test_bad_argument_types(sess):
    with pytest.raises(onyx.InvalidArgument, match="dict"):
        sess.run(None, [np.ones((2, 3), np.float32)])
    with pytest.raises(onyx.InvalidArgument, match="str"):
        sess.run(None, {1: np.ones((2, 3), np.float32)})
    with pytest.raises(onyx.InvalidArgument, match="str"):
        sess.run("s", feed())
    with pytest.raises(onyx.InvalidArgument, match="str"):
        sess.run([3], feed())
    with pytest.raises(onyx.InvalidArgument, match="RunOptions"):
        sess.run(None, feed(), run_options=object())
    with pytest.raises(ValueError):
        sess.run(None, feed(a=[["not", "numbers", "x"]] * 2))
    with pytest.raises(TypeError):
        onyx.InferenceSession(tiny_models.two_io(), unknown_argument=1)


def test_bad_model_bytes_and_paths(tmp_path):
    with pytest.raises(onyx.InvalidModel):
        onyx.InferenceSession(b"this is not an onnx model")
    with pytest.raises(onyx.InvalidModel):
        onyx.InferenceSession(tiny_models.two_io()[:40])
    with pytest.raises(onyx.IOFailure):
        onyx.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError):
        onyx.InferenceSession(12)


def test_bad_options():
    model = tiny_models.add_one()
    for attr, value in (("intra_op_num_threads", -1), ("graph_optimization_level", 7),
                        ("log_severity_level", 9)):
        opts = onyx.SessionOptions()
        setattr(opts, attr, value)
        with pytest.raises(onyx.InvalidArgument):
            onyx.InferenceSession(model, opts)
    opts = onyx.SessionOptions()
    opts.enable_profiling = True
    with pytest.raises(onyx.NotImplemented):
        onyx.InferenceSession(model, opts)
    with pytest.raises(onyx.InvalidArgument, match="unknown execution provider 'tpu'"):
        onyx.InferenceSession(model, providers=["tpu"])
    with pytest.raises(onyx.InvalidArgument, match="must be last"):
        onyx.InferenceSession(model, providers=["cpu", "vulkan"])
    with pytest.raises(onyx.InvalidArgument, match="entries"):
        onyx.InferenceSession(model, providers=["cpu"], provider_options=[{}, {}])
    with pytest.raises(onyx.InvalidArgument):
        onyx.InferenceSession(model, providers=[("cpu", {"no_such_key": "1"})])
    with pytest.raises(onyx.InvalidArgument):
        onyx.InferenceSession(model, providers="cpu")


def test_closed_session(sess):
    sess.close()
    for call in (lambda: sess.run(None, feed()), sess.get_nodes, lambda: sess.save_subgraph([], "x.onnx")):
        with pytest.raises(onyx.InvalidArgument, match="closed"):
            call()
    sess.close()  # twice is fine
    assert [i.name for i in sess.get_inputs()] == ["a", "b"]  # kept from creation


def test_outputs_outlive_the_session():
    sess = onyx.InferenceSession(tiny_models.add_one())
    (y,) = sess.run(None, {"x": np.zeros((2, 4), np.float32)})
    sess.close()
    del sess
    np.testing.assert_array_equal(y, np.ones((2, 4), np.float32))


def test_runtime_failure_is_raised_not_crashed():
    # a Gather index out of range is a run-time failure in onyx
    from onnx import helper
    g = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    sess = onyx.InferenceSession(m.SerializeToString())
    with pytest.raises(onyx.OnyxError, match="[Gg]ather|index|range"):
        sess.run(None, {"x": np.zeros(3, np.float32), "i": np.array([7])})
    (y,) = sess.run(None, {"x": np.arange(3, dtype=np.float32), "i": np.array([2])})
    assert y[0] == 2


def test_run_options_subclass_without_init(sess):
    class Lazy(onyx.RunOptions):
        def __init__(self):  # forgets RunOptions.__init__
            pass

    ro = Lazy()
    with pytest.raises(onyx.InvalidArgument, match="__init__"):
        sess.run(None, feed(), ro)
    with pytest.raises(onyx.InvalidArgument, match="__init__"):
        ro.terminate = True
