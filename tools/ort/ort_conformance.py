#!/usr/bin/env python3
"""Runs an ONNX backend test suite folder through ONNX Runtime (CPU, the
onnxruntime wheel of requirements.txt) with the same binding, tolerances and
TSV format as onyx's conformance runner (tests/conformance/runner.c), so that
docs/CONFORMANCE.md can put the two side by side.

    DATA/<suite>/<test>/model.onnx
    DATA/<suite>/<test>/test_data_set_N/{input,output}_K.pb
    DATA/<suite>/<test>/data.json    optional {"rtol": .., "atol": ..}

Each result line: suite <TAB> test <TAB> pass|fail|skip <TAB> reason.

Inputs are bound by position to the graph inputs that no initializer backs,
and each .pb file is read as the model declares that input or output: a
TensorProto, SequenceProto, OptionalProto or MapProto. Floating point values
match when |got - expected| <= atol + rtol * |expected| (NaN matches NaN,
infinities must be equal; bfloat16 gets at least rtol 2^-6, two of its
units in the last place, as onnx's backend test allows), everything else
exactly.

Tests run in a child process, so a crash inside ONNX Runtime costs that one
test (reported as a failure), not the run.

usage: ort_conformance.py --data DIR [--suite LIST] [--filter SUBSTR]
                          [--expected-failures FILE] [--results FILE] [--jobs N]
"""

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import threading

DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-7
BF16_RTOL = 2.0 ** -6
SKIP_PREFIX = "out of scope:"
REASON_CAP = 1000


# --------------------------------------------------------------------------
# suite layout (shared by the driver and the worker)

def list_suites(data):
    return sorted(d for d in os.listdir(data)
                  if not d.startswith(".") and list_tests(os.path.join(data, d)))


def list_tests(suite_dir):
    if not os.path.isdir(suite_dir):
        return []
    return sorted(t for t in os.listdir(suite_dir)
                  if os.path.isfile(os.path.join(suite_dir, t, "model.onnx")))


def data_sets(test_dir):
    sets = [d for d in os.listdir(test_dir)
            if d.startswith("test_data_set_") and os.path.isdir(os.path.join(test_dir, d))]
    return sorted(sets, key=lambda d: (int(d[len("test_data_set_"):] or 0)
                                       if d[len("test_data_set_"):].isdigit() else 1 << 30, d))


def numbered(ds_dir, prefix):
    files = []
    while os.path.isfile(os.path.join(ds_dir, f"{prefix}_{len(files)}.pb")):
        files.append(os.path.join(ds_dir, f"{prefix}_{len(files)}.pb"))
    return files


