# Sourced by scripts/test.sh and scripts/test-native.sh: `stage NAME CMD...` prints "MARK NAME",
# runs CMD and records its wall-clock seconds; `stage_times` prints them as a table. npm test has
# a time budget (20 minutes on the 2-core machine), and this says where it goes.
#
# `beside NAME CMD...` starts CMD in the background at the lowest CPU priority (nice 19), in its
# own process group, its output into build/beside/; `beside_wait` waits for every such job,
# prints its output, records its seconds (from its start to its last line), and fails if one
# failed. A job still running when the script exits (a stage failed) is stopped. For work that
# checks no time of its own: the stages in the foreground keep the cores whenever they want them
# (CFS gives a nice-19 task 1.5% of a core against a nice-0 one), so their timed checks keep
# their pace, and the job takes what they leave idle. (Without the autogroup's nice below, the
# job took half the machine: section 5's three-model training in Chromium ran 78 s against 55.)
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

beside_names=()
beside_pids=()
beside_starts=()
beside() {
  local name=$1 log
  shift
  mkdir -p build/beside
  log=build/beside/${#beside_pids[@]}.log
  echo "$stage_mark $name: started beside the steps that follow, at nice 19, into $log"
  # setsid gives the job a session, and Linux's autogroup scheduling (sched_autogroup_enabled, on
  # by default) shares the CPU between sessions by their group's nice, not their tasks': the
  # group is set to 19 as well, where the kernel has it.
  setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 "$@"' beside "$@" \
    >"$log" 2>&1 &
  beside_names+=("$name")
  beside_pids+=($!)
  beside_starts+=("$(date +%s)")
  trap beside_stop EXIT
}
beside_stop() {
  local pid
  for pid in "${beside_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || continue
    echo "$stage_mark stopping the job beside ($pid): its output so far is in build/beside/"
    kill -- -"$pid" 2>/dev/null || true
  done
}
beside_wait() {
  local i log status failed=0
  for i in "${!beside_pids[@]}"; do
    log=build/beside/$i.log
    status=0
    wait "${beside_pids[$i]}" || status=$?
    echo "$stage_mark ${beside_names[$i]} (ran beside the steps above; its output)"
    cat "$log"
    stage_timings+=("$(printf '%5d s  %s' $(($(stat -c %Y "$log") - beside_starts[i])) \
      "${beside_names[$i]} (beside, nice 19)")")
    [ "$status" -eq 0 ] || { echo "$stage_mark failed: ${beside_names[$i]}"; failed=1; }
  done
  return "$failed"
}
