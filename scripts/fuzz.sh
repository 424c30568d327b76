#!/usr/bin/env bash
# onyx's libFuzzer targets (fuzz/): builds them with clang, ASan and UBSan
# in their own build folder, collects seed corpora from the ONNX
# conformance suites on first use, and runs them.
#
#   scripts/fuzz.sh TARGET SECONDS [JOBS]  fuzz one target (grown corpus
#                                          kept in the build folder)
#   scripts/fuzz.sh regress [TARGET...]    replay fuzz/regressions/<target>/
#   scripts/fuzz.sh ci SECONDS             build, regress, then every target
#                                          for SECONDS (CI's fuzz stage)
#   scripts/fuzz.sh build | seeds TARGET   just those steps
#
# Targets: fuzz_load_run fuzz_npy fuzz_tensor_proto fuzz_infer.
# Crash, leak, timeout and out-of-memory inputs land in
# BUILD/fuzz-data/artifacts/<target>/; keep each as a small regression input in
# fuzz/regressions/<target>/. A regression input named known-* reproduces
# a known bug that is not fixed yet: regress reports it but does not fail
# unless ONYX_FUZZ_STRICT=1 (rename it when it passes).
#
# Environment: ONYX_FUZZ_BUILD (default build-fuzz), ONYX_TESTDATA (the
# ONNX 1.12 suite, default Debian's), ONYX_SUITE_DIR (the materialized
# ONNX 1.23 suite, default build/onnx-suite, used when present),
# ONYX_FUZZ_SEED (libFuzzer -seed, default random; ci uses 1),
# ONYX_FUZZ_KEEP_GOING=1 (triage: libFuzzer's fork mode, which keeps every
# crash, timeout and oom input and goes on instead of stopping at the first).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BUILD="${ONYX_FUZZ_BUILD:-build-fuzz}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
DATA="$BUILD/fuzz-data" # seeds, grown corpora, artifacts, logs
mkdir -p "$DATA"
TESTDATA="${ONYX_TESTDATA:-/usr/share/libonnx-testdata/data}"
SUITE123="${ONYX_SUITE_DIR:-$ROOT/build/onnx-suite}"
TARGETS=(fuzz_load_run fuzz_npy fuzz_tensor_proto fuzz_infer)
MAX_SEED_BYTES=65536 # bigger seeds only slow every execution down
TIMEOUT_S=10         # one input running longer is a finding (timeout-*)
RSS_MB=2048
JOBS_MAX="$(nproc)"

