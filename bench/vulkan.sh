#!/usr/bin/env bash
# The Vulkan provider against onyx's CPU provider on the zoo models, same
# inputs, interleaved rounds. Prints per model the medians, the ratio
# vulkan/cpu (below 1: Vulkan faster), the nodes on Vulkan, and per timed
# run the kernels, queue submits and host<->device copies, and the weight
# uploads after the first run (0: weights stay on the device). On lavapipe
# (Mesa's CPU driver, what CI has) the ratio measures the driver, not a
# GPU. Needs: cmake --build build --target onyx_cli zoo_references
#
# usage: bench/vulkan.sh [BUILD_DIR] [ROUNDS] [CASE...]
# THREADS (default 2): the CPU provider's intra-op threads in both sessions.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
threads=${THREADS:-2}
shift $(( $# > 2 ? 2 : $# ))
# the zoo lives where the build's ONYX_ZOO_DIR says (build/models by default)
zoo=$(sed -n 's/^ONYX_ZOO_DIR:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
refs=${zoo:-$build/models}/references
onyx=$build/tools/onyx/onyx
[ -f "$refs/manifest.tsv" ] || { echo "no zoo references in $refs (build target zoo_references)" >&2; exit 1; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(ppocr_det ppocr_rec ppocr_cls resnet50 mobilenet_v3_small vit_tiny
  detr_b1 rtdetr_small_b1 dfine_small_b1)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { sed -nE "s/.*\"$1\": ([0-9.]+).*/\1/p"; }

printf '%-20s %10s %10s %7s %10s %8s %8s %8s %8s %8s\n' model cpu_ms vulkan_ms ratio nodes kernels submits to_host from_host w_upl
for case in "${cases[@]}"; do
  model=$(awk -F'\t' -v c="$case" '$1=="case" && $2==c {print $3}' "$refs/manifest.tsv")
  [ -n "$model" ] || continue
  model=$refs/$model
  mapfile -t inputs < <(awk -F'\t' -v c="$case" -v d="$refs" '
    $1=="case" {cur=$2} $1=="input" && cur==c {print $2 "=" d "/" $3}' "$refs/manifest.tsv")
  c=(); v=(); last=""
  for _ in $(seq "$rounds"); do
    c+=("$("$onyx" bench --json "$model" --threads "$threads" --runs 5 --warmup 1 --providers cpu "${inputs[@]}" | field median_ms)")
    last=$("$onyx" bench --json "$model" --threads "$threads" --runs 5 --warmup 1 --providers vulkan,cpu "${inputs[@]}")
    v+=("$(printf '%s' "$last" | field median_ms)")
  done
  cm=$(printf '%s\n' "${c[@]}" | median); vm=$(printf '%s\n' "${v[@]}" | median)
  vk=$(printf '%s' "$last" | sed -nE 's/.*"vulkan": \{([^}]*)\}.*/\1/p')
  get() { printf '%s' "$vk" | sed -nE "s/.*\"$1\": ([0-9.]+).*/\1/p"; }
  printf '%-20s %10s %10s %7s %10s %8s %8s %8s %8s %8s\n' "$case" "$cm" "$vm" \
    "$(awk -v a="$vm" -v b="$cm" 'BEGIN {printf "%.2f", a / b}')" "$(get nodes)/$(get of)" \
    "$(get kernels)" "$(get submits)" "$(get to_host)" "$(get from_host)" \
    "$(get weight_uploads_after_first_run)"
done
