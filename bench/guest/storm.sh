#!/bin/bash
# The storm in the guest (issue 7, item 3; issue 15, item 5): first $SINGLES (5) single sessions
# one after another, the baseline, then $STORM sessions (50) hitting their brakes at once
# (bench/guest/storm.js), each with a $BRAKE_MIB (32) brake, sbd on the event feed (raise off and
# a long grace: only verdicts). Waits up to 120 s for every standing-still verdict. Results:
# $LAB_OUT/storm.tsv (run, unit, onset ms, verdict ms; run is "single" or "storm") and
# $LAB_OUT/storm-sbd.txt (sbd's RSS, and its CPU from the storm's release to its last verdict).
# PREFILL=0: the hogs start from nothing instead of 3 MiB under their brakes (bench/guest/storm.js).
# ACCOUNTING=off: their scopes get MemoryAccounting=no (systemd then does not watch their memory.events).
# SBD_PROF=1: sbd runs under node --cpu-prof; its profile lands in $LAB_OUT/sbd-storm.cpuprofile.
# SBD_TIMING=1: sbd runs with bench/guest/sbd-timing.js (its hot functions timed, no profiler);
# the running totals land in $LAB_OUT/sbd-timing.jsonl, each feed's wakes and windows in
# $LAB_OUT/sbd-timing-windows.jsonl (bench/storm-windows.js).
# SBD_TIMING_PSI=1 (with SBD_TIMING): each window's record carries its session's memory some/full and
# cpu some stall totals and memory.current (bench/storm-psi.js).
# SBD_ROOT_WEIGHT=N: a drop-in puts sbd.service in the user manager's root slice (-.slice), beside
# the sessions' slice and systemd --user's init.scope, at CPUWeight=N (a what-if for sbd's share of
# the CPU: bench/RESULTS.md, sessions 14 and 33); storm-sbd.txt's sbd_cgroup and sbd_cpu_weight say
# what the kernel has.
set -u
STORM=${STORM:-50}
SINGLES=${SINGLES:-5}
BRAKE_MIB=${BRAKE_MIB:-32}
cd /mnt/proj
. bench/guest/lib.sh
bench_start storm $'run\tunit\tonset_ms\tverdict_ms'
if [[ -n ${SBD_PROF:-} ]]; then # sbd under node --cpu-prof: the profile is written when it stops
  # (node refuses --cpu-prof in NODE_OPTIONS: a drop-in replaces ExecStart)
  as mkdir -p /home/tester/.config/systemd/user/sbd.service.d /home/tester/sbd-prof
  # (and no watchdog: a profile is written only by an orderly exit, never after the watchdog's SIGABRT)
  printf '[Service]\nWatchdogSec=0\nTimeoutStopSec=600\nExecStart=\nExecStart=%s --cpu-prof --cpu-prof-dir=/home/tester/sbd-prof /mnt/proj/dist/daemon/main.js\n' "$(as sh -c 'command -v node')" | as tee /home/tester/.config/systemd/user/sbd.service.d/90-prof.conf >/dev/null
  as systemctl --user daemon-reload
fi
if [[ -n ${SBD_TIMING:-} ]]; then
  as mkdir -p /home/tester/.config/systemd/user/sbd.service.d
  printf '[Service]\nEnvironment=NODE_OPTIONS=--require=/mnt/proj/bench/guest/sbd-timing.js SBD_TIMING_OUT=/home/tester/sbd-timing.jsonl'"${SBD_TIMING_PSI:+ SBD_TIMING_PSI=1}"'\n' | as tee /home/tester/.config/systemd/user/sbd.service.d/91-timing.conf >/dev/null
  as systemctl --user daemon-reload
fi
if [[ -n ${SBD_ROOT_WEIGHT:-} ]]; then
  [[ $SBD_ROOT_WEIGHT =~ ^[1-9][0-9]*$ ]] && ((SBD_ROOT_WEIGHT <= 10000)) || { echo "SBD_ROOT_WEIGHT=$SBD_ROOT_WEIGHT: a CPUWeight, 1-10000" >&2; exit 2; }
  as mkdir -p /home/tester/.config/systemd/user/sbd.service.d
  printf '[Service]\nSlice=-.slice\nCPUWeight=%s\n' "$SBD_ROOT_WEIGHT" | as tee /home/tester/.config/systemd/user/sbd.service.d/92-root-weight.conf >/dev/null
  as systemctl --user daemon-reload
