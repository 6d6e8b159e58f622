#!/bin/bash
# Detection and action in the guest (issue 7, item 2): $WEDGES wedges (bench/guest/wedge.js)
# each with sbd on the event feed, sbd forced into 5 s timer sampling, and systemd-oomd alone
# (Debian's defaults, watching sessions.slice with ManagedOOMMemoryPressure=kill). sbd may not
# raise (there is "no room") and stops the biggest command after a 10 s grace, so both act.
# Results: $LAB_OUT/detect.tsv (variant, name, onset, verdict, acted ms; alive, gone).
set -u
WEDGES=${WEDGES:-10}
cd /mnt/proj
. bench/guest/lib.sh
bench_start detect $'variant\tname\tonset_ms\tverdict_ms\tacted_ms\talive\tgone'
wedges() { # VARIANT TIMEOUT_S
  for i in $(seq 1 "$WEDGES"); do
    as node bench/guest/wedge.js "w-$1-$i" "$2" | sed "s/^/$1\t/" | tee -a "$out"
    sleep 2
  done
}
for variant in feed sampling-5s; do
  if [[ $variant == feed ]]; then cfg='{"raise": {"enabled": false}, "detector": {"graceS": 10}}'
  else cfg='{"raise": {"enabled": false}, "detector": {"graceS": 10, "windowS": 1, "fallbackIntervalS": 5}}'; fi
  sbd_config "$cfg"; sleep 5
  wedges "$variant" 60
done
oomd_on || { echo "detect.sh: systemd-oomd did not start" >&2; exit 1; }
as node bench/guest/make-sessions.js 1 && oomd_check || { echo "detect.sh: systemd-oomd does not watch sessions.slice" >&2; exit 1; }
wedges oomd 150
journalctl -b --no-pager -o cat -u systemd-oomd.service | grep Killed >"$LAB_OUT/oomd-kills.txt"
