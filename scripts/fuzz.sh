#!/usr/bin/env bash
# onyx's libFuzzer targets (fuzz/): builds them with clang, ASan and UBSan
# in their own build folder, collects seed corpora from the ONNX
# conformance suites on first use, and runs them.
#
#   scripts/fuzz.sh TARGET SECONDS [JOBS]  fuzz one target (grown corpus
#                                          kept in the build folder)
#   scripts/fuzz.sh regress [TARGET...]    replay fuzz/regressions/<target>/
#   scripts/fuzz.sh ci SECONDS             build, regress, then every target
#                                          for SECONDS with a fixed seed
#                                          (CI's fuzz stage)
#   scripts/fuzz.sh build | seeds TARGET   just those steps
#
# Targets: fuzz_load_run fuzz_npy fuzz_tensor_proto fuzz_infer.
# Crash, leak, timeout and out-of-memory inputs land in
# BUILD/fuzz-data/artifacts/<target>/; keep each as a small regression input in
# fuzz/regressions/<target>/. A regression input named open-* reproduces
# a bug that is not fixed yet: regress reports it but does not fail unless
# ONYX_FUZZ_STRICT=1 (drop the prefix once it passes), and ci does not fail
# on a new input that fails at the same place (same sanitizer report
# location, or for leaks the same allocating function). Timeouts and
# out-of-memory inputs are reported by ci but do not fail it.
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
TARGETS=(fuzz_load_run fuzz_npy fuzz_tensor_proto fuzz_infer fuzz_onyx_file)
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
  elif [ "$t" = fuzz_onyx_file ]; then
    onyx_seeds "$dir"
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

