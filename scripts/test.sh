#!/usr/bin/env bash
# `npm test`: everything, on a fresh machine too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-native.sh