die() { echo "fuzz.sh: $*" >&2; exit 2; }
known_target() { local t; for t in "${TARGETS[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }

build() {
  command -v clang >/dev/null || die "clang not found (Debian: apt-get install clang)"
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    # -O1 keeps stacks readable; BUILD_TESTING off: only fuzz targets here
    CC=clang cmake -S "$ROOT" -B "$BUILD" -DONYX_FUZZ=ON -DBUILD_TESTING=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null
  fi
  cmake --build "$BUILD" -j"$JOBS_MAX" --target fuzz_targets >/dev/null
}

# Seeds of one target into BUILD/fuzz-data/seeds/TARGET, once: the suites'
# models (fuzz_infer's get the optimization level byte in front, spread
# over 0..2), their test data files (fuzz_tensor_proto's get the kind byte:
# the sequence and optional tests' files as all three kinds), and the
# committed .npy seeds. python3 copies them: thousands of files.
seeds() {
  local t="$1" dir="$DATA/seeds/$1"
  [ -f "$dir/.done" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  if [ "$t" = fuzz_npy ]; then
    cp "$ROOT"/fuzz/seeds/fuzz_npy/*.npy "$dir/"
  else
    python3 - "$t" "$dir" "$MAX_SEED_BYTES" "$TESTDATA/node" "$SUITE123/node" <<'PY'
import glob, os, sys
target, out, limit, suites = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
pattern = "*/model.onnx" if target != "fuzz_tensor_proto" else "*/test_data_set_*/*.pb"
n = 0
for suite in suites:
    for path in sorted(glob.glob(os.path.join(suite, pattern))):
        if os.path.getsize(path) > limit:
            continue
        data = open(path, "rb").read()
        n += 1
        if target == "fuzz_load_run":
            variants = {"": data}
        elif target == "fuzz_infer":
            variants = {"": bytes([n % 3]) + data}
        elif any(w in path for w in ("sequence", "optional", "split_to_seq")):
            variants = {".%d" % k: bytes([k]) + data for k in range(3)}
        else:
            variants = {"": b"\0" + data}
        for suffix, blob in variants.items():
            with open(os.path.join(out, "%d%s" % (n, suffix)), "wb") as f:
                f.write(blob)
PY
  fi
  echo "fuzz.sh: $(find "$dir" -type f | wc -l) seeds for $t in $dir"
  touch "$dir/.done"
}

artifact_count() { find "$DATA/artifacts/$1" -type f 2>/dev/null | wc -l; }

# fuzz TARGET SECONDS JOBS: runs libFuzzer; non-zero when it found something
fuzz() {
  local t="$1" secs="$2" jobs="${3:-1}"
  known_target "$t" || die "unknown target '$t' (one of: ${TARGETS[*]})"
  seeds "$t"
  local work="$DATA/work/$t" corpus="$DATA/corpus/$t" art="$DATA/artifacts/$t"
  mkdir -p "$work" "$corpus" "$art"
  local args=(-max_total_time="$secs" -timeout="$TIMEOUT_S" -rss_limit_mb="$RSS_MB"
              -malloc_limit_mb="$RSS_MB" -max_len="$MAX_SEED_BYTES" -print_final_stats=1
              -artifact_prefix="$art/")
  [ -n "${ONYX_FUZZ_SEED:-}" ] && args+=(-seed="$ONYX_FUZZ_SEED")
  [ "$t" = fuzz_npy ] && args+=(-dict="$ROOT/fuzz/npy.dict")
  if [ "${ONYX_FUZZ_KEEP_GOING:-0}" = 1 ]; then
    # triage runs: forked workers, every crash/timeout/oom kept, going on
    args+=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  elif [ "$jobs" -gt 1 ]; then
    args+=(-jobs="$jobs" -workers="$jobs")
  fi
  # the grown corpus (written) first, then the seeds (read only); also the
  # regression inputs, so fuzzing starts from what once broke
  local inputs=("$corpus" "$DATA/seeds/$t")
  [ -d "$ROOT/fuzz/regressions/$t" ] && inputs+=("$ROOT/fuzz/regressions/$t")
  local before rc=0
  before=$(artifact_count "$t")
  echo "== fuzzing $t for ${secs}s with $jobs job(s)"
  TIMEFORMAT="fuzz.sh: $t: %U s user + %S s system CPU, %R s wall"
  time (cd "$work" && ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$BUILD/fuzz/$t" "${args[@]}" "${inputs[@]}" > "$work/log.txt" 2>&1) || rc=$?
  grep -E '^(stat::|#[0-9]+ +DONE|Done [0-9]+ runs)' "$work/log.txt" | tail -8 || true
  echo
  [ "$jobs" -gt 1 ] && tail -n 3 "$work"/fuzz-*.log 2>/dev/null | grep -E 'DONE|ERROR|==' || true
  if [ "$rc" -ne 0 ] || [ "$(artifact_count "$t")" -ne "$before" ]; then
    echo "fuzz.sh: $t FOUND A PROBLEM (exit $rc); log: $work/log.txt; inputs: $art" >&2
    grep -hE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz property)' "$work"/*.log* 2>/dev/null | head -5 >&2 || true
    return 1
  fi
}

# regress [TARGET...]: each regression input once, in its own process
regress() {
  local targets=("$@") t f fails=0 known=0 n=0 rc
  [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
  for t in "${targets[@]}"; do
    known_target "$t" || die "unknown target '$t'"
    [ -d "$ROOT/fuzz/regressions/$t" ] || continue
    for f in "$ROOT/fuzz/regressions/$t"/*; do
      [ -f "$f" ] || continue
      n=$((n + 1)); rc=0
      ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
      UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
        "$BUILD/fuzz/$t" -timeout="$TIMEOUT_S" -rss_limit_mb="$RSS_MB" \
        -malloc_limit_mb="$RSS_MB" "$f" > "$DATA/regress.log" 2>&1 || rc=$?
      local name="${f#"$ROOT"/}"
      if [ "$rc" -eq 0 ]; then
        case "$(basename "$f")" in
          known-*) echo "fuzz.sh: $name now passes: drop its known- prefix" ;;
        esac
      elif [[ "$(basename "$f")" == known-* ]] && [ "${ONYX_FUZZ_STRICT:-0}" != 1 ]; then
        known=$((known + 1))
        echo "fuzz.sh: $name fails (known bug, not fixed yet)"
      else
        fails=$((fails + 1))
        echo "fuzz.sh: $name FAILS (exit $rc):" >&2
        grep -E 'ERROR|SUMMARY|runtime error|fuzz property|#[0-9]+ 0x' "$DATA/regress.log" \
          | head -12 >&2 || true
      fi
    done
  done
  echo "fuzz.sh: $n regression inputs, $fails failed, $known known failures"
  [ "$fails" -eq 0 ]
}

# ci SECONDS: what scripts/test.sh runs; targets in parallel, one per core
ci() {
  local secs="$1" t rc=0 pids=() names=() i
  build
  regress || rc=1
  export ONYX_FUZZ_SEED="${ONYX_FUZZ_SEED:-1}"
  for t in "${TARGETS[@]}"; do seeds "$t"; done
  for t in "${TARGETS[@]}"; do
    fuzz "$t" "$secs" 1 > "$DATA/ci-$t.txt" 2>&1 &
    pids+=($!); names+=("$t")
    if [ ${#pids[@]} -ge "$JOBS_MAX" ]; then
      wait "${pids[0]}" || rc=1
      cat "$DATA/ci-${names[0]}.txt"
      pids=("${pids[@]:1}"); names=("${names[@]:1}")
    fi
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || rc=1
    cat "$DATA/ci-${names[$i]}.txt"
  done
  return "$rc"
}

[ $# -ge 1 ] || die "usage: $0 TARGET SECONDS [JOBS] | regress [TARGET...] | ci SECONDS | build | seeds TARGET"
case "$1" in
  build) build ;;
  seeds) [ $# -eq 2 ] || die "usage: $0 seeds TARGET"; known_target "$2" || die "unknown target"; seeds "$2" ;;
  regress) shift; build; regress "$@" ;;
  ci) [ $# -eq 2 ] || die "usage: $0 ci SECONDS"; ci "$2" ;;
  *)
    [ $# -ge 2 ] || die "usage: $0 TARGET SECONDS [JOBS]"
    known_target "$1" || die "unknown target '$1' (one of: ${TARGETS[*]})"
    build
    fuzz "$1" "$2" "${3:-1}" ;;
esac
