#!/usr/bin/env bash
# Installs everything onyx needs to build and test on Debian 12 (as root,
# or with sudo available): Debian packages with apt-get, then a Python
# virtual environment in .venv with the pinned packages of requirements.txt
# (onnx and its conformance suite, ONNX Runtime as the reference, PyTorch and
# transformers for the model zoo exports, PaddleOCR's trained models).
# Safe to run again: apt-get skips what is there, and the venv is rebuilt
# only when requirements.txt changes.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  protobuf-c-compiler libprotobuf-c-dev   # ONNX loader (C code generated from onnx.proto)
  libonnx-dev                             # /usr/include/onnx/onnx.proto
  libonnx-testdata                        # the 2022 ONNX conformance suite (regression set)
  python3 python3-venv                    # the venv below
  libpng-dev                              # OCR example's input, ImageDecoder's PNG
  libjpeg62-turbo-dev                     # ImageDecoder's JPEG
  imagemagick fonts-dejavu-core           # renders the OCR example's test images
  clang libclang-rt-14-dev                # libFuzzer and clang's sanitizer runtimes (fuzz/);
                                          # the runtimes are only recommended by clang
  libvulkan-dev glslc                     # the Vulkan provider: headers, shader compiler
  mesa-vulkan-drivers vulkan-tools        # lavapipe, a CPU Vulkan device for its tests;
                                          # vulkaninfo
  chromium                                # headless rendering of onyx check --report's
                                          # page (test check.report)
)

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

# Python packages, pinned. Any python3 >= 3.10 makes the venv (the first on
# PATH need not be Debian's). The stamp holds the requirements' hash, so an
# edited requirements.txt rebuilds the venv.
cd "$(dirname "$0")/.."
VENV=.venv
stamp="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.onyx-requirements" 2>/dev/null)" != "$stamp" ]; then
  echo "== creating the Python environment $VENV (requirements.txt)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
  echo "$stamp" > "$VENV/.onyx-requirements"
fi
