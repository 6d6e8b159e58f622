#!/bin/bash
# Idle cost in the guest (issue 7, items 1 and 3): for each N in $SIZES, N idle sessions, and for
# $SECONDS_EACH s each: sbd on the event feed; the same sbd forced into timer sampling every 5 s
# (a 1 s PSI window, which the kernel refuses to an unprivileged user); and systemd-oomd alone
# (sbd stopped) watching the same slice with ManagedOOMMemoryPressure=kill. Counted: the
# process's main thread's voluntary and involuntary context switches (its wakeups) and its CPU
# time; for sbd also its RSS, how long its (re)start took (adoption of all N sessions happens
# before READY=1) and the wall time of `sbctl status --json`. Results: $LAB_OUT/idle.tsv.
set -u
SIZES=${SIZES:-10 100 500}
SECONDS_EACH=${SECONDS_EACH:-60}
# Idle is the steady state: V8 runs its memory reducer (three full GCs) about 85 s after node
# starts (seen with --trace-gc under TCG), so each count starts this long after the restart.
SETTLE_S=${SETTLE_S:-100}
cd /mnt/proj
. bench/guest/lib.sh
bench_start idle $'sessions\tvariant\tseconds\tvoluntary_ctxt\tinvoluntary_ctxt\tcpu_s\trss_kib\tstatus_ms\tstart_ms'
# oomd runs throughout (its own process; it is what a machine with oomd has anyway).
oomd_on || { echo "idle.sh: systemd-oomd did not start" >&2; exit 1; }
ctxt() { awk '/^voluntary_ctxt/{v=$2} /^nonvoluntary_ctxt/{i=$2} END{print v, i}' "/proc/$1/status"; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
measure() { # N VARIANT PID START_MS
  local pid=$3 v0 i0 v1 i1 c0 c1 rss status=- t0 t1
  sleep "$SETTLE_S"
  read -r v0 i0 < <(ctxt "$pid"); c0=$(ticks "$pid")
  sleep "$SECONDS_EACH"
  read -r v1 i1 < <(ctxt "$pid"); c1=$(ticks "$pid")
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")
  if [[ $2 == feed ]]; then   # status includes node's start-up: timed alone as its baseline
    t0=$(date +%s%N); as node dist/cli/main.js status --json >/dev/null; t1=$(date +%s%N); status=$(((t1-t0)/1000000))
    t0=$(date +%s%N); as node -e 0; t1=$(date +%s%N); status="$status/$(((t1-t0)/1000000))"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$SECONDS_EACH" $((v1-v0)) $((i1-i0)) "$(awk "BEGIN{print ($c1-$c0)/100}")" "$rss" "$status" "$4" | tee -a "$out"
}
sbd_with() { # CONFIG -> prints the restart's wall ms
  local t0 t1
  t0=$(date +%s%N); sbd_config "$1"; t1=$(date +%s%N)
  echo $(((t1-t0)/1000000))
}
checked=
for n in $SIZES; do
  t0=$(date +%s); as node bench/guest/make-sessions.js "$n" || exit 1; echo "made $n sessions in $(( $(date +%s) - t0 )) s"
  if [[ -z $checked ]]; then oomd_check || { echo "idle.sh: systemd-oomd does not watch sessions.slice" >&2; exit 1; }; checked=1; fi
  ms=$(sbd_with '{}'); measure "$n" feed "$(as systemctl --user show -P MainPID sbd.service)" "$ms"
  ms=$(sbd_with '{"detector": {"windowS": 1, "fallbackIntervalS": 5}}'); measure "$n" sampling-5s "$(as systemctl --user show -P MainPID sbd.service)" "$ms"
  as systemctl --user stop sbd.service; measure "$n" oomd "$(systemctl show -P MainPID systemd-oomd.service)" -
  for i in $(seq 0 $((n-1))); do echo "idle-$n-$i.scope"; done | xargs as-tester systemctl --user stop
done
