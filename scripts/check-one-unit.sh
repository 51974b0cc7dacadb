#!/usr/bin/env bash
# Every source of the library (CMakeLists.txt's add_library(attn ...)) compiled as one translation
# unit, syntax only: two file-local names of one namespace in different files (an anonymous
# namespace's helper and another file's, or two files' constants) fail here, naming both, instead
# of the day a unity build (batches of 8, CMakeLists.txt) first puts the two files in one batch.
# It also fails on two classes of one name in one namespace in different files, which break the
# one-definition rule silently (the linker keeps one's inline members for both: Seq2Seq's and the
# Transformer's EncoderRun did, and only ASan noticed); GCC names both definitions.
set -euo pipefail
cd "$(dirname "$0")/.."
unit=build/one-unit/library.cpp
mkdir -p build/one-unit
sed -n '/^add_library(attn$/,/^)$/p' CMakeLists.txt | grep -o 'cpp/src/[^ )]*\.cpp' |
  sed "s#.*#\#include \"$PWD/&\"#" >"$unit"
count=$(wc -l <"$unit")
if [ "$count" -lt 10 ]; then
  echo "check-one-unit.sh: found $count sources in CMakeLists.txt's add_library(attn ...)" >&2
  exit 1
fi
g++ -std=c++17 -fsyntax-only -Wall -Wextra -Wpedantic -Icpp/include -Icpp/src -I/usr/include/eigen3 "$unit"
echo "the library's $count sources compile as one translation unit"
