#!/bin/bash
# Idle cost in the guest (issue 7, item 1): for each N in $SIZES, N idle sessions; sbd on the
# event feed, then the same sbd forced into timer sampling every 5 s (a 1 s PSI window, which the
# kernel refuses to an unprivileged user); for $SECONDS_EACH s each: sbd's voluntary and
# involuntary context switches (its wakeups) and CPU time. Results: $LAB_OUT/idle.tsv.
set -u
SIZES=${SIZES:-10 100 500}
SECONDS_EACH=${SECONDS_EACH:-60}
cd /mnt/proj
as() { as-tester "$@"; }
out=$LAB_OUT/idle.tsv
printf 'sessions\tvariant\tseconds\tvoluntary_ctxt\tinvoluntary_ctxt\tcpu_s\trss_kib\tstatus_ms\n' >"$out"
as node dist/cli/main.js install >/dev/null
cfgdir=/home/tester/.config/sessionbrake; as mkdir -p $cfgdir
measure() { # N VARIANT
  local pid; pid=$(as systemctl --user show -P MainPID sbd.service)
  sleep 10   # let adoption settle
  read -r v0 i0 < <(awk '/^voluntary_ctxt/{v=$2} /^nonvoluntary_ctxt/{i=$2} END{print v, i}' /proc/$pid/status)
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  sleep "$SECONDS_EACH"
  read -r v1 i1 < <(awk '/^voluntary_ctxt/{v=$2} /^nonvoluntary_ctxt/{i=$2} END{print v, i}' /proc/$pid/status)
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  rss=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
  t0=$(date +%s%N); as node dist/cli/main.js status --json >/dev/null; t1=$(date +%s%N)   # (includes node start-up)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$SECONDS_EACH" $((v1-v0)) $((i1-i0)) "$(awk "BEGIN{print ($c1-$c0)/100}")" "$rss" $(((t1-t0)/1000000)) | tee -a "$out"
}
for n in $SIZES; do
  as node bench/guest/make-sessions.js "$n" || exit 1
  echo '{}' | as tee $cfgdir/config.json >/dev/null
  as systemctl --user restart sbd.service; measure "$n" feed
  echo '{"detector": {"windowS": 1, "fallbackIntervalS": 5}}' | as tee $cfgdir/config.json >/dev/null
  as systemctl --user restart sbd.service; measure "$n" sampling-5s
  for i in $(seq 0 $((n-1))); do echo "idle-$n-$i.scope"; done | xargs as systemctl --user stop
done
