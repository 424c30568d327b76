"""What onyx adds to onnxruntime's API, in the same style: the optimized
graph (nodes, save_subgraph, optimized_model_filepath), shadow runs
(verify_first_runs), provider statistics, memory limit, cache folder."""

import numpy as np
import onnx
import onnxruntime
import pytest

import onyx
import tiny_models


def test_nodes_and_optimized_model_file(tmp_path):
    opts = onyx.SessionOptions()
    opts.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    sess = onyx.InferenceSession(tiny_models.two_io(), opts)
    nodes = sess.get_nodes()
    assert sorted(n[1] for n in nodes) == ["Add", "Mul"]
    assert all(n[3] == "cpu" for n in nodes)
    saved = onnx.load(opts.optimized_model_filepath)
    onnx.checker.check_model(saved)
    ref = onnxruntime.InferenceSession(opts.optimized_model_filepath)
    feed = {"a": np.full((2, 3), 2, np.float32), "b": np.full((2, 3), 3, np.float32)}
    want = dict(zip([o.name for o in ref.get_outputs()], ref.run(None, feed)))
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value)
    sess.save_subgraph([nodes[0][0]], tmp_path / "one.onnx")
    assert len(onnx.load(str(tmp_path / "one.onnx")).graph.node) == 1
    with pytest.raises(onyx.OnyxError, match="nope"):
        sess.save_subgraph(["nope"], tmp_path / "bad.onnx")


def test_shadow_runs_are_counted():
    opts = onyx.SessionOptions()
    opts.verify_first_runs = 3
    sess = onyx.InferenceSession(tiny_models.add_one(), opts)
    x = np.ones((2, 4), np.float32)
    for _ in range(5):
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x + 1)
    stats = sess.get_verify_stats()
    assert stats["runs_verified"] == 3 and stats["mismatches"] == 0
    assert stats["report"] == "" and stats["on_reference"] == 0
    opts.verify_atol = -1
    with pytest.raises(onyx.InvalidArgument):
        onyx.InferenceSession(tiny_models.add_one(), opts)


def test_provider_stats():
    sess = onyx.InferenceSession(tiny_models.add_one())
    sess.run(None, {"x": np.ones((1, 4), np.float32)})
    stats = sess.get_provider_stats("CPUExecutionProvider")
    assert stats["kernel_launches"] == 0 and "device_faults" in stats
    assert stats == sess.get_provider_stats("cpu")
    with pytest.raises(onyx.OnyxError):
        sess.get_provider_stats("vulkan")  # not one of this session's providers


def test_memory_limit_and_cache_dir(tmp_path):
    opts = onyx.SessionOptions()
    opts.memory_limit = 1024
    opts.cache_dir = str(tmp_path)
    sess = onyx.InferenceSession(tiny_models.add_one(), opts)
    np.testing.assert_array_equal(sess.run(None, {"x": np.ones((1, 4), np.float32)})[0], 2)
    with pytest.raises(onyx.OutOfMemory):
        sess.run(None, {"x": np.ones((1024, 4), np.float32)})  # 16 KiB out, past 1 KiB


def test_compile_model_round_trip(tmp_path):
    """onyx.compile_model writes the optimized file and the ONNX twin; both
    load in InferenceSession and give the source model's outputs bit for
    bit; a bad format and a truncated file raise onyx's errors."""
    src = tmp_path / "m.onnx"
    src.write_bytes(tiny_models.matmul_add())
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    want = onyx.InferenceSession(str(src)).run(None, {"x": x})
    for name, extra in (("m.onyx", {}), ("twin.onnx", {"external_data_min": 16})):
        out = tmp_path / name
        onyx.compile_model(src, out, **extra)
        got = onyx.InferenceSession(str(out)).run(None, {"x": x})
        for a, b in zip(got, want):
            assert a.tobytes() == b.tobytes()
    # from memory (the twin's external data needs its folder: not from bytes)
    got = onyx.InferenceSession((tmp_path / "m.onyx").read_bytes()).run(None, {"x": x})
    for a, b in zip(got, want):
        assert a.tobytes() == b.tobytes()
    assert (tmp_path / "twin.onnx.data").exists()
    with pytest.raises(onyx.InvalidArgument):
        onyx.compile_model(src, tmp_path / "x.bin", format="tflite")
    data = (tmp_path / "m.onyx").read_bytes()
    with pytest.raises(onyx.InvalidModel, match="truncated"):
        onyx.InferenceSession(data[: len(data) // 2])
