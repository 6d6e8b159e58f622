#!/bin/bash
# Where `sbctl status` spends its time in the guest (issue 15, item 2), as tester with $SESSIONS
# (500) real sessions: sbd under `node --cpu-prof` (a drop-in's ExecStart, nothing in src/)
# answering $CALLS (10) GetStatus calls made by busctl (sbd's side alone, timed), then sbctl's
# side: `node --cpu-prof` of `sbctl status --json`, the modules its fast path loads and what
# requiring them costs under 9p. Results in $LAB_OUT: status-profile.tsv (what, run, ms),
# sbd.cpuprofile, sbctl.cpuprofile, sbctl-modules.txt.
set -u
SESSIONS=${SESSIONS:-500}
CALLS=${CALLS:-10}
cd /mnt/proj
. bench/guest/lib.sh
bench_start status-profile $'what\trun\tms'
t0=$(date +%s); as node bench/guest/make-sessions.js "$SESSIONS" || exit 1; echo "made $SESSIONS sessions in $(( $(date +%s) - t0 )) s"
prof=/home/tester/prof
dropin=/home/tester/.config/systemd/user/sbd.service.d
node=$(as sh -c 'command -v node')
as mkdir -p "$prof" "$dropin"
# (node refuses --cpu-prof in NODE_OPTIONS: the drop-in replaces ExecStart; no start time-out)
printf '[Service]\nTimeoutStartSec=900\nExecStart=\nExecStart=%s --cpu-prof --cpu-prof-dir=%s --cpu-prof-name=sbd.cpuprofile /mnt/proj/dist/daemon/main.js\n' "$node" "$prof" | as tee "$dropin/90-cpu-prof.conf" >/dev/null
as systemctl --user daemon-reload
sbd_config '{}'
get() { as busctl --user call dev.sessionbrake.Manager1 /dev/sessionbrake/Manager1 dev.sessionbrake.Manager1 GetStatus "$@"; }
for _ in $(seq 1 300); do
  n=$(get -j 2>/dev/null | python3 -c 'import json,sys; print(len(json.loads(json.load(sys.stdin)["data"][0])["sessions"]))' 2>/dev/null)
  [[ $n == "$SESSIONS" ]] && break; sleep 1
done
echo "sbd watches ${n:-?} sessions"
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1-t0)/1000000)); }
for r in $(seq 1 "$CALLS"); do
  printf 'busctl GetStatus\t%s\t%s\n' "$r" "$(ms get)" >>"$out"
  printf 'busctl Ping\t%s\t%s\n' "$r" "$(ms as busctl --user call dev.sessionbrake.Manager1 /dev/sessionbrake/Manager1 org.freedesktop.DBus.Peer Ping)" >>"$out"
done
# sbctl's side: the modules its fast path loads, the cost of requiring them, a profile of one run.
as node -e 0; as node dist/cli/main.js status --json >/dev/null   # warm the page cache
as node -e "const t=process.hrtime.bigint(); require('/mnt/proj/dist/cli/status-fast'); console.error('require ms', Number(process.hrtime.bigint()-t)/1e6); console.log(Object.keys(require.cache).join('\n'))" >"$LAB_OUT/sbctl-modules.txt"
for r in $(seq 1 5); do
  printf 'node -e 0\t%s\t%s\n' "$r" "$(ms as node -e 0)" >>"$out"
  printf 'require status-fast\t%s\t%s\n' "$r" "$(ms as node -e "require('/mnt/proj/dist/cli/status-fast')")" >>"$out"
  printf 'sbctl status --json\t%s\t%s\n' "$r" "$(ms as node dist/cli/main.js status --json)" >>"$out"
done
as mkdir -p /tmp/sbctl-prof
as node --cpu-prof --cpu-prof-dir=/tmp/sbctl-prof --cpu-prof-name=sbctl.cpuprofile dist/cli/main.js status --json >/dev/null
cp /tmp/sbctl-prof/sbctl.cpuprofile "$LAB_OUT/" || echo "no sbctl profile"
as systemctl --user stop sbd.service   # SIGTERM: sbd exits and V8 writes the profile
cp "$prof/sbd.cpuprofile" "$LAB_OUT/" || echo "no sbd profile"
cat "$out"
