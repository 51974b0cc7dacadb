#!/usr/bin/env bash
# The micro-kernel tests (tests/cpp/test_microkernels.cpp, Catch2) in the wasm builds, run under
# node: the SIMD build's kernels as the package ships them (wasm SIMD128 intrinsics), once more with
# the relaxed-SIMD loops in the kernel table, and the scalar build's: the scalar twins of the
# kernels (the scalar lanes of kernels/simd/f32x4.hpp), which the JS suite then calls through every
# function of the package. Incremental: the tests link against the libraries build/wasm-simd and
# build/wasm-scalar already hold.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs acorn
# build DIR SIMD NAME: configured as scripts/build-wasm.sh does, every time, since make knows the
# test target only after a configure (quick when the cache is there).
build() {
  emcmake cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD="$2" -DATTN_WASM_NAME="$3" >/dev/null
  cmake --build "$1" -j2 --target test_microkernels >/dev/null
}
simd=build/wasm-simd
scalar=build/wasm-scalar
build "$simd" ON attention-simd
build "$scalar" OFF attention-scalar
# The three runs side by side (each takes one core), their reports printed in turn.
run() {  # log, command...
  local log=$1
  shift
  "$@" --use-colour no >"$log" 2>&1
}
run "$simd/microkernels-simd.log" node "$simd/test_microkernels.cjs" &
simd_run=$!
# The tests again with the relaxed-SIMD loops in the kernel table (as the package installs them;
# tests/cpp/relaxed_setup.cpp), on Node 20 behind its flag.
ATTN_RELAXED_MODULE=$simd/attention-simd-relaxed.wasm \
  run "$simd/microkernels-relaxed.log" node --experimental-wasm-relaxed-simd "$simd/test_microkernels.cjs" &
relaxed_run=$!
run "$scalar/microkernels-scalar.log" node "$scalar/test_microkernels.cjs" &
scalar_run=$!
status=0
echo "-- micro-kernel tests, wasm simd (node $(node --version))"
wait "$simd_run" || status=1
cat "$simd/microkernels-simd.log"
echo "-- micro-kernel tests, wasm simd with the relaxed-SIMD loops"
wait "$relaxed_run" || status=1
cat "$simd/microkernels-relaxed.log"
echo "-- micro-kernel tests, wasm scalar (the kernels' scalar twins)"
wait "$scalar_run" || status=1
cat "$scalar/microkernels-scalar.log"
exit "$status"
