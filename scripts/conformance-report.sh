#!/usr/bin/env bash
# Regenerates docs/CONFORMANCE.md: runs both ONNX backend test suites (the
# ONNX 1.23 suite, written into the build folder from the onnx wheel, and
# Debian's 1.12 suite) through onyx and through ONNX Runtime (the onnxruntime
# wheel of requirements.txt, CPU), and writes the results side by side.
# Uses (and configures if needed) the Release build in build/, or BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
if ! "$py" -c "import onnx, onnxruntime" 2>/dev/null; then
  bash scripts/install-deps.sh
fi
build="${BUILD_DIR:-build}"
debian="${ONYX_TESTDATA:-/usr/share/libonnx-testdata/data}"
xf=tests/conformance
jobs="$(nproc)"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
# Building the runner also writes the ONNX 1.23 suite into $build/onnx-suite.
cmake --build "$build" -j"$jobs" --target onyx_conformance >/dev/null
runner="$build/tests/conformance/onyx_conformance"

# Exit status 1 only says an unlisted test failed; the report shows which.
"$runner" --data "$build/onnx-suite" --expected-failures "$xf/expected_failures_onnx123.txt" \
  --results "$build/conformance_onnx123.tsv" >/dev/null || true
"$runner" --data "$debian" --expected-failures "$xf/expected_failures.txt" \
  --results "$build/conformance_onnx112.tsv" >/dev/null || true
"$py" tools/ort/ort_conformance.py --data "$build/onnx-suite" --jobs "$jobs" \
  --expected-failures "$xf/expected_failures_onnx123.txt" \
  --results "$build/ort_conformance_onnx123.tsv"
"$py" tools/ort/ort_conformance.py --data "$debian" --jobs "$jobs" \
  --expected-failures "$xf/expected_failures.txt" \
  --results "$build/ort_conformance_onnx112.tsv"

"$py" "$xf/gen_conformance_md.py" \
  --set "ONNX 1.23" "$build/conformance_onnx123.tsv" "$build/ort_conformance_onnx123.tsv" \
  --set "ONNX 1.12 (Debian)" "$build/conformance_onnx112.tsv" "$build/ort_conformance_onnx112.tsv" \
  --ort-version "$("$py" -c 'import onnxruntime; print(onnxruntime.__version__)')" \
  -o docs/CONFORMANCE.md
echo "wrote docs/CONFORMANCE.md"
