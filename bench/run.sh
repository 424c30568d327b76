#!/usr/bin/env bash
# onyx vs ONNX Runtime on the zoo models, same inputs, same thread counts,
# interleaved rounds so machine noise hits both alike. Prints medians and
# the ratio onyx/ORT (below 1: onyx faster). Needs a Release build with the
# zoo references: cmake --build build --target onyx_bench zoo_references
# ONNX Runtime runs in the Python of scripts/install-deps.sh (.venv), or in
# $ONYX_PYTHON when set.
#
# usage: bench/run.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
python=${ONYX_PYTHON:-.venv/bin/python}
refs=$build/models/references
[ -f "$refs/manifest.tsv" ] || { echo "no zoo references in $refs (build target zoo_references)" >&2; exit 1; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# the median_ms of a bench program's JSON line; nothing when it failed (its
# error goes to stderr and the table shows "-")
median_ms() { "$@" | sed -nE 's/.*"median_ms": ([0-9.]+).*/\1/p' || true; }

printf '%-22s %7s %12s %12s %8s\n' model threads onyx_ms ort_ms ratio
for case in ppocr_det ppocr_rec ppocr_cls resnet50 mobilenet_v3_small vit_tiny detr_b1; do
  model=$(awk -F'\t' -v c="$case" '$1=="case" && $2==c {print $3}' "$refs/manifest.tsv")
  [ -n "$model" ] || continue
  model=$refs/$model
  mapfile -t inputs < <(awk -F'\t' -v c="$case" -v d="$refs" '
    $1=="case" {cur=$2} $1=="input" && cur==c {print $2 "=" d "/" $3}' "$refs/manifest.tsv")
  for threads in 1 2; do
    o=(); r=()
    for _ in $(seq "$rounds"); do
      o+=("$(median_ms "$build/bench/onyx_bench" "$model" --threads "$threads" --runs 10 "${inputs[@]}")")
      r+=("$(median_ms "$python" bench/ort_bench.py "$model" --threads "$threads" --runs 10 "${inputs[@]}")")
    done
    om=$(printf '%s\n' "${o[@]}" | grep . | median || true); om=${om:--}
    rm_=$(printf '%s\n' "${r[@]}" | grep . | median || true); rm_=${rm_:--}
    ratio=$(awk -v a="$om" -v b="$rm_" 'BEGIN {if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b}')
    printf '%-22s %7s %12s %12s %8s\n' "$case" "$threads" "$om" "$rm_" "$ratio"
  done
done
