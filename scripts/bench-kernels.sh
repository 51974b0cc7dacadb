#!/usr/bin/env bash
# The kernel bench (cpp/bench/kernel_bench.cpp), natively and in the SIMD wasm build under node:
# masked / unmasked, weights / none, SDPA / GEMM throughput and KV-cache decode / copy ratios,
# each measured side by side in one run. Usage: scripts/bench-kernels.sh [N,N,...]
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs acorn
sizes="${1:-512,1024,2048,4096}"
cmake -S . -B build/bench-native -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=OFF \
  -DATTN_BUILD_BENCH=ON >/dev/null
cmake --build build/bench-native -j2 --target kernel_bench >/dev/null
if [ ! -f build/bench-wasm-simd/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/bench-wasm-simd -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD=ON \
    -DATTN_BUILD_BENCH=ON >/dev/null
fi
cmake --build build/bench-wasm-simd -j2 --target kernel_bench >/dev/null
echo "-- native ($(uname -m))"
build/bench-native/kernel_bench "$sizes"
echo "-- wasm SIMD, node $(node --version)"
node build/bench-wasm-simd/kernel_bench.cjs "$sizes"
