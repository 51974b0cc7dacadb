#!/usr/bin/env bash
# `npm run build`: the wasm package in dist/ and the static page in build/site/ (relative paths,
# so it can be hosted from any folder). It installs what is missing first, as `npm start`,
# `npm test` and `npm pack` do, so it works on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-wasm.sh
npx vite build --config web/vite.config.js --logLevel warn
