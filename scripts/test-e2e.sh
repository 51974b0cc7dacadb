#!/usr/bin/env bash
# Browser tests in headless Debian Chromium and Firefox ESR, each file once per engine
# (tests/e2e/browser.js; E2E_ENGINES=chromium or =firefox runs one): the page and its sections
# (tests/e2e/*.test.js) and an app consuming the packed package through Vite, webpack, Rollup and
# esbuild (tests/e2e/consumer.test.js). Expects scripts/build.sh to have run. Screenshots and the
# page's measured compute times land in build/screenshots/, Firefox's named firefox-*.
set -euo pipefail
cd "$(dirname "$0")/.."
node --test --test-reporter=spec tests/e2e/
