#!/usr/bin/env bash
# Packs the npm package, installs the tarball into a fresh consumer folder and runs the JS tests
# there, so they import 'attention-wasm' by name exactly as users do: a file missing from the
# tarball or a wrong exports entry fails them. The tests keep their place there (tests/js/),
# beside a link to harness/ (the double-precision references and the memory probe, which import
# nothing of the package), so that their imports of ../../harness/ hold in both trees. They run
# twice: on the system's Node (20) against the three loads of tests/js/backends.js, then on
# Node 24 against the default load alone (the builds are the same bytes; what changes is the
# engine). Then the type test (scripts/test-types.sh) against the same install. On Node 20 two
# test files run at a time: two of the three loads are one thread's work (90 s instead of 109 on
# 2 cores). Not on Node 24: its load alone is the threaded build, whose pool takes every core,
# and two files side by side took as long as one after the other.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
source scripts/nodes.sh
consumer=build/consumer
rm -rf "$consumer"
mkdir -p "$consumer/tests/js"
tarball=$(npm pack --ignore-scripts --silent --pack-destination "$consumer" 2>/dev/null | tail -n 1)
cp tests/js/*.js "$consumer/tests/js/"
ln -s "$root/harness" "$consumer/harness"
cd "$consumer"
echo '{ "name": "attention-wasm-consumer", "private": true, "type": "module" }' > package.json
npm install --no-audit --no-fund --silent "./$tarball"
# The default load uses relaxed SIMD: relaxed_node gives Node 20 its flag; Node 24 needs none.
echo "-- Node $(node --version): the three loads"
ATTN_REPO="$root" relaxed_node node --test --test-concurrency=2 --test-reporter=spec tests/js/*.test.js
echo "-- Node $("$node24" --version): the default load"
ATTN_REPO="$root" ATTN_LOADS=default relaxed_node "$node24" --test --test-concurrency=1 --test-reporter=spec tests/js/*.test.js
cd "$root"
bash scripts/test-types.sh
