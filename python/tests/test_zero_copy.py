"""Inputs of the right dtype and layout are read in place, and outputs are
numpy arrays over onyx's own memory: shown with tracemalloc, which sees
every buffer numpy allocates (a copy by the binding would be one) but none
of onyx's."""

import tracemalloc

import numpy as np

import onyx
import tiny_models

MB = 1 << 20


def peak_of(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_contiguous_input_is_read_in_place_and_others_copied_once():
    sess = onyx.InferenceSession(tiny_models.reduce_sum())
    x = np.ones((1024, 8192), np.float32)  # 32 MiB
    sess.run(None, {"x": x})  # warm-up: first-run allocations
    (s,), peak = peak_of(lambda: sess.run(None, {"x": x}))
    assert s == x.size
    assert peak < MB, f"{peak} bytes allocated by numpy for a 32 MiB input read in place"
    strided = x[:, ::2]  # 16 MiB, not contiguous: one copy
    (s,), peak = peak_of(lambda: sess.run(None, {"x": strided}))
    assert s == strided.size
    assert strided.nbytes <= peak < strided.nbytes + MB


def test_output_is_onyx_memory():
    n = 8 * MB // 4
    sess = onyx.InferenceSession(tiny_models.big_output(n))
    x = np.array([3.0], np.float32)
    sess.run(None, {"x": x})
    (y,), peak = peak_of(lambda: sess.run(None, {"x": x}))
    assert y.shape == (n,) and y[0] == 3 and y[-1] == 3
    assert peak < MB, f"{peak} bytes allocated by numpy for an 8 MiB output"
    owner = y.base
    assert isinstance(owner, onyx._onyx.Tensor)
    assert y.ctypes.data == owner.data_ptr and owner.nbytes == y.nbytes
    assert y.flags.c_contiguous and y.flags.owndata is False


def test_output_memory_lives_while_a_view_does():
    sess = onyx.InferenceSession(tiny_models.add_one())
    (y,) = sess.run(None, {"x": np.zeros((2, 4), np.float32)})
    view = y[1]
    del y
    np.testing.assert_array_equal(view, np.ones(4, np.float32))
    assert isinstance(view.base.base, onyx._onyx.Tensor)
