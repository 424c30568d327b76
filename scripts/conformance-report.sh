#!/usr/bin/env bash
# Regenerates docs/CONFORMANCE.md: runs the ONNX backend test suite through
# onyx and through ONNX Runtime (onnxruntime-node, CPU) and writes both
# results side by side. Needs a build in build/ (scripts/test.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target onyx_conformance >/dev/null
./build/tests/conformance/onyx_conformance \
  --expected-failures tests/conformance/expected_failures.txt \
  --results build/conformance_results.tsv >/dev/null || true
node tools/ort/ort_conformance.js > build/ort_conformance_results.tsv 2>/dev/null
/usr/bin/python3 tests/conformance/gen_conformance_md.py build/conformance_results.tsv \
  --ort build/ort_conformance_results.tsv -o docs/CONFORMANCE.md
echo "wrote docs/CONFORMANCE.md"
