"""ONNX Runtime's session creation alone, in a fresh process, as
load_bench prints onyx's: usage: ort_load.py MODEL [--threads N]. The
same options as ort_bench.py (graph optimization ALL, CPU provider)."""
import argparse
import json
import time


def status_bytes(name):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import onnxruntime as ort  # imported before the counters start

    hwm0, anon0, file0 = status_bytes("VmHWM"), status_bytes("RssAnon"), status_bytes("RssFile")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    t0 = time.perf_counter_ns()
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    ms = (time.perf_counter_ns() - t0) / 1e6
    mib = 1024 * 1024
    print(json.dumps({
        "runtime": "onnxruntime", "version": ort.__version__, "create_ms": round(ms, 3),
        "peak_growth_mib": round((status_bytes("VmHWM") - hwm0) / mib, 1),
        "anon_growth_mib": round((status_bytes("RssAnon") - anon0) / mib, 1),
        "file_growth_mib": round((status_bytes("RssFile") - file0) / mib, 1)}))
    del session


if __name__ == "__main__":
    main()
