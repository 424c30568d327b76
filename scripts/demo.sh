#!/usr/bin/env bash
# Installs dependencies, builds onyx and runs it on the bundled example:
# a tiny CNN that tells a vertical bar from a horizontal one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== onyx info build/examples/bars.onnx"
./build/tools/onyx/onyx info build/examples/bars.onnx
echo
echo "== onyx run on an image of a vertical bar (expect class 0, 'vertical', ~0.91)"
./build/tools/onyx/onyx run build/examples/bars.onnx \
  --input image=build/examples/vertical_bar.pb --output-dir build/examples/out
echo
echo "== onyx run on an image of a horizontal bar (expect class 1, 'horizontal', ~0.91)"
./build/tools/onyx/onyx run build/examples/bars.onnx \
  --input image=build/examples/horizontal_bar.pb --output-dir build/examples/out
