"""Times ONNX Runtime (CPU, the onnxruntime Python package) on one model
exactly as onyx_bench times onyx, and prints the same JSON line.

usage: ort_bench.py MODEL [--threads N] [--runs N] [--warmup N] NAME=FILE.npy ...

Graph optimization level ALL, N intra-op threads, one inter-op thread
(onyx runs nodes one after the other too). Each run is timed alone; the
median and minimum over `runs` runs after `warmup` untimed ones are printed.
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    args = sys.argv[1:]
    model, threads, runs, warmup, feeds = None, 1, 20, 3, {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--threads", "--runs", "--warmup") and i + 1 < len(args):
            value = int(args[i + 1])
            if a == "--threads":
                threads = value
            elif a == "--runs":
                runs = value
            else:
                warmup = value
            i += 2
            continue
        if "=" in a and model:
            name, path = a.split("=", 1)
            feeds[name] = np.load(path)
        elif model is None:
            model = a
        else:
            sys.exit(f"ort_bench: unexpected argument {a!r}\n{__doc__}")
        i += 1
    if model is None or runs < 1:
        sys.exit(__doc__)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    times = []
    for r in range(-warmup, runs):
        t0 = time.perf_counter_ns()
        session.run(None, feeds)
        t1 = time.perf_counter_ns()
        if r >= 0:
            times.append((t1 - t0) / 1e6)
    times.sort()
    print(json.dumps({"runtime": "onnxruntime", "median_ms": round(times[runs // 2], 3),
                      "min_ms": round(times[0], 3), "runs": runs, "threads": threads}))


if __name__ == "__main__":
    main()