# run_bounded SECONDS CMD...: CMD in its own process group, all of which
# is killed after SECONDS. A worker of libFuzzer's fork mode has been seen
# to hang in its own timeout handler (a huge allocation being freed when
# the alarm came), and the parent waits for it forever.
# Optimized files made by the release build's `onyx compile` from the
# 1.23 suite's small models (every 4th, to keep seeding short), each
# twice: resealed after mutation (first byte 1) and taken as is (0).
onyx_seeds() {
  local out="$1" cli="$ROOT/build/tools/onyx/onyx" n=0 i=0 m
  [ -x "$cli" ] || die "fuzz_onyx_file seeds need the release build's onyx ($cli): build it first"
  for m in "$SUITE123"/node/*/model.onnx; do
    i=$((i + 1))
    [ $((i % 4)) -eq 0 ] || continue
    [ "$(stat -c %s "$m")" -le "$MAX_SEED_BYTES" ] || continue
    "$cli" compile "$m" -o "$out/tmp.onyx" --opt-level none >/dev/null 2>&1 || continue
    n=$((n + 1))
    { printf '\001'; cat "$out/tmp.onyx"; } > "$out/$n.sealed"
    { printf '\000'; cat "$out/tmp.onyx"; } > "$out/$n.raw"
  done
  rm -f "$out/tmp.onyx"
}

run_bounded() {
  local limit="$1" pid waited=0 rc=0
  shift
  setsid "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
      echo "fuzz.sh: still running after ${limit}s: killed" >&2
      kill -KILL -- -"$pid" 2>/dev/null || true
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
  wait "$pid" || rc=$?
  return "$rc"
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
  # the grown corpus (written) first, then the seeds (read only); the
  # regression inputs are regress's: here they would only fail again
  local inputs=("$corpus" "$DATA/seeds/$t")
  local before rc=0
  before=$(artifact_count "$t")
  echo "== fuzzing $t for ${secs}s with $jobs job(s)"
  TIMEFORMAT="fuzz.sh: $t: %U s user + %S s system CPU, %R s wall"
  time (cd "$work" && ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    run_bounded $((secs + 4 * TIMEOUT_S + 30)) "$BUILD/fuzz/$t" "${args[@]}" "${inputs[@]}" \
    > "$work/log.txt" 2>&1) || rc=$?
  # final statistics: plain mode's DONE line, fork mode's last status line
  grep -E '^(#[0-9]+ +DONE|#[0-9]+: cov:|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))' \
    "$work/log.txt" | tail -5 || true
  if [ "$rc" -ne 0 ] || [ "$(artifact_count "$t")" -ne "$before" ]; then
    if [ "${ONYX_FUZZ_KEEP_GOING:-0}" = 1 ]; then
      echo "fuzz.sh: $t: new failing inputs in $art (log: $work/log.txt)" >&2
    else
      echo "fuzz.sh: $t FOUND A PROBLEM (exit $rc); log: $work/log.txt; inputs: $art" >&2
    fi
    grep -hE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz property)' "$work"/*.log* 2>/dev/null | head -5 >&2 || true
    return 1
  fi
}

# signature TARGET FILE: where the input fails, to tell one bug from
# another: the sanitizer's SUMMARY location, the first onyx frame of a
# leak, "resource" for timeouts and out-of-memory, "" when it passes.
signature() {
  local out
  out=$(replay "$1" "$2" 2>&1) && return 0
  if grep -qE 'libFuzzer: (out-of-memory|timeout)|SUMMARY: AddressSanitizer: (out-of-memory|allocation-size-too-big)' <<<"$out"; then
    echo resource; return 0
  fi
  if grep -q 'LeakSanitizer: detected memory leaks' <<<"$out"; then
    grep -oE " in [A-Za-z_0-9]+ $ROOT/src/[^ ]+" <<<"$out" | grep -v " in ox_strdup " |
      sed -E "s| in ([A-Za-z_0-9]+) $ROOT/([^:]+):.*|leak \1 \2|" | head -1
    return 0
  fi
  grep -m1 '^SUMMARY:' <<<"$out" | sed -E "s|$ROOT/||g; s|:[0-9]+ in .*||; s|(\.[ch]:[0-9]+):[0-9]+|\1|" || echo crash
}

replay() {
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    timeout 120 "$BUILD/fuzz/$1" -timeout="$TIMEOUT_S" -rss_limit_mb="$RSS_MB" \
    -malloc_limit_mb="$RSS_MB" "$2"
}

# regress [TARGET...]: each regression input once, in its own process;
# the signatures of the open bugs go to DATA/open-<target>.txt for ci
regress() {
  local targets=("$@") t f sig fails=0 open=0 n=0
  [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
  for t in "${targets[@]}"; do
    known_target "$t" || die "unknown target '$t'"
    : > "$DATA/open-$t.txt"
    [ -d "$ROOT/fuzz/regressions/$t" ] || continue
    for f in "$ROOT/fuzz/regressions/$t"/*; do
      [ -f "$f" ] || continue
      n=$((n + 1))
      sig=$(signature "$t" "$f")
      local name="${f#"$ROOT"/}"
      if [ -z "$sig" ]; then
        case "$(basename "$f")" in
          open-*) echo "fuzz.sh: $name now passes: drop its open- prefix" ;;
        esac
      elif [[ "$(basename "$f")" == open-* ]] && [ "${ONYX_FUZZ_STRICT:-0}" != 1 ]; then
        open=$((open + 1))
        echo "$sig" >> "$DATA/open-$t.txt"
        echo "fuzz.sh: $name fails (open bug): $sig"
      else
        fails=$((fails + 1))
        echo "fuzz.sh: $name FAILS: $sig" >&2
        replay "$t" "$f" 2>&1 | grep -E 'ERROR|SUMMARY|runtime error|fuzz property|#[0-9]+ 0x' \
          | head -12 >&2 || true
      fi
    done
  done
  echo "fuzz.sh: $n regression inputs, $fails failed, $open open bugs"
  [ "$fails" -eq 0 ]
}

# triage TARGET: the inputs this run left in DATA/artifacts/TARGET that are
# new since the list in $2; fails when one is a crash or leak that no open
# regression input explains (of any target: the model targets share code)
triage() {
  local t="$1" before="$2" f sig rc=0
  for f in "$DATA/artifacts/$t"/*; do
    [ -f "$f" ] || continue
    grep -qxF "$f" "$before" && continue
    sig=$(signature "$t" "$f")
    if [ -z "$sig" ]; then
      echo "fuzz.sh: $t: $(basename "$f") no longer fails (flaky?)"
    elif [ "$sig" = resource ]; then
      echo "fuzz.sh: $t: $(basename "$f"): timeout or out of memory (not fatal)"
    elif cat "$DATA"/open-*.txt 2>/dev/null | grep -qxF "$sig"; then
      echo "fuzz.sh: $t: $(basename "$f"): open bug: $sig"
    else
      echo "fuzz.sh: $t: $(basename "$f"): NEW: $sig" >&2
      rc=1
    fi
  done
  return "$rc"
}

# ci SECONDS: what scripts/test.sh runs: regression inputs, then each
# target for SECONDS (fixed seed, one target per core) going on past
# crashes, each new finding judged against the open bugs
ci() {
  local secs="$1" t rc=0 pids=() names=() i
  local t0=$SECONDS
  build
  echo "fuzz.sh: build: $((SECONDS - t0)) s"; t0=$SECONDS
  regress || rc=1
  echo "fuzz.sh: regress: $((SECONDS - t0)) s"; t0=$SECONDS
  export ONYX_FUZZ_SEED="${ONYX_FUZZ_SEED:-1}" ONYX_FUZZ_KEEP_GOING=1
  for t in "${TARGETS[@]}"; do seeds "$t"; done
  for t in "${TARGETS[@]}"; do
    find "$DATA/artifacts/$t" -type f > "$DATA/before-$t.txt" 2>/dev/null || : > "$DATA/before-$t.txt"
    { fuzz "$t" "$secs" 1 || true; triage "$t" "$DATA/before-$t.txt"; } > "$DATA/ci-$t.txt" 2>&1 &
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
  echo "fuzz.sh: fuzzing and triage: $((SECONDS - t0)) s"
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
