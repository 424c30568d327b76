"""One session run by several Python threads at once: every result is the
single-threaded one, and the GIL is released while onyx runs."""

import threading
import time

import numpy as np
import pytest

import onyx
import tiny_models

# Loop iterations of a run lasting well over 0.1 s (about 1 us each)
SLOW = 1_000_000


def test_threads_share_one_session():
    sess = onyx.InferenceSession(tiny_models.two_io())
    rng = np.random.default_rng(7)
    feeds = [{"a": rng.standard_normal((n, 3), dtype=np.float32),
              "b": rng.standard_normal((n, 3), dtype=np.float32)} for n in range(1, 9)]
    want = [sess.run(None, f) for f in feeds]
    errors = []

    def worker(k):
        try:
            for i in range(200):
                j = (k + i) % len(feeds)
                got = sess.run(None, feeds[j])
                for g, w in zip(got, want[j]):
                    np.testing.assert_array_equal(g, w)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_the_gil_is_released_during_run():
    sess = onyx.InferenceSession(tiny_models.slow_loop(SLOW))
    x = np.zeros(4, np.float32)
    done = threading.Event()
    out = []

    def run():
        out.append(sess.run(None, {"x": x})[0])
        done.set()

    t = threading.Thread(target=run)
    t.start()
    ticks = 0
    while not done.is_set():  # Python work that only runs while run() lets go of the GIL
        ticks += 1
    t.join()
    np.testing.assert_array_equal(out[0], x + SLOW)
    assert ticks > 10_000, f"the main thread ran only {ticks} loop steps during the run"


def test_closing_while_another_thread_runs_is_refused():
    sess = onyx.InferenceSession(tiny_models.slow_loop(SLOW))
    x = np.zeros(4, np.float32)
    started = threading.Event()
    result = []

    def run():
        started.set()
        result.append(sess.run(None, {"x": x})[0])

    t = threading.Thread(target=run)
    t.start()
    started.wait()
    time.sleep(0.05)  # the run takes far longer than this (see SLOW)
    assert t.is_alive()
    with pytest.raises(onyx.InvalidArgument, match="running"):
        sess.close()
    t.join()
    np.testing.assert_array_equal(result[0], x + SLOW)
    sess.close()
