#!/usr/bin/env bash
# Builds the core natively and runs its Catch2 suite through CTest: with the SIMD kernels (SSE
# on x86-64), and with them under AddressSanitizer + UndefinedBehaviorSanitizer (which also
# replays the fuzz corpus); the
# thread pool's tests under ThreadSanitizer; the library's sources as one translation unit (no
# name defined twice in one namespace, file-local or not). Then the README's C++ examples and
# the CMake package test, with a bounded fuzz run beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
stage_mark=--
source scripts/stage.sh

# build_and_test DIR CMAKE_ARGS...: configures DIR, builds it and runs its suite.
build_and_test() {
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j2
  ctest --test-dir "$dir" --output-on-failure -j2
}
stage "native tests, simd kernels" build_and_test build/native -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD=ON

# Without the tests labelled `learning` (tests/cpp/CMakeLists.txt): hundreds of training steps
# through the code the gradient tests run under the sanitizers in a few.
sanitized() {
  bash scripts/configure-sanitize.sh
  cmake --build build/native-asan -j2
  ctest --test-dir build/native-asan --output-on-failure -j2 -LE learning
}
stage "native tests, SIMD kernels under ASan + UBSan" sanitized

# Only the threads' test file: the rest of the suite is single-threaded code that the runs above
# already cover. Debian's clang and the flags of the ASan build (scripts/configure-sanitize.sh says
# why; scripts/setup.sh installs the runtime).
thread_sanitized() {
  cmake -S . -B build/native-tsan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DATTN_SANITIZE_THREADS=ON >/dev/null
  cmake --build build/native-tsan -j2 --target test_threads
  # It takes under a minute: a hang fails it at 15, with every thread's stack, rather than
  # running into CI's limit with nothing to read.
  TSAN_OPTIONS=halt_on_error=1 build/native-tsan/tests/cpp/test_threads &
  local tests=$!
  (
    sleep 900 &
    sleeper=$!
    trap 'kill "$sleeper"; exit 0' TERM
    wait "$sleeper"
    echo "test_threads still running after 900 s; its threads:"
    gdb -p "$tests" -batch -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)'
    kill -9 "$tests"
  ) &
  local watchdog=$!
  local status=0
  wait "$tests" || status=$?
  kill "$watchdog" 2>/dev/null || true
  return "$status"
}
stage "the thread pool and the parallel kernels under ThreadSanitizer" thread_sanitized

stage "one namespace, one definition: the library's sources as one translation unit" bash scripts/check-one-unit.sh

# The fuzz run is bounded by time and takes one core: it runs beside the two builds of consumers,
# its output printed after them.
fuzz_log=build/fuzz-run.out
bash scripts/test-fuzz.sh >"$fuzz_log" 2>&1 &
fuzz_pid=$!
stage "README C++ examples, against build/native" bash scripts/test-readme-cpp.sh
stage "CMake package: find_package and add_subdirectory consumers" bash scripts/test-cmake-package.sh
fuzz_done() {
  local status=0
  wait "$fuzz_pid" || status=$?
  cat "$fuzz_log"
  return "$status"
}
stage "fuzzing (what remained of it after the consumers)" fuzz_done
stage_times
