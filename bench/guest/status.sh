#!/bin/bash
# sbctl status against a real sbd with $SESSIONS (500) real sessions (issue 15, item 2), as
# tester: $ROUNDS (15) interleaved runs each of `node -e 0`, `sbctl status --json` (one GetStatus
# call) and `sbctl -c FILE status --json` (the full program: commander, dbus-next, the properties
# and two lists). Results: $LAB_OUT/status.tsv (what, run, ms).
set -u
SESSIONS=${SESSIONS:-500}
ROUNDS=${ROUNDS:-15}
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
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1-t0)/1000000)); }
for r in $(seq 1 "$ROUNDS"); do
  printf 'node -e 0\t%s\t%s\n' "$r" "$(ms as node -e 0)" >>"$out"
  printf 'fast\t%s\t%s\n' "$r" "$(ms as node dist/cli/main.js status --json)" >>"$out"
  printf 'full\t%s\t%s\n' "$r" "$(ms as node dist/cli/main.js -c "$cfgdir/config.json" status --json)" >>"$out"
done
cat "$out"
