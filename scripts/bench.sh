#!/usr/bin/env bash
# `npm run bench`: builds what is missing, then runs the side-by-side benchmark (scripts/bench).
# Pass --quick for a short run (n ∈ {128, 512}, d = 64, multi-head at n = 128, no n = 32768).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-wasm.sh >/dev/null
# Relaxed SIMD is behind a flag in Node 20; section 1 and the peak section time both SIMD loads.
node --experimental-wasm-relaxed-simd scripts/bench/run.js "$@"
