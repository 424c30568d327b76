"""Times ONNX Runtime (CPU, the onnxruntime Python package) on one model as
`onyx bench --json` times onyx, and prints a JSON object with the same keys.

usage: ort_bench.py MODEL [--threads N] [--runs N] [--warmup N] [NAME=FILE.npy ...]

Graph optimization level ALL, N intra-op threads (0: ONNX Runtime's default,
one per core), one inter-op thread and sequential execution (onyx runs nodes
one after the other too); intra-op spinning is left as ONNX Runtime ships it.
Reported: session creation time, the median, min, max and mean of `runs`
runs after `warmup` untimed ones, and the process's peak resident memory
(VmHWM) with its growth over the resident memory once Python, numpy and
onnxruntime are imported (onyx bench measures from its start; the Python
interpreter's own memory is in the peak but not in the growth).
"""

import argparse
import json
import resource
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def status_bytes(field):
    """A "VmXXX:  N kB" field of /proc/self/status in bytes, or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def mib(b):
    return round(b / (1024 * 1024), 1)


def main():
    rss_start = status_bytes("VmRSS")
    parser = argparse.ArgumentParser(description="ONNX Runtime timing, as onyx bench --json")
    parser.add_argument("model")
    parser.add_argument("feeds", nargs="*", metavar="NAME=FILE.npy")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_intermixed_args()
    if args.runs < 1 or args.warmup < 0 or args.threads < 0:
        parser.error("--runs must be at least 1, --warmup and --threads at least 0")
    feeds = {}
    for spec in args.feeds + args.input:
        name, eq, path = spec.partition("=")
        if not eq or not name or not path:
            parser.error(f"an input is NAME=FILE.npy, got {spec!r}")
        feeds[name] = np.load(path)
    model, threads, runs, warmup = args.model, args.threads, args.runs, args.warmup
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    t0 = time.perf_counter_ns()
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    create_ms = (time.perf_counter_ns() - t0) / 1e6
    times = []
    for r in range(-warmup, runs):
        t0 = time.perf_counter_ns()
        session.run(None, feeds)
        t1 = time.perf_counter_ns()
        if r >= 0:
            times.append((t1 - t0) / 1e6)
    peak = status_bytes("VmHWM")
    if peak is None:  # no /proc: ru_maxrss is in KiB on Linux
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({
        "runtime": "onnxruntime", "version": ort.__version__, "model": model,
        "threads": threads, "runs": runs, "warmup": warmup,
        "create_ms": round(create_ms, 3), "median_ms": round(statistics.median(times), 3),
        "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
        "mean_ms": round(statistics.fmean(times), 3), "peak_rss_mib": mib(peak),
        "rss_start_mib": mib(rss_start) if rss_start is not None else -1.0,
        "rss_growth_mib": mib(peak - rss_start) if rss_start is not None else -1.0}))


if __name__ == "__main__":
    main()
