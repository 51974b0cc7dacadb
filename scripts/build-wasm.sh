#!/usr/bin/env bash
# Builds both wasm modules (SIMD and scalar) from the one CMake project and assembles the npm
# package in dist/: the JS wrapper from web/lib and the two .mjs/.wasm pairs. Incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
# emcc's JS optimizer needs acorn, which Debian ships under /usr/share/nodejs.
export NODE_PATH=/usr/share/nodejs

build_variant() {  # name simd(ON|OFF)
  local dir="build/wasm-$1"
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD="$2" \
      -DATTN_WASM_NAME="attention-$1" >/dev/null
  fi
  cmake --build "$dir" -j2
}
build_variant simd ON
build_variant scalar OFF

mkdir -p dist/wasm
cp web/lib/*.js web/lib/*.d.ts dist/
for variant in simd scalar; do
  cp "build/wasm-$variant/attention-$variant.mjs" "build/wasm-$variant/attention-$variant.wasm" dist/wasm/
done
