#!/usr/bin/env bash
# `npm test`: everything, on a fresh machine too — native Catch2 suite, both wasm builds, the
# JS tests against the packed package, and the browser tests in headless Chromium and Firefox ESR.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== native tests (Catch2 via CTest)"
bash scripts/test-native.sh
echo "== build: wasm (SIMD + scalar) and the page"
bash scripts/build.sh
echo "== micro-kernel tests in both wasm builds (Catch2 under node)"
bash scripts/test-wasm-microkernels.sh
echo "== JS tests (node:test, against the npm pack tarball)"
bash scripts/test-js.sh
echo "== browser tests (headless Chromium and Firefox ESR)"
bash scripts/test-e2e.sh
