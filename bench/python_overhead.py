"""The per-call cost of run() from Python on a tiny model (y = x + 1,
x: 1x4 float32, a microsecond of compute), three ways: onyx's Python
package, onyx's C API (bench/run_overhead, the same calls without Python),
and onnxruntime's Python package. All on one intra-op thread. Writes the
figures as a section of docs/PERFORMANCE.md (kept when bench/compare
rewrites the file) and prints them.

usage: python bench/python_overhead.py --run-overhead build/bench/run_overhead
           [--calls N] [--output FILE|-]
(the onyx package installed: pip install ./python)"""

import argparse
import importlib.machinery
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper

import onyx

ROOT = pathlib.Path(__file__).resolve().parents[1]
BATCH = 1000
SECTION = "## Python: per-call overhead of run"
# bench/compare's helper that keeps each script's section of PERFORMANCE.md
compare = importlib.machinery.SourceFileLoader(
    "compare", str(pathlib.Path(__file__).resolve().parent / "compare")).load_module()


def tiny_model():
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def per_call_us(run, calls):
    """Median over batches of BATCH calls of the time per call, and the minimum."""
    for _ in range(200):
        run()
    times = []
    for _ in range(max(1, calls // BATCH)):
        t0 = time.perf_counter()
        for _ in range(BATCH):
            run()
        times.append((time.perf_counter() - t0) / BATCH * 1e6)
    return statistics.median(times), min(times)


def measure(model_path, run_overhead, calls):
    x = np.zeros((1, 4), np.float32)
    feed = {"x": x}
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 1
    sess = onyx.InferenceSession(model_path, so)
    ort_so = onnxruntime.SessionOptions()
    ort_so.intra_op_num_threads = 1
    ort_so.inter_op_num_threads = 1
    ort = onnxruntime.InferenceSession(model_path, ort_so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, feed)[0], ort.run(None, feed)[0])
    out = subprocess.run([run_overhead, model_path, str(calls)], capture_output=True, text=True,
                         check=True).stdout
    c = json.loads(out)
    rows = [("onyx, C API (bench/run_overhead)", c["median_us"], c["min_us"])]
    rows.append(("onyx, Python `run`", *per_call_us(lambda: sess.run(None, feed), calls)))
    rows.append(("ONNX Runtime, Python `run`", *per_call_us(lambda: ort.run(None, feed), calls)))
    return rows


def section(rows, calls):
    c_us = rows[0][1]
    onyx_py, ort_py = rows[1][1], rows[2][1]
    lines = [SECTION, "",
             f"Written by `bench/python_overhead.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
             f" ({platform.processor() or platform.machine()}, Python {platform.python_version()},"
             f" onyx {onyx.__version__}, ONNX Runtime {onnxruntime.__version__}).",
             "",
             "One tiny model (y = x + 1, x: 1x4 float32), one intra-op thread, "
             f"{calls} calls each, timed in batches of {BATCH}: the median and the "
             "fastest batch's time per call. The C API row makes the calls one Python "
             "`run` makes (input wrapped over caller memory, output allocated by onyx and "
             "freed) without Python; the difference is the binding's overhead.",
             "",
             "| how | median µs/call | min µs/call |", "|---|---:|---:|"]
    for name, med, low in rows:
        lines.append(f"| {name} | {med:.2f} | {low:.2f} |")
    lines += ["",
              f"The binding adds {onyx_py - c_us:.2f} µs per call to the C API's {c_us:.2f} µs; "
              f"a Python `run` costs {onyx_py:.2f} µs in onyx against {ort_py:.2f} µs in "
              f"ONNX Runtime ({onyx_py / ort_py:.2f}x).",
              "",
              "Command: `python bench/python_overhead.py --run-overhead build/bench/run_overhead`",
              ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-overhead", default=str(ROOT / "build" / "bench" / "run_overhead"))
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--output", default=str(ROOT / "docs" / "PERFORMANCE.md"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "tiny.onnx")
        with open(model, "wb") as f:
            f.write(tiny_model())
        rows = measure(model, args.run_overhead, args.calls)
    text = section(rows, args.calls)
    print(text)
    if args.output != "-":
        compare.write_kept_section(args.output, SECTION, text)
        print(f"python_overhead: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
