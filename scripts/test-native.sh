#!/usr/bin/env bash
# Builds the core natively and runs its Catch2 suite through CTest, twice: with the SIMD kernels
# (SSE on x86-64) and with their scalar twins (ATTN_SIMD=OFF), against the same references. Then
# the CMake package test.
set -euo pipefail
cd "$(dirname "$0")/.."
for variant in simd scalar; do
  dir=build/native; simd=ON
  if [ "$variant" = scalar ]; then dir=build/native-scalar; simd=OFF; fi
  echo "-- native tests, $variant kernels"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD="$simd" >/dev/null
  cmake --build "$dir" -j2
  ctest --test-dir "$dir" --output-on-failure -j2
done

echo "-- CMake package: find_package and add_subdirectory consumers"
bash scripts/test-cmake-package.sh
