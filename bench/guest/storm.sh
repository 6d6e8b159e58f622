#!/bin/bash
# The storm in the guest (issue 7, item 3): $STORM sessions (50) hit their brakes at once
# (bench/guest/storm.js) with sbd on the event feed (raise off and a long grace: only verdicts).
# Waits up to 120 s for every standing-still verdict. Results: $LAB_OUT/storm.tsv (unit,
# onset ms, verdict ms) and $LAB_OUT/storm-sbd.txt (sbd's RSS and CPU during the storm).
set -u
STORM=${STORM:-50}
cd /mnt/proj
. bench/guest/lib.sh
bench_start storm $'unit\tonset_ms\tverdict_ms'
sbd_config '{"raise": {"enabled": false}, "detector": {"graceS": 600}}'; sleep 5
pid=$(as systemctl --user show -P MainPID sbd.service)
c0=$(awk '{print $14+$15}' /proc/$pid/stat)
as node bench/guest/storm.js "$STORM" 32 >/tmp/onsets.tsv 2>/tmp/rounds.txt || { cat /tmp/rounds.txt >&2; exit 1; }
verdicts() { as node /mnt/proj/bench/guest/journal-incidents.js | grep '"event":"standing-still"'; }
for _ in $(seq 1 24); do [[ $(verdicts | wc -l) -ge $STORM ]] && break; sleep 5; done
c1=$(awk '{print $14+$15}' /proc/$pid/stat)
{ printf 'sbd_rss_kib\t%s\nsbd_cpu_s_during_storm\t%s\n' "$(awk '/^VmRSS/{print $2}' /proc/$pid/status)" "$(awk "BEGIN{print ($c1-$c0)/100}")"; grep onset_round_ms /tmp/rounds.txt; } >"$LAB_OUT/storm-sbd.txt"
verdicts | node -e '
  const v = new Map();
  for (const l of require("fs").readFileSync(0, "utf8").trim().split("\n").filter(Boolean)) {
    const i = JSON.parse(l);
    if (!v.has(i.unit)) v.set(i.unit, i.atMs);
  }
  const rows = require("fs").readFileSync("/tmp/onsets.tsv", "utf8").trim().split("\n").map((l) => l.split("\t"));
  for (const [u, onset] of rows) console.log([u, onset, v.get(u) ?? ""].join("\t"));
' >>"$out"
cat "$LAB_OUT/storm-sbd.txt"
for i in $(seq 0 $((STORM-1))); do echo "storm-$i.scope"; done | xargs as-tester systemctl --user stop
