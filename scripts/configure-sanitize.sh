#!/usr/bin/env bash
# Configures build/native-asan: the SIMD kernels, the Catch2 suite and the fuzz target under
# AddressSanitizer + UndefinedBehaviorSanitizer. Debian's clang when installed (it links
# libFuzzer; scripts/setup.sh installs it), the default compiler and the replay driver otherwise.
# -O1: fast enough. -gline-tables-only: the file and line of every frame in a report, which is all
# a sanitizer prints, at a fifth less compile time than -g's full debug info (93 s against 113 s
# for the library and three test files). No NDEBUG, so the core's asserts are live too.
set -euo pipefail
cd "$(dirname "$0")/.."
compiler=()
if [ ! -f build/native-asan/CMakeCache.txt ] && command -v clang++ >/dev/null; then
  compiler=(-DCMAKE_CXX_COMPILER=clang++)
fi
cmake -S . -B build/native-asan "${compiler[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DATTN_SIMD=ON -DATTN_SANITIZE=ON \
  -DATTN_BUILD_FUZZ=ON >/dev/null
