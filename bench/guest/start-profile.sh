#!/bin/bash
# Where sbd's start goes (issue 15, item 3): for each N in $SIZES, N idle sessions, then sbd
# restarted under `node --cpu-prof`. The profile covers the start and the first seconds after
# READY=1, with no start time-out (sbd is stopped $AFTER_READY_S s later, which writes it). Results in $LAB_OUT:
# start-profile.tsv (N, the restart's wall ms, sbd's own "starting" to "ready" ms from the
# journal), start-N.cpuprofile, start-N.journal.txt.
set -u
SIZES=${SIZES:-10 500}
AFTER_READY_S=${AFTER_READY_S:-3}
cd /mnt/proj
. bench/guest/lib.sh
bench_start start-profile $'sessions\tstart_ms\tstarting_to_ready_ms'
node=$(as sh -c 'command -v node')
dropin=/home/tester/.config/systemd/user/sbd.service.d
as mkdir -p "$dropin" /home/tester/prof
printf '[Service]\nTimeoutStartSec=900\nExecStart=\nExecStart=%s --cpu-prof --cpu-prof-dir=/home/tester/prof /mnt/proj/dist/daemon/main.js\n' "$node" | as tee "$dropin/90-cpu-prof.conf" >/dev/null
as systemctl --user daemon-reload
echo '{}' | as tee "$cfgdir/config.json" >/dev/null
for n in $SIZES; do
  t0=$(date +%s); as node bench/guest/make-sessions.js "$n" || exit 1; echo "made $n sessions in $(( $(date +%s) - t0 )) s"
  as rm -f /home/tester/prof/*.cpuprofile
  t0=$(date +%s%N); as systemctl --user restart sbd.service; t1=$(date +%s%N)
  sleep "$AFTER_READY_S"
  as systemctl --user stop sbd.service
  journalctl -b _SYSTEMD_USER_UNIT=sbd.service -o short-monotonic --no-pager | grep -E 'starting:|sbd ready' | tail -2 >"$LAB_OUT/start-$n.journal.txt" 2>&1
  # sbd's own span: its "starting" line to its "sbd ready" line (monotonic seconds of the journal)
  span=$(awk '/starting:/ && !s {gsub(/[\[\]]/,"",$1); s=$1} /sbd ready/ && !r {gsub(/[\[\]]/,"",$1); r=$1} END{if (s && r) printf "%d", (r-s)*1000; else print "-"}' "$LAB_OUT/start-$n.journal.txt")
  cp /home/tester/prof/*.cpuprofile "$LAB_OUT/start-$n.cpuprofile" 2>/dev/null || echo "no profile for $n" >&2
  printf '%s\t%s\t%s\n' "$n" $(((t1-t0)/1000000)) "$span" | tee -a "$out"
  for i in $(seq 0 $((n-1))); do echo "idle-$n-$i.scope"; done | xargs as-tester systemctl --user stop
done
as rm -f "$dropin/90-cpu-prof.conf"
