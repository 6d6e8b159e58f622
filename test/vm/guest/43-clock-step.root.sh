#!/bin/bash
# Root's part of 43-clock-step: tester may not set the clock, so a small root helper sets it on
# request, and does nothing else. Tester writes one line to the fifo /tmp/sb-clock/req:
#   +N or -N   step the wall clock by N seconds (N at most 3600), with `date -s`, which keeps the
#              sub-second part (the step is relative to the clock's own reading)
#   restore    step it back by the net sum of the steps so far, and end
# After 10 minutes without a request (a test that died) it restores and ends by itself.
# systemd-timesyncd (not in the lab's image; a guest may still have it) is stopped while the
# helper runs: it would step the clock back under the test. It is started again at the end.
# The log (/tmp/sb-clock/log) says each step and the net offset.
set -euo pipefail
dir=/tmp/sb-clock
# Long enough for the whole file under load (it takes ~3 min); a test that died is noticed here.
IDLE_S=600
MAX_STEP_S=3600

serve() {
  local net=0 req n timesyncd=no
  if systemctl is-active --quiet systemd-timesyncd.service 2>/dev/null; then
    systemctl stop systemd-timesyncd.service
    timesyncd=yes
  fi
  exec 3<>"$dir/req"   # read-write: never blocks, and a writer's open never waits for a reader
  while :; do
    if ! read -r -t "$IDLE_S" req <&3; then
      echo "no request for $IDLE_S s: restoring"
      req=restore
    fi
    case $req in
      [+-][0-9]*)
        n=${req:1}
        if [[ ! $n =~ ^[0-9]+$ ]] || ((n > MAX_STEP_S)); then
          echo "refused: $req"
          continue
        fi
        date -s "${req:0:1}$n seconds" >/dev/null
        net=$((net ${req:0:1} n))
        echo "stepped ${req:0:1}$n s: net $net s, now $(date -u +%T.%N)"
        ;;
      restore)
        if ((net != 0)); then date -s "$((-net)) seconds" >/dev/null; fi
        echo "restored: stepped $((-net)) s, now $(date -u +%T.%N)"
        if [[ $timesyncd == yes ]]; then systemctl start systemd-timesyncd.service; fi
        rm -f "$dir/pid"
        return 0
        ;;
      *) echo "refused: $req" ;;
    esac
  done
}

if [[ ${1:-} == serve ]]; then
  serve
  exit 0
fi
# one helper per guest: a second start finds it running
if [[ -s $dir/pid ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then exit 0; fi
rm -rf "$dir"
mkdir -m 755 "$dir"
mkfifo -m 622 "$dir/req"
setsid bash "$0" serve </dev/null >"$dir/log" 2>&1 &
echo $! >"$dir/pid"
chmod 644 "$dir/log" "$dir/pid"