def tolerances(test_dir):
    rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    path = os.path.join(test_dir, "data.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        rtol = float(data.get("rtol", rtol))
        atol = float(data.get("atol", atol))
    return rtol, atol


def one_line(text):
    text = " ".join(str(text).split())
    # onnxruntime names the model's path; the test name already says it,
    # and a machine's paths do not belong in the report.
    text = re.sub(r"Load model from \S+ failed: ?", "", text)
    text = re.sub(r"/onnxruntime_src/\S+ ", "", text)
    text = re.sub(r"onnxruntime::\S*\(.*?\)(?: const)? (?=[A-Z])", "", text)
    return text[:REASON_CAP]


# --------------------------------------------------------------------------
# worker: runs tests and prints one TSV line per test

def read_value(path, type_proto):
    """The .pb bytes do not say what they hold; the model's type does."""
    import onnx  # noqa: PLC0415
    from onnx import numpy_helper  # noqa: PLC0415

    with open(path, "rb") as f:
        raw = f.read()
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(raw)
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(raw)
        return numpy_helper.to_optional(proto)
    if kind == "map_type":
        proto = onnx.MapProto()
        proto.ParseFromString(raw)
        return numpy_helper.to_dict(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(raw)
    return numpy_helper.to_array(proto)


def is_ml_dtype(dt):
    """ml_dtypes' types (bfloat16, float8, 4- and 2-bit): numpy does not know
    them (user-defined type numbers), and onnxruntime's Python API cannot
    convert them."""
    return dt.num >= 256


def to_ort_input(value, type_proto):
    """numpy arrays of ml_dtypes' types become OrtValues holding the ONNX
    encoding (packed for 4- and 2-bit types), which onnxruntime accepts."""
    import numpy as np  # noqa: PLC0415
    import onnx  # noqa: PLC0415
    import onnxruntime as ort  # noqa: PLC0415
    from onnx import numpy_helper  # noqa: PLC0415

    if not isinstance(value, np.ndarray):
        return value
    elem = type_proto.tensor_type.elem_type
    # The 1.12 suite stores bfloat16 inputs as uint16 arrays of the same
    # bits (numpy had no bfloat16); onyx's runner relabels them the same way.
    if value.dtype == np.uint16 and elem == onnx.TensorProto.BFLOAT16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(value, elem)
    if not is_ml_dtype(value.dtype):
        return value
    raw = numpy_helper.from_array(value).raw_data
    v = ort.OrtValue.ortvalue_from_shape_and_type(list(value.shape), elem)
    if v.tensor_size_in_bytes() != len(raw):
        raise ValueError(f"{value.dtype.name} tensor: {len(raw)} bytes, onnxruntime expects "
                         f"{v.tensor_size_in_bytes()}")
    ctypes.memmove(v.data_ptr(), raw, len(raw))
    return v


def from_ort_output(v, type_proto):
    """An output OrtValue as numpy, through its ONNX encoding where numpy
    has no such type."""
    import onnx  # noqa: PLC0415
    from onnx import numpy_helper  # noqa: PLC0415

    if not v.is_tensor():
        raise ValueError("a non-tensor output of a type numpy cannot hold")
    try:
        return v.numpy()
    except Exception:  # noqa: BLE001
        proto = onnx.TensorProto(dims=v.shape(), data_type=type_proto.tensor_type.elem_type,
                                 raw_data=ctypes.string_at(v.data_ptr(),
                                                           v.tensor_size_in_bytes()))
        return numpy_helper.to_array(proto)


def describe(v):
    import numpy as np  # noqa: PLC0415

    if v is None:
        return "an empty optional"
    if isinstance(v, (list, tuple)):
        return "a sequence"
    if isinstance(v, dict):
        return "a map"
    if isinstance(v, np.ndarray):
        return "a tensor"
    return type(v).__name__


def is_float_dtype(dt):
    import numpy as np  # noqa: PLC0415

    # ml_dtypes' bfloat16, float8 and float4 types are not numpy floating
    # types; their names say what they are.
    return np.issubdtype(dt, np.floating) or np.issubdtype(dt, np.complexfloating) or \
        "float" in dt.name


def scalar_text(x):
    x = x.item() if hasattr(x, "item") else x
    return f"{x:.9g}" if isinstance(x, float) else str(x).lower() if isinstance(x, bool) else str(x)


def compare(got, want, label, rtol, atol):
    """None when got matches want, else why not (first problem only)."""
    import numpy as np  # noqa: PLC0415

    if want is None or got is None:
        if (want is None) != (got is None):
            return (f"{label}: optional is {'empty' if got is None else 'present'}, "
                    f"expected {'empty' if want is None else 'present'}")
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"{label}: got {describe(got)}, expected a sequence"
        if len(got) != len(want):
            return f"{label}: sequence has {len(got)} items, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            why = compare(g, w, f"{label} item {i}", rtol, atol)
            if why:
                return why
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{label}: got {describe(got)}, expected a map"
        if sorted(got) != sorted(want):
            return f"{label}: map keys differ"
        for k in sorted(want):
            why = compare(got[k], want[k], f"{label}[{k!r}]", rtol, atol)
            if why:
                return why
        return None
    if not isinstance(got, np.ndarray):
        return f"{label}: got {describe(got)}, expected a tensor"
    # The 1.12 suite stores bfloat16 as uint16 arrays of the same bits
    # (numpy had no bfloat16); onyx's runner relabels those too.
    if want.dtype == np.uint16 and got.dtype.name == "bfloat16":
        want = want.view(got.dtype)
    # onnxruntime hands 8-bit float outputs over as uint8 arrays of their bits.
    if is_ml_dtype(want.dtype) and got.dtype in (np.uint8, np.uint16) and \
            got.dtype.itemsize == want.dtype.itemsize and got.shape == want.shape:
        got = got.view(want.dtype)
    if got.dtype != want.dtype:
        return f"{label}: dtype {got.dtype.name} != expected {want.dtype.name}"
    if got.shape != want.shape:
        return (f"{label}: shape [{','.join(map(str, got.shape))}] != expected "
                f"[{','.join(map(str, want.shape))}]")
    if want.dtype == object or want.dtype.kind in "SU":
        g, w = got.ravel(), want.ravel()
        bad = [i for i in range(w.size) if g[i] != w[i]]
        if bad:
            i = bad[0]
            return (f"{label}: {len(bad)} of {w.size} strings differ, first at index {i} "
                    f"(got \"{str(g[i])[:80]}\", expected \"{str(w[i])[:80]}\")")
        return None
    if is_float_dtype(want.dtype):
        if want.dtype.name == "bfloat16":
            rtol = max(rtol, BF16_RTOL)
        if np.issubdtype(want.dtype, np.complexfloating):
            g = np.stack([got.real, got.imag], axis=-1).astype(np.float64).ravel()
            w = np.stack([want.real, want.imag], axis=-1).astype(np.float64).ravel()
        else:
            g = got.astype(np.float64).ravel()
            w = want.astype(np.float64).ravel()
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(g - w)
            nan = np.isnan(g) | np.isnan(w)
            inf = (np.isinf(g) | np.isinf(w)) & ~nan
            ok = np.where(nan, np.isnan(g) & np.isnan(w),
                          np.where(inf, g == w, diff <= atol + rtol * np.abs(w)))
            diff = np.where(nan | inf, np.inf, diff)
    else:
        if want.dtype == np.bool_:
            g, w = got.ravel(), want.ravel()
            ok = g == w
            diff = (g != w).astype(np.float64)
        else:
            # Exact on integers: int64 above 2^53 would merge as doubles.
            g = got.astype(np.int64 if want.dtype != np.uint64 else np.uint64).ravel()
            w = want.astype(g.dtype).ravel()
            ok = g == w
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
    bad = int(np.count_nonzero(~ok))
    if bad:
        masked = np.where(ok, -1.0, diff)
        i = int(np.argmax(masked))
        return (f"{label}: {bad} of {ok.size} values differ, max abs diff {masked[i]:g} at "
                f"index {i} (got {scalar_text(g[i])}, expected {scalar_text(w[i])})")
    return None


def run_test(test_dir):
    """None when every data set matches, else the reason it does not."""
    import onnx  # noqa: PLC0415
    import onnxruntime as ort  # noqa: PLC0415

    model_path = os.path.join(test_dir, "model.onnx")
    sets = data_sets(test_dir)
    if not sets:
        return "no test_data_set_N folders"
    rtol, atol = tolerances(test_dir)
    try:
        model = onnx.load(model_path)
    except Exception as e:  # noqa: BLE001
        return f"load: {one_line(e)}"
    inits = {i.name for i in model.graph.initializer}
    inputs = [x for x in model.graph.input if x.name not in inits]
    outputs = list(model.graph.output)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return f"load: {one_line(e)}"
    for ds in sets:
        ds_dir = os.path.join(test_dir, ds)
        in_files, out_files = numbered(ds_dir, "input"), numbered(ds_dir, "output")
        if len(in_files) != len(inputs):
            return (f"{ds}: {len(in_files)} input files, but the model has {len(inputs)} "
                    "inputs to bind")
        if len(out_files) != len(outputs):
            return f"{ds}: {len(out_files)} output files, but the model has {len(outputs)} outputs"
        feeds = {}
        for k, path in enumerate(in_files):
            try:
                feeds[inputs[k].name] = to_ort_input(read_value(path, inputs[k].type),
                                                     inputs[k].type)
            except Exception as e:  # noqa: BLE001
                return f"{ds}: loading input_{k}.pb: {one_line(e)}"
        names = [o.name for o in outputs]
        try:
            try:
                got = sess.run(names, feeds)
            except Exception as e:  # noqa: BLE001
                # Outputs numpy cannot hold (bfloat16, 4-bit...) need OrtValues.
                if "Numpy" not in str(e) and "numpy" not in str(e):
                    raise
                vals = sess.run_with_ort_values(
                    names, {k: v if isinstance(v, ort.OrtValue) else ort.OrtValue.ortvalue_from_numpy(v)
                            for k, v in feeds.items()})
                got = [from_ort_output(v, o.type) for v, o in zip(vals, outputs)]
        except Exception as e:  # noqa: BLE001
            return f"{ds}: run: {one_line(e)}"
        for k, path in enumerate(out_files):
            try:
                want = read_value(path, outputs[k].type)
            except Exception as e:  # noqa: BLE001
                return f"{ds}: loading output_{k}.pb: {one_line(e)}"
            why = compare(got[k], want, f"output {k} '{outputs[k].name}'", rtol, atol)
            if why:
                return f"{ds}: {why}"
    return None


def worker(data, keys):
    for key in keys:
        suite, test = key.split("/", 1)
        try:
            why = run_test(os.path.join(data, suite, test))
        except Exception as e:  # noqa: BLE001
            why = f"runner error: {one_line(e)}"
        status = "fail" if why else "pass"
        sys.stdout.write(f"{suite}\t{test}\t{status}\t{one_line(why or '')}\n")
        sys.stdout.flush()


# --------------------------------------------------------------------------
# driver

def load_skips(path):
    """'out of scope:' entries of an onyx expected-failures file: not run,
    so that both engines are measured over the same tests."""
    skips = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "#" not in line:
                continue
            key, why = (s.strip() for s in line.split("#", 1))
            if why.startswith(SKIP_PREFIX):
                skips[key] = why
    return skips


def run_chunk(data, keys, results, lock):
    """Runs keys in a child process, restarting it after a crash."""
    start = 0
    while start < len(keys):
        todo = keys[start:]
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--data", data],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        proc.stdin.write("\n".join(todo) + "\n")
        proc.stdin.close()
        done = 0
        for line in proc.stdout:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 3:
                continue
            with lock:
                results[f"{fields[0]}/{fields[1]}"] = line.rstrip("\n")
            done += 1
        rc = proc.wait()
        start += done
        if start < len(keys) and done < len(todo):
            suite, test = keys[start].split("/", 1)
            why = f"ONNX Runtime crashed (exit status {rc})"
            with lock:
                results[keys[start]] = f"{suite}\t{test}\tfail\t{why}"
            start += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="suite folder (holds node/, simple/, ...)")
    ap.add_argument("--suite", help="comma-separated suites (default: every one under --data)")
    ap.add_argument("--filter", help="only tests whose name contains this")
    ap.add_argument("--expected-failures", metavar="FILE",
                    help=f"onyx's list; its '{SKIP_PREFIX}' entries are skipped")
    ap.add_argument("--results", default="-", help="TSV to write (default: stdout)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        worker(args.data, [k for k in sys.stdin.read().split("\n") if k])
        return 0

    suites = args.suite.split(",") if args.suite else list_suites(args.data)
    skips = load_skips(args.expected_failures) if args.expected_failures else {}
    keys, lines = [], {}
    for suite in suites:
        for test in list_tests(os.path.join(args.data, suite)):
            if args.filter and args.filter not in test:
                continue
            key = f"{suite}/{test}"
            keys.append(key)
            if key in skips:
                lines[key] = f"{suite}\t{test}\tskip\t{skips[key]}"
    to_run = [k for k in keys if k not in lines]
    jobs = max(1, min(args.jobs, len(to_run)))
    lock = threading.Lock()
    threads = [threading.Thread(target=run_chunk, args=(args.data, to_run[j::jobs], lines, lock))
               for j in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    out = sys.stdout if args.results == "-" else open(args.results, "w", encoding="utf-8")
    counts = {}
    for key in keys:
        line = lines.get(key) or "\t".join([*key.split("/", 1), "fail", "no result"])
        out.write(line + "\n")
        suite, _, status = line.split("\t")[:3]
        c = counts.setdefault(suite, {"pass": 0, "fail": 0, "skip": 0})
        c[status] += 1
    if out is not sys.stdout:
        out.close()
    for suite, c in counts.items():
        sys.stderr.write(f"{suite}: {c['pass']}/{c['pass'] + c['fail']} passed, "
                         f"{c['skip']} skipped\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
