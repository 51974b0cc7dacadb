#!/usr/bin/env bash
# Configures build/native-asan: the SIMD kernels, the Catch2 suite and the fuzz target under
# AddressSanitizer + UndefinedBehaviorSanitizer. Debian's clang when installed (it links
# libFuzzer; scripts/setup.sh installs it), the default compiler and the replay driver otherwise.
# -O1 -g: fast enough, and readable stacks; no NDEBUG, so the core's asserts are live too.
set -euo pipefail
cd "$(dirname "$0")/.."
compiler=()
if [ ! -f build/native-asan/CMakeCache.txt ] && command -v clang++ >/dev/null; then
  compiler=(-DCMAKE_CXX_COMPILER=clang++)
fi
cmake -S . -B build/native-asan "${compiler[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DATTN_SIMD=ON -DATTN_SANITIZE=ON \
  -DATTN_BUILD_FUZZ=ON >/dev/null
