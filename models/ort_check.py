"""Loads each model given in ONNX Runtime (CPU) and prints its inputs and
outputs; exits non-zero when one does not load. Run after the exports so a
model ONNX Runtime rejects is caught where it is made, not in the tests.

usage: ort_check.py MODEL.onnx...
"""

import sys

import onnxruntime as ort


def main():
    models = sys.argv[1:]
    if not models:
        sys.exit("usage: ort_check.py MODEL.onnx...")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    failed = 0
    for path in models:
        try:
            s = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as e:  # ONNX Runtime raises several types; all mean "does not load"
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(f"{path}: ONNX Runtime cannot load it: {first}", file=sys.stderr)
            failed += 1
            continue
        print(f"{path}: loads in ONNX Runtime; inputs "
              f"{', '.join(i.name for i in s.get_inputs())}; outputs "
              f"{', '.join(o.name for o in s.get_outputs())}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
