#!/usr/bin/env bash
# Installs dependencies, then builds and runs every test twice: an
# optimized build (then the Python package and its tests), and a debug
# build under AddressSanitizer and
# UndefinedBehaviorSanitizer (LeakSanitizer included); then the fuzz
# targets over their regression inputs and briefly from their seeds, and
# the concurrency test under ThreadSanitizer. Exits non-zero on any
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs="$(nproc)"

echo "== release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

echo "== Python package: pip install ./python, then its tests"
# The wheel build compiles a shared libonyx and the extension only
# (ONYX_PYTHON_PACKAGE), in a build folder kept between runs so a second run
# rebuilds what changed; the pinned backend of the venv builds it. The
# tests compare with onnxruntime on the zoo the release tests exported.
stage_start=$SECONDS
CMAKE_BUILD_PARALLEL_LEVEL="$jobs" .venv/bin/pip install -q --disable-pip-version-check \
  --no-build-isolation --config-settings=build-dir="$PWD/build/python-wheel" ./python
.venv/bin/python -m pytest -q -p no:cacheprovider python/tests \
  --build-dir "$PWD/build" --zoo-dir "$PWD/build/models"
echo "python stage: $((SECONDS - stage_start)) s"

echo "== sanitizer build and tests (ASan + UBSan)"
# the model zoo is exported once, by the build above: PyTorch exports take
# minutes and do not depend on how onyx is compiled
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DONYX_SANITIZE=ON \
  -DONYX_ZOO_DIR="$PWD/build/models" >/dev/null
cmake --build build-asan -j"$jobs"
# tests/lsan_suppressions.txt names only third-party driver code (lavapipe)
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  LSAN_OPTIONS=suppressions="$PWD/../tests/lsan_suppressions.txt" \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs")

echo "== fuzzing (libFuzzer, clang, ASan + UBSan)"
# regression inputs once, then each target for 20 s with a fixed seed
stage_start=$SECONDS
bash scripts/fuzz.sh ci 20
echo "fuzz stage: $((SECONDS - stage_start)) s"

echo "== ThreadSanitizer: one session, many threads, changing input shapes"
stage_start=$SECONDS
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONYX_TSAN=ON \
  -DONYX_ZOO_DIR="$PWD/build/models" >/dev/null
cmake --build build-tsan -j"$jobs" --target test_concurrency
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  build-tsan/tests/test_concurrency --require-zoo "$PWD/build/models"
echo "tsan stage: $((SECONDS - stage_start)) s"
