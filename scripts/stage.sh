# Sourced by scripts/test.sh and scripts/test-native.sh: `stage NAME CMD...` prints "MARK NAME",
# runs CMD and records its wall-clock seconds; `stage_times` prints them as a table. npm test has
# a time budget (20 minutes on the 2-core machine), and this says where it goes.
stage_mark=${stage_mark:-==}
stage_timings=()
stage() {
  local name=$1 started=$SECONDS
  shift
  echo "$stage_mark $name"
  "$@"
  stage_timings+=("$(printf '%5d s  %s' $((SECONDS - started)) "$name")")
}
stage_times() {
  printf '%s\n' "${stage_timings[@]}"
}
