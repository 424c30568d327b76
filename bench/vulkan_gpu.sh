#!/usr/bin/env bash
# The Vulkan provider on a machine other than the build machine (a real
# GPU), in one call: the kernel tests, the fault tests, the zoo models
# against ONNX Runtime's references, and bench/vulkan.sh. The other
# machine needs no compiler, no zoo and no Python: `pack` copies what the
# run needs into a folder laid out like a build folder.
#
# usage: bench/vulkan_gpu.sh pack BUILD_DIR BUNDLE_DIR [CASE...]
#        bench/vulkan_gpu.sh check BUNDLE_DIR OUT_DIR
#
# pack: the onyx tool, the Vulkan kernel and fault tests, the model test,
#   the shared libraries they link (protobuf-c, libpng, libjpeg) and the
#   zoo cases named (their .onnx, inputs, reference outputs and manifest
#   lines). Needs: cmake --build BUILD_DIR --target onyx_cli test_vulkan_ep
#   test_device_fault test_models zoo_references.
# check: runs every step with a time limit, logs each to OUT_DIR/STEP.log
#   and ends with one line per step (pass/FAIL, seconds) and the bench
#   table. The Vulkan loader (libvulkan.so.1) must be installed there;
#   ONYX_VK_DEVICE picks the device (default 0), THREADS the CPU
#   provider's threads in the bench (default: the machine's cores).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

pack() {
  local build=$1 dst=$2; shift 2
  local refs=$build/models/references
  [ -f "$refs/manifest.tsv" ] || { echo "no zoo references in $refs" >&2; return 1; }
  rm -rf "$dst"
  mkdir -p "$dst/tools/onyx" "$dst/tests" "$dst/models/references" "$dst/lib"
  cp "$build/tools/onyx/onyx" "$dst/tools/onyx/"
  cp "$build/tests/test_vulkan_ep" "$build/tests/test_device_fault" "$dst/tests/"
  cp "$build/models/test_models" "$dst/models/"
  # the libraries a machine without onyx's build dependencies lacks
  ldd "$build/tools/onyx/onyx" "$build/models/test_models" |
    awk '$3 ~ /lib(protobuf-c|png16|jpeg)\.so/ {print $3}' | sort -u |
    while read -r lib; do cp -L "$lib" "$dst/lib/"; done
  local cases=("$@")
  [ ${#cases[@]} -gt 0 ] || cases=(ppocr_det ppocr_cls mobilenet_v3_small vit_tiny detr_b1
    dfine_small_b1 rtdetr_small_b1)
  sed -n '1p' "$refs/manifest.tsv" > "$dst/models/references/manifest.tsv"
  local c model
  for c in "${cases[@]}"; do
    model=$(awk -F'\t' -v c="$c" '$1=="case" && $2==c {print $3}' "$refs/manifest.tsv")
    [ -n "$model" ] || { echo "no case $c in the manifest" >&2; return 1; }
    cp "$refs/$model" "$dst/models/references/$model"
    cp -r "$refs/$c" "$dst/models/references/"
    awk -F'\t' -v c="$c" '$1=="case" {cur=$2} cur==c && $1!~/^#/' "$refs/manifest.tsv" \
      >> "$dst/models/references/manifest.tsv"
  done
  du -sh "$dst"
}

check() {
  local b out; b=$(cd "$1" && pwd); out=$2
  mkdir -p "$out"
  export LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/onyx-gpu-cache}
  local manifest=$b/models/references/manifest.tsv summary=$out/summary.txt
  : > "$summary"
  step() { # NAME LIMIT_S COMMAND...: one logged, timed step
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS rc
    timeout "$limit" "$@" > "$out/$name.log" 2>&1; rc=$?
    printf '%-40s %-4s rc=%-3s %4ss\n' "$name" "$([ $rc = 0 ] && echo pass || echo FAIL)" \
      "$rc" "$((SECONDS - t0))" | tee -a "$summary"
  }
  step devices 60 "$b/tools/onyx/onyx" devices
  step unit.vulkan_ep 300 "$b/tests/test_vulkan_ep"
  step unit.vulkan_ep.masked 300 env ONYX_VK_DISABLE=int64,fp16,subgroup,hostmap \
    "$b/tests/test_vulkan_ep" --expect-masked
  step unit.vulkan_ep.wg64 300 env ONYX_VK_LIMITS=maxComputeWorkGroupInvocations=64 \
    "$b/tests/test_vulkan_ep" --expect-wg 64
  step unit.vulkan_ep.bounded 300 env \
    ONYX_VK_LIMITS=maxStorageBufferRange=16777216,maxComputeWorkGroupCount=7,dispatchBudget=1024 \
    "$b/tests/test_vulkan_ep" --expect-bounded
  step unit.device_fault 300 "$b/tests/test_device_fault"
  local c
  for c in $(awk -F'\t' '$1=="case" {print $2}' "$manifest"); do
    step "models.$c.vulkan" 300 "$b/models/test_models" "$manifest" --providers vulkan,cpu "$c"
    step "models.$c.vulkan_masked" 300 env ONYX_VK_DISABLE=int64,fp16 \
      "$b/models/test_models" "$manifest" --providers vulkan,cpu "$c"
    # the limits of models.*.vulkan_bounded: dispatches split, buffers small
    step "models.$c.vulkan_bounded" 300 env \
      ONYX_VK_LIMITS=maxStorageBufferRange=16777216,maxComputeWorkGroupInvocations=64,dispatchBudget=1048576 \
      "$b/models/test_models" "$manifest" --providers vulkan,cpu --expect-split "$c"
  done
  step bench 240 env THREADS="${THREADS:-$(nproc)}" bash "$here/bench/vulkan.sh" "$b" 2 \
    $(awk -F'\t' '$1=="case" {print $2}' "$manifest")
  echo
  cat "$summary"
  echo
  cat "$out/bench.log"
}

case ${1:-} in
  pack) shift; [ $# -ge 2 ] || { sed -n '8,9p' "$0" >&2; exit 2; }; pack "$@" ;;
  check) shift; [ $# -eq 2 ] || { sed -n '8,9p' "$0" >&2; exit 2; }; check "$@" ;;
  *) sed -n '8,9p' "$0" >&2; exit 2 ;;
esac
