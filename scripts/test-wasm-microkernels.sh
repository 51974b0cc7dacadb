#!/usr/bin/env bash
# The micro-kernel tests (tests/cpp/test_microkernels.cpp, Catch2) in both wasm builds, run under
# node: the SIMD kernels (wasm SIMD128 intrinsics) and their scalar twins, as the package ships
# them, and the SIMD build once more with the relaxed-SIMD loops in its kernel table. Incremental: the test links against the library build/wasm-{simd,scalar} already holds.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs acorn
for variant in simd scalar; do
  dir="build/wasm-$variant"; simd=ON
  if [ "$variant" = scalar ]; then simd=OFF; fi
  # Configured as scripts/build-wasm.sh does; every time, since make knows the test target only
  # after a configure (quick when the cache is there).
  emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD="$simd" \
    -DATTN_WASM_NAME="attention-$variant" >/dev/null
  cmake --build "$dir" -j2 --target test_microkernels >/dev/null
  echo "-- micro-kernel tests, wasm $variant (node $(node --version))"
  node "$dir/test_microkernels.cjs" --use-colour no
done
# The SIMD build's tests again with the relaxed-SIMD loops in the kernel table (as the package
# installs them; tests/cpp/relaxed_setup.cpp), on Node 20 behind its flag.
echo "-- micro-kernel tests, wasm simd with the relaxed-SIMD loops"
ATTN_RELAXED_MODULE=build/wasm-simd/attention-simd-relaxed.wasm \
  node --experimental-wasm-relaxed-simd build/wasm-simd/test_microkernels.cjs --use-colour no
