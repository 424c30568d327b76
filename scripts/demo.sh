#!/usr/bin/env bash
# Installs dependencies, builds onyx and reads the text in a bundled sample
# image with the OCR example: PaddleOCR's trained PP-OCRv4 detector and
# recogniser, run by onyx. Then runs the `onyx` tool on the tiny bundled CNN.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target onyx_ocr onyx_cli example_model ocr_samples >/dev/null
echo "== onyx_ocr build/examples/ocr/sample.png"
echo "   (the image shows: 'quick brown fox' / 'Invoice 2026-12-02' / 'ONNX Runtime')"
echo "   text, confidence, box corners:"
./build/examples/ocr/onyx_ocr build/examples/ocr/sample.png
echo
echo "== onyx run on the bundled bar classifier with an image of a vertical bar"
echo "   (expect probabilities ~[0.91, 0.09]: class 0, 'vertical')"
./build/tools/onyx/onyx run build/examples/bars.onnx --input image=build/examples/vertical_bar.pb
