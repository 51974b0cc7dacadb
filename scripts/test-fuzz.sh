#!/usr/bin/env bash
# A bounded fuzz run of tests/fuzz/fuzz_attention.cpp (libFuzzer, or the replay driver where
# libFuzzer is missing) under ASan + UBSan, from the committed corpus. New inputs go to
# build/fuzz-corpus, never into tests/fuzz/corpus; a crash is saved under build/fuzz-artifacts/.
# ATTN_FUZZ_SECONDS (default 30) bounds it. The seed is fixed (the JS fuzzers' default, so that
# every npm test mutates the same way; the printed seed replays a run); ATTN_FUZZ_SEED picks
# another, e.g. $RANDOM to explore.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x build/native-asan/tests/fuzz/attn_fuzz ]; then
  bash scripts/configure-sanitize.sh
  cmake --build build/native-asan -j2 --target attn_fuzz
fi
seconds=${ATTN_FUZZ_SECONDS:-30}
seed=${ATTN_FUZZ_SEED:-20261123}
echo "fuzz: seed $seed, $seconds s (replay with ATTN_FUZZ_SEED=$seed)"
rm -rf build/fuzz-corpus
mkdir -p build/fuzz-corpus build/fuzz-artifacts
log=build/fuzz-artifacts/last-run.log
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# A 64 MB use-after-free quarantine instead of 256: peak memory ~250 MB instead of ~600 MB on a
# machine shared with other jobs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
if ! build/native-asan/tests/fuzz/attn_fuzz -seed="$seed" -max_total_time="$seconds" \
  -max_len=256 -timeout=10 -print_final_stats=1 -artifact_prefix=build/fuzz-artifacts/ \
  build/fuzz-corpus tests/fuzz/corpus >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "fuzz: FAILED with seed $seed; the input is in build/fuzz-artifacts/" >&2
  exit 1
fi
# The summary, not libFuzzer's line per new input.
grep -E '^(INFO: Seed|replay driver|stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb|Done)' "$log"
