#!/usr/bin/env bash
# Browser tests in Debian's three engines, each file once per engine (tests/e2e/browser.js;
# E2E_ENGINES=chromium, =firefox or =webkit, or a comma-separated list, runs fewer): headless
# Chromium and Firefox ESR, and WebKit (WebKitGTK's MiniBrowser on a virtual X display): the page
# and its sections (tests/e2e/*.test.js) and an app consuming the packed package through Vite,
# webpack, Rollup and esbuild (tests/e2e/consumer.test.js). Expects scripts/build.sh to have run.
# Screenshots and the page's measured compute times land in build/screenshots/, Firefox's named
# firefox-* and WebKit's webkit-*.
#
# Two lanes at once, then the benchmark alone. Most of the page's tests wait on the browsers (a
# page load, a WebDriver round trip) rather than compute, while the sections that train compute
# on every core: the one lane's waits are the other's time. The Transformer's section, which
# trains too, goes with the page's tests, to even the lanes out. The benchmark section goes last,
# alone: it measures speed and asserts that the page stays responsive while it runs. The
# training tests' bounds are in training seconds, which the waiting lane slows a little: WebKit,
# the slowest, reaches the Transformer's BLEU in ~20 s of its 60.
set -euo pipefail
cd "$(dirname "$0")/.."
e2e=tests/e2e
mkdir -p build
# lane NAME FILES...: runs the files, one at a time, into build/e2e-NAME.log.
lane() {
  local name=$1
  shift
  node --test --test-reporter=spec "$@" >"build/e2e-$name.log" 2>&1
}
# The lanes as balanced as measured on a clean clone (380 s and 514 s with the Transformer's
# section in the second).
lane pages "$e2e/page.test.js" "$e2e/threads.test.js" "$e2e/consumer.test.js" "$e2e/transformer.test.js" &
pages=$!
lane training "$e2e/bahdanau.test.js" "$e2e/induction.test.js" &
training=$!
status=0
wait "$pages" || status=1
echo "-- the page, its threads, the consumer app and the Transformer's section"
cat build/e2e-pages.log
wait "$training" || status=1
echo "-- the Bahdanau and induction sections"
cat build/e2e-training.log
if [ "$status" -ne 0 ]; then exit "$status"; fi
echo "-- the benchmark section, alone"
node --test --test-reporter=spec "$e2e/bench-section.test.js"