fi
# Every second, the CPU time of each cgroup near the top (and of the user manager's children) and
# the guest's, into $LAB_OUT/cgroup-cpu.txt: who has the CPU while sbd waits for it.
cpu_sampler() {
  local files=() f k v line
  # sbd.service's own too (app.slice/sbd.service): its CPU from the release to the last verdict
  mapfile -t files < <(find /sys/fs/cgroup -maxdepth 3 -name cpu.stat; ls -d /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/{*,app.slice/sbd.service}/cpu.stat 2>/dev/null)
  while [[ -e /tmp/cpu-sampler-on ]]; do
    line="t=$EPOCHREALTIME"
    read -r k v <"/proc/stat"; line+=" /proc/stat=$v"
    for f in "${files[@]}"; do
      while read -r k v; do [[ $k == usage_usec ]] && line+=" ${f#/sys/fs/cgroup/}=$v" && break; done <"$f" 2>/dev/null
    done
    echo "$line"
    sleep 1
  done >"$LAB_OUT/cgroup-cpu.txt"
}
sbd_config '{"raise": {"enabled": false}, "detector": {"graceS": 600}}'; sleep 5
pid=$(as systemctl --user show -P MainPID sbd.service)
verdicts() { as node /mnt/proj/bench/guest/journal-incidents.js | grep '"event":"standing-still"'; }
# sbd's journal and restarts, for the record (and when something failed)
sbd_record() {
  as systemctl --user show -p NRestarts -p Result -p MainPID sbd.service | tee "$LAB_OUT/sbd-unit.txt"
  as journalctl --user -u sbd.service --no-pager -o cat | grep -v '"level":20' | tail -3000 >"$LAB_OUT/sbd-journal.txt"
}
# storm RUN N PREFIX: N sessions released together; waits for N verdicts of PREFIX-*; appends rows
storm() {
  as env SBD_PID="$pid" STORM_ACCOUNTING="${ACCOUNTING:-}" STORM_PRESSURE_OUT="$LAB_OUT/pressure-$3.json" node bench/guest/storm.js "$2" "$BRAKE_MIB" "$3" "${PREFILL:-1}" >/tmp/onsets.tsv 2>/tmp/rounds.txt || { cat /tmp/rounds.txt >&2; sbd_record; exit 1; }
  for _ in $(seq 1 24); do [[ $(verdicts | grep -c "\"$3-") -ge $2 ]] && break; sleep 5; done
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  verdicts | RUN=$1 node -e '
    const v = new Map();
    for (const l of require("fs").readFileSync(0, "utf8").trim().split("\n").filter(Boolean)) {
      const i = JSON.parse(l);
      if (!v.has(i.unit)) v.set(i.unit, i.atMs);
    }
    const rows = require("fs").readFileSync("/tmp/onsets.tsv", "utf8").trim().split("\n").map((l) => l.split("\t"));
    for (const [u, onset] of rows) console.log([process.env.RUN, u, onset, v.get(u) ?? ""].join("\t"));
  ' >>"$out"
  for i in $(seq 0 $(($2-1))); do echo "$3-$i.scope"; done | xargs as-tester systemctl --user stop
}
for s in $(seq 1 "$SINGLES"); do storm single 1 "single$s"; sleep 3; done
touch /tmp/cpu-sampler-on; cpu_sampler &
storm storm "$STORM" storm
rm -f /tmp/cpu-sampler-on
c0=$(awk -F'\t' '$1 == "sbd_ticks_at_release" {print $2}' /tmp/rounds.txt)
{ printf 'sbd_rss_kib\t%s\nsbd_cpu_s_during_storm\t%s\n' "$(awk '/^VmRSS/{print $2}' /proc/$pid/status)" "$(awk "BEGIN{print ($c1-$c0)/100}")"; grep -E '^(hogs_ready|sbd_adopted_after_s|released_at_ms|onset_round_ms|onset_notices|onsets_after_release_s|onsets_seen|onset_read_errors|watcher_cgroup)' /tmp/rounds.txt; } >"$LAB_OUT/storm-sbd.txt"
cat "$LAB_OUT/storm-sbd.txt"
sbd_record
# sbd's and the sessions' CPU weights as the kernel has them, and whether the user manager hands cpu down (units/sbd.service)
cg=/sys/fs/cgroup$(as systemctl --user show -P ControlGroup sbd.service)
um=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service
printf 'sbd_cgroup\t%s\nsbd_cpu_weight\t%s\nsessions_cpu_weight\t%s\nuser_manager_subtree_control\t%s\n' "${cg#"$um"/}" "$(cat "$cg/cpu.weight" 2>/dev/null || echo none)" "$(cat "$um/sessions.slice/cpu.weight" 2>/dev/null || echo none)" "$(cat "$um/cgroup.subtree_control")" >>"$LAB_OUT/storm-sbd.txt"
# what else runs in sbd's slice (bench/storm-table.js's sbdCpu reads app.slice for runs kept before sbd.service's own)
printf 'app_slice_children\t%s\n' "$(cd "$um/app.slice" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f ' )" >>"$LAB_OUT/storm-sbd.txt"
if [[ -n ${SBD_TIMING:-} ]]; then as systemctl --user stop sbd.service; cp /home/tester/sbd-timing.jsonl /home/tester/sbd-timing-windows.jsonl "$LAB_OUT/"; fi
if [[ -n ${SBD_PROF:-} ]]; then
  as systemctl --user stop sbd.service; for _ in $(seq 1 60); do ls /home/tester/sbd-prof/*.cpuprofile >/dev/null 2>&1 && break; sleep 2; done
  cp /home/tester/sbd-prof/*.cpuprofile "$LAB_OUT/sbd-storm.cpuprofile" && echo "sbd's profile: $LAB_OUT/sbd-storm.cpuprofile"
fi
