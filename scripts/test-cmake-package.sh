#!/usr/bin/env bash
# The C++ library as a dependency: installs build/native (headers, libattn.a, attnConfig.cmake)
# into a fresh prefix and builds tests/cmake-consumer against it with find_package, then once more
# with add_subdirectory of this source tree. Each consumer runs and checks its results.
# Run after scripts/test-native.sh has built build/native (it is built here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=build/cmake-package
# A fresh prefix and find_package consumer, so nothing stale passes for installed; the
# add_subdirectory build stays, incremental like the other build trees.
rm -rf "$out/prefix" "$out/installed"
if [ ! -f build/native/CMakeCache.txt ]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/native -j2 --target attn
cmake --install build/native --prefix "$out/prefix" >/dev/null
# Only the public headers: cpp/src's internals must not leak into the install.
for header in cpp/include/attn/*.hpp; do
  test -f "$out/prefix/include/attn/$(basename "$header")"
done
if find "$out/prefix/include" -name '*.hpp' ! -path '*/include/attn/*' | grep -q .; then
  echo "test-cmake-package: headers installed outside include/attn/" >&2
  exit 1
fi

echo "-- consumer: find_package(attn CONFIG REQUIRED) from the install prefix"
cmake -S tests/cmake-consumer -B "$out/installed" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$root/$out/prefix" | grep 'attn '
cmake --build "$out/installed" -j2
"$out/installed/app"

echo "-- consumer: add_subdirectory of the source tree"
# Debug: the consumer's two tiny computations do not need Eigen optimised, and -O0 halves the
# time to compile the library again.
cmake -S tests/cmake-consumer -B "$out/subdirectory" -DCMAKE_BUILD_TYPE=Debug \
  -DATTN_SOURCE_DIR="$root" >/dev/null
cmake --build "$out/subdirectory" -j2
"$out/subdirectory/app"
