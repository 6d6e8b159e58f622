#!/bin/bash
# The slice storm in the guest (issue 11): $N sessions (20) under one slice brake ($BRAKE_MIB,
# 1200), $GREEDY (3) of them greedy, sbd arbitrating the slice (grace 10 s, SIGKILL 5 s after
# SIGTERM). Results: $LAB_OUT/slice-storm.tsv, one row per incident that matters (slice onset,
# slice-standing-still, culprit, will-stop, subtree-stopped: kind, session, ms since the epoch)
# and one per session with its fate; $LAB_OUT/slice-storm-sbd.txt, sbd's RSS and CPU.
set -u
N=${N:-20} GREEDY=${GREEDY:-3} BRAKE_MIB=${BRAKE_MIB:-1200}
cd /mnt/proj
. bench/guest/lib.sh
bench_start slice-storm $'what\tsession\tms\tdetail'
printf '[Slice]\nMemoryHigh=%sM\nMemorySwapMax=0\n' "$BRAKE_MIB" | as tee /home/tester/.config/systemd/user/storm.slice >/dev/null
as systemctl --user daemon-reload
sbd_config '{"slices": ["storm.slice"], "detector": {"graceS": 10}, "stop": {"termToKillS": 5}}'; sleep 5
pid=$(as systemctl --user show -P MainPID sbd.service)
c0=$(awk '{print $14+$15}' /proc/$pid/stat)
as env LAB_OUT="$LAB_OUT" node bench/guest/slice-storm.js "$N" "$GREEDY" "$BRAKE_MIB" 600 >/tmp/storm.out 2>/tmp/storm.err || { cat /tmp/storm.err >&2; exit 1; }
sleep 3
c1=$(awk '{print $14+$15}' /proc/$pid/stat)
printf 'sbd_rss_kib\t%s\nsbd_cpu_s\t%s\n' "$(awk '/^VmRSS/{print $2}' /proc/$pid/status)" "$(awk "BEGIN{print ($c1-$c0)/100}")" >"$LAB_OUT/slice-storm-sbd.txt"
as node /mnt/proj/bench/guest/journal-incidents.js | node -e '
  const fs = require("fs");
  const out = fs.readFileSync("/tmp/storm.out", "utf8").trim().split("\n").map((l) => l.split("\t"));
  for (const [, ms] of out.filter((r) => r[0] === "onset")) console.log(["onset", "storm.slice", ms, ""].join("\t"));
  const kinds = ["slice-standing-still", "culprit", "will-stop", "subtree-stopped", "standing-still", "brake-raised"];
  for (const l of fs.readFileSync(0, "utf8").trim().split("\n").filter(Boolean)) {
    let i; try { i = JSON.parse(l); } catch { continue; }
    if (kinds.includes(i.event) && i.atMs) console.log([i.event, i.session, i.atMs, i.culprit ?? i.rule ?? ""].join("\t"));
  }
  const alive = (p) => { try { return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${p}/stat`, "utf8")); } catch { return false; } };
  for (const [, name, kind, pids] of out.filter((r) => r[0] === "session")) {
    const p = JSON.parse(pids);
    const up = Object.keys(p).filter((k) => alive(p[k]));
    console.log(["fate", name, "", `${kind} alive:${up.join(",") || "-"}`].join("\t"));
  }
' >>"$out"
cat "$LAB_OUT/slice-storm-sbd.txt"
as systemctl --user stop storm.slice; as systemctl --user reset-failed >/dev/null 2>&1 || true
