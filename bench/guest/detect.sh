#!/bin/bash
# Detection and action in the guest (issue 7, item 2): $WEDGES wedges (bench/guest/wedge.js)
# each with sbd on the event feed (0.5 s onset windows; and, as the first design had it, 2 s
# windows from the wake), sbd forced into 5 s timer sampling, and systemd-oomd alone
# (Debian's defaults, watching sessions.slice with ManagedOOMMemoryPressure=kill). sbd may not
# raise (there is "no room") and stops the biggest command after a 10 s grace, so both act.
# Then earlyoom and nohang alone (Debian's packages and defaults), $OTHERS_WEDGES (3) wedges each:
# they judge the machine's free memory, not a session's brake, so the question is whether they
# act at all within $OTHERS_TIMEOUT_S (120 s). VARIANTS picks which run (default: all five).
# SBD_LOG_LEVEL=debug runs sbd at that level and keeps its journal of each variant in
# $LAB_OUT/sbd-VARIANT.log (every window: bench/detect-timeline.js reads it).
# Results: $LAB_OUT/detect.tsv (variant, name, onset, verdict, acted ms; alive, gone; the
# stall's onset as the kernel counted it, ms).
set -u
WEDGES=${WEDGES:-10}
OTHERS_WEDGES=${OTHERS_WEDGES:-3}
OTHERS_TIMEOUT_S=${OTHERS_TIMEOUT_S:-120}
VARIANTS=" ${VARIANTS:-feed feed-2s sampling-5s oomd earlyoom nohang} "
cd /mnt/proj
. bench/guest/lib.sh
bench_start detect $'variant\tname\tonset_ms\tverdict_ms\tacted_ms\talive\tgone\tstall_ms'
wedges() { # VARIANT TIMEOUT_S [COUNT]
  for i in $(seq 1 "${3:-$WEDGES}"); do
    as node bench/guest/wedge.js "w-$1-$i" "$2" | sed "s/^/$1\t/" | tee -a "$out"
    sleep 2
  done
}
for variant in feed feed-2s sampling-5s; do
  [[ $VARIANTS == *" $variant "* ]] || continue
  case $variant in
    feed) cfg='{"raise": {"enabled": false}, "detector": {"graceS": 10}}';;
    # the first design on the same feed (issue 7's figures): 2 s windows from the wake, two hot
    feed-2s) cfg='{"raise": {"enabled": false}, "detector": {"graceS": 10, "onsetWindowS": 2, "onsetHotWindows": 2}}';;
    *) cfg='{"raise": {"enabled": false}, "detector": {"graceS": 10, "windowS": 1, "fallbackIntervalS": 5}}';;
  esac
  [[ -n ${SBD_LOG_LEVEL:-} ]] && cfg="${cfg%\}}, \"logLevel\": \"$SBD_LOG_LEVEL\"}"
  since=$(date '+%Y-%m-%d %H:%M:%S')
  sbd_config "$cfg"; sleep 5
  wedges "$variant" 60
  [[ -n ${SBD_LOG_LEVEL:-} ]] && as journalctl --user -u sbd.service -o cat --no-pager --since "$since" >"$LAB_OUT/sbd-$variant.log"
done
if [[ $VARIANTS == *" oomd "* ]]; then
  oomd_on || { echo "detect.sh: systemd-oomd did not start" >&2; exit 1; }
  as node bench/guest/make-sessions.js 1 && oomd_check || { echo "detect.sh: systemd-oomd does not watch sessions.slice" >&2; exit 1; }
  wedges oomd 150
  journalctl -b --no-pager -o cat -u systemd-oomd.service | grep Killed >"$LAB_OUT/oomd-kills.txt"
  systemctl stop systemd-oomd.service systemd-oomd.socket
fi
as-tester systemctl --user stop sbd.service
for daemon in earlyoom nohang; do
  [[ $VARIANTS == *" $daemon "* ]] || continue
  rm -f "/etc/systemd/system/$daemon.service" && systemctl daemon-reload && systemctl start "$daemon.service" && sleep 2 &&
    systemctl is-active --quiet "$daemon.service" || { echo "detect.sh: $daemon did not start" >&2; systemctl status --no-pager "$daemon" >&2; exit 1; }
  echo "$daemon $(dpkg-query -W -f '${Version}' "$daemon"), Debian's defaults: $(systemctl show -P ExecStart "$daemon.service" | grep -o 'argv\[\][^;]*')" | tee -a "$LAB_OUT/others.txt"
  wedges "$daemon" "$OTHERS_TIMEOUT_S" "$OTHERS_WEDGES"
  journalctl -b --no-pager -o cat -u "$daemon.service" | tail -20 >"$LAB_OUT/$daemon-log.txt"
  systemctl stop "$daemon.service"
done
