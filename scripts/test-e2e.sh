#!/usr/bin/env bash
# Browser tests in headless Debian Chromium: the page (tests/e2e/page.test.js) and an app
# consuming the packed package through Vite, webpack, Rollup and esbuild
# (tests/e2e/consumer.test.js). Expects scripts/build.sh to have
# run. Screenshots and the page's measured compute times land in build/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
node --test --test-reporter=spec tests/e2e/
