#!/usr/bin/env bash
# Compiles and runs every ```cpp block with a main() in README.md and docs/*.md against the
# native library build/native (scripts/test-native.sh builds it): an example that no longer
# compiles or whose run fails (exit status != 0) fails the tests. The README must have one.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/readme-cpp
rm -rf "$out"
mkdir -p "$out"
# <file>-<n>.cpp, n counting the file's examples: README-1.cpp, docs-kv-cache-1.cpp, ...
awk -v dir="$out" '
  FNR == 1 { inside = 0; count = 0; stem = FILENAME; sub(/\.md$/, "", stem); gsub(/[^A-Za-z0-9_]/, "-", stem) }
  /^```cpp[[:space:]]*$/ { inside = 1; text = ""; next }
  inside && /^```[[:space:]]*$/ {
    inside = 0
    if (text ~ /int main\(/) { count++; printf "%s", text > (dir "/" stem "-" count ".cpp") }
    next
  }
  inside { text = text $0 "\n" }
' README.md docs/*.md
if [ ! -f "$out/README-1.cpp" ]; then
  echo "README.md has no \`\`\`cpp example with a main()" >&2
  exit 1
fi
examples=("$out"/*.cpp)
for source in "${examples[@]}"; do
  binary="${source%.cpp}"
  g++ -std=c++17 -O2 -Icpp/include -I/usr/include/eigen3 "$source" build/native/libattn.a -o "$binary"
  echo "-- $source"
  "$binary"
done
echo "README and docs C++ examples: ${#examples[@]} compiled and ran"
