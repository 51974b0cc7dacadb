#!/usr/bin/env bash
# Compiles and runs every ```cpp block of README.md that has a main(), against the native
# library build/native (scripts/test-native.sh builds it): a README example that no longer
# compiles or whose run fails (exit status != 0) fails the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/readme-cpp
rm -rf "$out"
mkdir -p "$out"
awk -v dir="$out" '
  /^```cpp[[:space:]]*$/ { inside = 1; text = ""; next }
  inside && /^```[[:space:]]*$/ {
    inside = 0
    if (text ~ /int main\(/) { count++; printf "%s", text > (dir "/example" count ".cpp") }
    next
  }
  inside { text = text $0 "\n" }
' README.md
shopt -s nullglob
examples=("$out"/example*.cpp)
if ((${#examples[@]} == 0)); then
  echo "README.md has no \`\`\`cpp example with a main()" >&2
  exit 1
fi
for source in "${examples[@]}"; do
  binary="${source%.cpp}"
  g++ -std=c++17 -O2 -Icpp/include -I/usr/include/eigen3 "$source" build/native/libattn.a -o "$binary"
  echo "-- $source"
  "$binary"
done
echo "README C++ examples: ${#examples[@]} compiled and ran"
