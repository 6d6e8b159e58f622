#!/bin/bash
# sbctl status against a real sbd with $SESSIONS (500) real sessions (issue 15, item 2), as
# tester: $ROUNDS (15) interleaved runs each of `node -e 0`, `sbctl status --json` (one GetStatus
# call), `sbctl -c FILE status --json` (the full program: commander, dbus-next) and the first
# right after another (sbd busy reading again). Each command starts with sbd idle (sbd reads the figures again after answering,
# off the call: that reading is not let into the next command's time). Then $COLD (3) cold
# calls, each after the figures grew older than sbd's stale limit (30 s), so sbd reads all of
# them before answering. Results: $LAB_OUT/status.tsv (what, run, ms).
set -u
SESSIONS=${SESSIONS:-500}
ROUNDS=${ROUNDS:-15}
COLD=${COLD:-3}
cd /mnt/proj
. bench/guest/lib.sh
bench_start status $'what\trun\tms'
t0=$(date +%s); as node bench/guest/make-sessions.js "$SESSIONS" || exit 1; echo "made $SESSIONS sessions in $(( $(date +%s) - t0 )) s"
sbd_config '{}'
for _ in $(seq 1 120); do
  n=$(as node dist/cli/main.js status --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))' 2>/dev/null)
  [[ $n == "$SESSIONS" ]] && break; sleep 1
done
echo "sbd watches ${n:-?} sessions"
as node dist/cli/main.js status --json >/dev/null; as node dist/cli/main.js -c "$cfgdir/config.json" status --json >/dev/null; as node -e 0  # warm the page cache
sbd_pid=$(as systemctl --user show -p MainPID --value sbd.service)
# sbd_idle: until sbd's CPU time (utime + stime) stands still for 0.3 s (at most 60 s).
sbd_idle() {
  local a b
  for _ in $(seq 1 200); do
    a=$(awk '{print $14 + $15}' "/proc/$sbd_pid/stat"); sleep 0.3; b=$(awk '{print $14 + $15}' "/proc/$sbd_pid/stat")
    [[ $a == "$b" ]] && return
  done
}
ms() { local t0 t1; sbd_idle; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1-t0)/1000000)); }
# ms_busy: timed at once after an untimed call, while sbd reads again what that call left stale
ms_busy() { local t0 t1; sbd_idle; "$@" >/dev/null; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1-t0)/1000000)); }
for r in $(seq 1 "$ROUNDS"); do
  printf 'node -e 0\t%s\t%s\n' "$r" "$(ms as node -e 0)" >>"$out"
  printf 'fast\t%s\t%s\n' "$r" "$(ms as node dist/cli/main.js status --json)" >>"$out"
  printf 'full\t%s\t%s\n' "$r" "$(ms as node dist/cli/main.js -c "$cfgdir/config.json" status --json)" >>"$out"
  printf 'busy\t%s\t%s\n' "$r" "$(ms_busy as node dist/cli/main.js status --json)" >>"$out"
done
for r in $(seq 1 "$COLD"); do
  sleep 31
  printf 'cold\t%s\t%s\n' "$r" "$(ms as node dist/cli/main.js status --json)" >>"$out"
done
echo "sbd's CPU time over the whole run (ticks): $(awk '{print $14 + $15}' "/proc/$sbd_pid/stat")"
cat "$out"
