#!/bin/bash
# A burst of new sessions in front of a freshly started sbd (issue 15, session 13): $CREATION (200)
# scopes of sessions.slice made over D-Bus as fast as systemd takes them, each a Python hog
# prefilled to 3 MiB under a 16 MiB brake (bench/guest/storm.js, never released). Before session
# 13 sbd's event loop ran one turn past its 30 s watchdog while it read them, and systemd killed
# it. Results in $LAB_OUT/creation.tsv: sbd's restarts and watchdog time-outs, the Gets sbd sent
# systemd (a dbus-monitor as tester), and how long after the hogs were ready sbctl status listed
# them all.
set -u
N=${CREATION:-200}
cd /mnt/proj
. bench/guest/lib.sh
bench_start creation $'sessions\tsbd_restarts\twatchdog_timeouts\tgets_to_systemd\tlisted_after_ready_s'
sbd_config '{"raise": {"enabled": false}, "detector": {"graceS": 600}}'; sleep 5
as sh -c 'dbus-monitor --session "type=method_call,destination=org.freedesktop.systemd1,member=Get" >/tmp/creation-mon.txt 2>&1 &'
sleep 2
as env STORM_CREATE_ONLY=1 STORM_PRESSURE_OUT=/tmp/creation-p.json node bench/guest/storm.js "$N" 16 burst 1 >/dev/null 2>/tmp/creation-rounds.txt
sleep 5
pkill dbus-monitor
restarts=$(as systemctl --user show -P NRestarts sbd.service)
timeouts=$(as journalctl --user -u sbd.service --no-pager -o cat | grep -c 'Watchdog timeout')
gets=$(grep -c 'member=Get$' /tmp/creation-mon.txt)
listed=$(awk -F'\t' '$1 == "sbd_adopted_after_s" {print $2}' /tmp/creation-rounds.txt)
printf '%s\t%s\t%s\t%s\t%s\n' "$N" "$restarts" "$timeouts" "$gets" "$listed" >>"$out"
as journalctl --user -u sbd.service --no-pager -o cat | grep -v '"level":20' | tail -1000 >"$LAB_OUT/sbd-journal.txt"
for i in $(seq 0 $((N - 1))); do echo "burst-$i.scope"; done | xargs as-tester systemctl --user stop
