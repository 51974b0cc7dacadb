#!/usr/bin/env bash
# Browser tests in Debian's three engines, each file once per engine (tests/e2e/browser.js;
# E2E_ENGINES=chromium, =firefox or =webkit, or a comma-separated list, runs fewer): headless
# Chromium and Firefox ESR, and WebKit (WebKitGTK's MiniBrowser on a virtual X display): the page
# and its sections (tests/e2e/*.test.js) and an app consuming the packed package through Vite,
# webpack, Rollup and esbuild (tests/e2e/consumer.test.js). Expects scripts/build.sh to have run.
# Screenshots and the page's measured compute times land in build/screenshots/, Firefox's named
# firefox-* and WebKit's webkit-*.
set -euo pipefail
cd "$(dirname "$0")/.."
node --test --test-reporter=spec tests/e2e/
