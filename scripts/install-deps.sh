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
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
