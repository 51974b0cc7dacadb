#!/usr/bin/env bash
# `npm start`: installs what is missing, builds, serves the page and prints its URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec node scripts/serve.js build/site
