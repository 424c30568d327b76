"""Memory stays flat across many runs: nothing the binding makes per run
(input wrappers, output tensors and their owners, error statuses) is kept."""

import os
import sys

import numpy as np

import onyx
import tiny_models

RUNS = 10_000


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_rss_is_flat_over_10000_runs():
    sess = onyx.InferenceSession(tiny_models.add_one())
    # 16 KiB out per run: a leaked output would grow RSS by 160 MiB
    x = np.ones((1024, 4), np.float32)
    bad = {"x": np.ones((1024, 4), np.float64)}
    for _ in range(500):  # warm-up: arenas, allocator pools
        sess.run(None, {"x": x})
    refs = sys.getrefcount(x)
    before = rss_bytes()
    for i in range(RUNS):
        (y,) = sess.run(None, {"x": x})
        if i % 10 == 0:  # error paths too
            try:
                sess.run(None, bad)
            except onyx.InvalidArgument:
                pass
    growth = rss_bytes() - before
    assert y[0, 0] == 2
    assert sys.getrefcount(x) == refs
    assert growth < 4 << 20, f"RSS grew {growth} bytes over {RUNS} runs"


def test_sessions_are_freed():
    model = tiny_models.add_one()
    x = np.ones((2, 4), np.float32)
    for _ in range(50):
        onyx.InferenceSession(model).run(None, {"x": x})
    before = rss_bytes()
    for _ in range(1000):
        onyx.InferenceSession(model).run(None, {"x": x})
    growth = rss_bytes() - before
    assert growth < 4 << 20, f"RSS grew {growth} bytes over 1000 sessions"
