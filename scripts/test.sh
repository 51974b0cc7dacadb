#!/usr/bin/env bash
# `npm test`: everything, on a fresh machine too — native Catch2 suite, the three wasm builds, the
# JS tests against the packed package, and the browser tests in Chromium, Firefox ESR and WebKit.
# It ends with the seconds each stage took.
#
# The native suite needs nothing the other steps build, and the micro-kernel tests nothing after
# the wasm builds; neither checks a time. Both run beside the steps that follow them, at the
# lowest CPU priority (scripts/stage.sh's `beside`), on what those leave idle: the browser tests
# kept 1.1-1.5 of the 2 cores busy on average (per test file and engine, 2026-11-29). Their
# output is printed at the end, and a failure there fails npm test as any other.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh
stage "setup (apt and npm packages, when missing)" bash scripts/setup.sh
beside "native tests (Catch2 via CTest)" bash scripts/test-native.sh
stage "build: wasm (SIMD + scalar) and the page" bash scripts/build.sh
beside "micro-kernel tests in the wasm builds: SIMD128, relaxed SIMD, scalar (Catch2 under node)" \
  bash scripts/test-wasm-microkernels.sh
stage "JS tests (node:test, against the npm pack tarball)" bash scripts/test-js.sh
stage "browser tests (Chromium, Firefox ESR and WebKit)" bash scripts/test-e2e.sh
beside_wait
echo "== npm test passed in $SECONDS s:"
stage_times
