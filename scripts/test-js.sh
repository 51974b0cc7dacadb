#!/usr/bin/env bash
# Packs the npm package, installs the tarball into a fresh consumer folder and runs the JS tests
# there, so they import 'attention-wasm' by name exactly as users do: a file missing from the
# tarball or a wrong exports entry fails them. Then the type test (scripts/test-types.sh) against
# the same install.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
consumer=build/consumer
rm -rf "$consumer"
mkdir -p "$consumer/test"
tarball=$(npm pack --ignore-scripts --silent --pack-destination "$consumer" 2>/dev/null | tail -n 1)
cp tests/js/*.js "$consumer/test/"
cd "$consumer"
echo '{ "name": "attention-wasm-consumer", "private": true, "type": "module" }' > package.json
npm install --no-audit --no-fund --silent "./$tarball"
# Relaxed SIMD is behind a flag in Node 20 (on by default in Chromium): the default load uses it.
ATTN_REPO="$root" node --experimental-wasm-relaxed-simd --test --test-reporter=spec test/*.test.js
cd "$root"
bash scripts/test-types.sh
