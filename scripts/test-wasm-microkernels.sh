#!/usr/bin/env bash
# The micro-kernel tests (tests/cpp/test_microkernels.cpp, Catch2) in the SIMD wasm build, run
# under node: the kernels as the package ships them (wasm SIMD128 intrinsics), then once more with
# the relaxed-SIMD loops in the kernel table. Not the scalar wasm build: its kernels are the scalar
# lanes of kernels/simd/f32x4.hpp, which the native scalar build's kernel tests run
# (scripts/test-native.sh), above them it is the SIMD build's code, and the JS suite calls every
# function on it; what is wasm's own (32-bit sizes, emcc's code) the SIMD build's run covers.
# Incremental: the test links against the library build/wasm-simd already holds.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs acorn
dir=build/wasm-simd
# Configured as scripts/build-wasm.sh does; every time, since make knows the test target only
# after a configure (quick when the cache is there).
emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD=ON \
  -DATTN_WASM_NAME=attention-simd >/dev/null
cmake --build "$dir" -j2 --target test_microkernels >/dev/null
# The two runs side by side (each takes one core), their reports printed in turn.
run() {  # log, command...
  local log=$1
  shift
  "$@" --use-colour no >"$log" 2>&1
}
run "$dir/microkernels-simd.log" node "$dir/test_microkernels.cjs" &
simd=$!
# The tests again with the relaxed-SIMD loops in the kernel table (as the package installs them;
# tests/cpp/relaxed_setup.cpp), on Node 20 behind its flag.
ATTN_RELAXED_MODULE=$dir/attention-simd-relaxed.wasm \
  run "$dir/microkernels-relaxed.log" node --experimental-wasm-relaxed-simd "$dir/test_microkernels.cjs" &
relaxed=$!
status=0
echo "-- micro-kernel tests, wasm simd (node $(node --version))"
wait "$simd" || status=1
cat "$dir/microkernels-simd.log"
echo "-- micro-kernel tests, wasm simd with the relaxed-SIMD loops"
wait "$relaxed" || status=1
cat "$dir/microkernels-relaxed.log"
exit "$status"
