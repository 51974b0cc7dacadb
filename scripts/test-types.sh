#!/usr/bin/env bash
# Type test: every example of the README and docs/*.md that uses the package, and
# tests/types/misuse.ts (whose `@ts-expect-error` lines must all be errors), compile under
# `tsc --strict --noEmit` against the .d.ts of the packed package installed in build/consumer by
# scripts/test-js.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
types=build/consumer/types
if [ ! -f build/consumer/node_modules/attention-wasm/package.json ]; then
  echo "test-types: run scripts/test-js.sh first (it installs the packed package)" >&2
  exit 1
fi
rm -rf "$types"
mkdir -p "$types"
cp tests/types/tsconfig.json tests/types/*.ts "$types/"
node tests/types/extract-readme.js "$root" "$types"
cd "$types"
"$root/node_modules/.bin/tsc" -p tsconfig.json --strict --noEmit
echo "types: ok ($(ls ./*.mjs ./*.ts | wc -l) files)"
