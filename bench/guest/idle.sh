#!/bin/bash
# Idle cost in the guest (issue 7, items 1 and 3; issue 15, items 3 and 4): for each N in $SIZES
# (ascending: the sessions grow from one size to the next), N idle sessions, and for $SECONDS_EACH
# s each: sbd on the event feed; up to $OTHERS_UPTO sessions also the same sbd forced into timer
# sampling every 5 s (a 1 s PSI window, which the kernel refuses to an unprivileged user) and
# (up to $OTHERS_UPTO) systemd-oomd alone (sbd stopped) watching the same slice with ManagedOOMMemoryPressure=kill.
# Counted: the process's main thread's voluntary and involuntary context switches (its wakeups)
# and its CPU time; for sbd also its RSS, its open files and inotify watches (and instances)
# against its soft RLIMIT_NOFILE and the user's inotify limits, how long its (re)start took
# (`systemctl --user restart` returns at READY=1) and how long until it logged every session
# adopted, and the wall time of `sbctl status --json`. With $BASE (a directory of /mnt/proj
# holding another build's dist/ and build/, e.g. main's), that sbd too, as the baseline of the
# same run: its start at every size, and its idle cost up to $VARIANTS_UPTO sessions.
# FEED_VARIANTS adds configs of the same sbd (below). Results: $LAB_OUT/idle.tsv.
set -u
SIZES=${SIZES:-10 100 500}
SECONDS_EACH=${SECONDS_EACH:-60}
VARIANTS_UPTO=${VARIANTS_UPTO:-500}
# the 5 s sampling and systemd-oomd variants: up to this size (issue 7's comparison; the baseline
# sbd of $BASE is measured up to $VARIANTS_UPTO)
OTHERS_UPTO=${OTHERS_UPTO:-$VARIANTS_UPTO}
# Idle is the steady state: V8 runs its memory reducer (three full GCs) about 85 s after node
# starts (seen with --trace-gc under TCG), so each count starts this long after the restart.
SETTLE_S=${SETTLE_S:-100}
cd /mnt/proj
. bench/guest/lib.sh
bench_start idle $'sessions\tvariant\tseconds\tvoluntary_ctxt\tinvoluntary_ctxt\tcpu_s\trss_kib\tstatus_ms\tstart_ms\tadopted_ms\tstop_ms\tfds\tnofile_soft\tinotify_watches\tinotify_instances\tmax_user_watches\tmax_user_instances'
# oomd runs throughout (its own process; it is what a machine with oomd has anyway).
oomd_on || { echo "idle.sh: systemd-oomd did not start" >&2; exit 1; }
ctxt() { awk '/^voluntary_ctxt/{v=$2} /^nonvoluntary_ctxt/{i=$2} END{print v, i}' "/proc/$1/status"; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# PID -> "fds nofile_soft inotify_watches inotify_instances"
fds_of() {
  local fds watches=0 inst=0 fd w
  fds=$(ls "/proc/$1/fd" | wc -l)
  for fd in /proc/$1/fd/*; do
    [[ $(readlink "$fd") == anon_inode:inotify ]] || continue
    inst=$((inst+1)); w=$(grep -c '^inotify wd:' "/proc/$1/fdinfo/${fd##*/}"); watches=$((watches+w))
  done
  echo "$fds $(awk '/^Max open files/{print $4}' "/proc/$1/limits") $watches $inst"
}
measure() { # N VARIANT PID START_MS ADOPTED_MS STOP_MS
  local pid=$3 v0 i0 v1 i1 c0 c1 rss status=- t0 t1 res=(- - - -)
  sleep "$SETTLE_S"
  read -r v0 i0 < <(ctxt "$pid"); c0=$(ticks "$pid")
  sleep "$SECONDS_EACH"
  read -r v1 i1 < <(ctxt "$pid"); c1=$(ticks "$pid")
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")
  if [[ $2 != oomd ]]; then read -r -a res < <(fds_of "$pid"); fi
  if [[ $2 == feed ]]; then   # status includes node's start-up: timed alone as its baseline
    t0=$(date +%s%N); as node dist/cli/main.js status --json >/dev/null; t1=$(date +%s%N); status=$(((t1-t0)/1000000))
    t0=$(date +%s%N); as node -e 0; t1=$(date +%s%N); status="$status/$(((t1-t0)/1000000))"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$SECONDS_EACH" $((v1-v0)) $((i1-i0)) "$(awk "BEGIN{print ($c1-$c0)/100}")" "$rss" "$status" "$4" "$5" "${6:--}" \
    "${res[0]}" "${res[1]}" "${res[2]}" "${res[3]}" "$(cat /proc/sys/fs/inotify/max_user_watches)" "$(cat /proc/sys/fs/inotify/max_user_instances)" | tee -a "$out"
}
# sbd_with CONFIG -> the running sbd stopped (stop_ms: closing a PSI trigger waits for an RCU
# grace period, so a stop grows with the sessions), then sbd started with CONFIG: start_ms is
# `systemctl --user start`'s wall time (it returns at READY=1), adopted_ms the time from the start
# to sbd's "adopted N sessions" line (waited for up to 600 s, unless a 2nd argument says not to: the
# baseline has no such line); a start that failed is "failed-after-MS"
sbd_with() {
  local t0 t1 pid ts
  t0=$(date +%s%N); as systemctl --user stop sbd.service; t1=$(date +%s%N); stop_ms=$(((t1-t0)/1000000))
  as systemctl --user reset-failed sbd.service 2>/dev/null
  echo "$1" | as tee "$cfgdir/config.json" >/dev/null
  t0=$(date +%s%N)
  if ! as systemctl --user start sbd.service; then t1=$(date +%s%N); start_ms="failed-after-$(((t1-t0)/1000000))"; adopted_ms=-; return 1; fi
  t1=$(date +%s%N); start_ms=$(((t1-t0)/1000000)); adopted_ms=-
  [[ -n ${2:-} ]] && return 0
  pid=$(as systemctl --user show -P MainPID sbd.service)
  for _ in $(seq 1 1200); do
    ts=$(journalctl -b "_PID=$pid" -o json --output-fields=MESSAGE --no-pager 2>/dev/null | grep -m1 'adopted [0-9]* session' | grep -o '"__REALTIME_TIMESTAMP":"[0-9]*"' | grep -o '[0-9]*')
    [[ -n $ts ]] && { adopted_ms=$(((ts*1000-t0)/1000000)); break; }
    sleep 0.5
  done
}
BASE=${BASE:-}
dropin=/home/tester/.config/systemd/user/sbd.service.d
base_on() {
  as mkdir -p "$dropin"
  printf '[Service]\nExecStart=\nExecStart=%s /mnt/proj/%s/dist/daemon/main.js\n' "$(as sh -c 'command -v node')" "$BASE" | as tee "$dropin/90-base.conf" >/dev/null
  as systemctl --user daemon-reload
}
base_off() { as rm -f "$dropin/90-base.conf"; as systemctl --user daemon-reload; }
checked=
made=0
for n in $SIZES; do
  t0=$(date +%s); as node bench/guest/make-sessions.js "$n" "$made" || exit 1; echo "made $((n-made)) more sessions ($n) in $(( $(date +%s) - t0 )) s"; made=$n
  if [[ -z $checked ]]; then oomd_check || { echo "idle.sh: systemd-oomd does not watch sessions.slice" >&2; exit 1; }; checked=1; fi
  if [[ -n $BASE ]]; then
    base_on
    # the baseline adopts before READY=1: its start is its adoption
    sbd_with '{}' no-adopted-line
    if ((n <= VARIANTS_UPTO)) && [[ $start_ms != failed* ]]; then measure "$n" base-feed "$(as systemctl --user show -P MainPID sbd.service)" "$start_ms" "$start_ms" "$stop_ms"
    else printf '%s\tbase-start\t-\t-\t-\t-\t-\t-\t%s\t-\t%s\t-\t-\t-\t-\t-\t-\n' "$n" "$start_ms" "$stop_ms" | tee -a "$out"; fi
    base_off
  fi
  if sbd_with '{}'; then measure "$n" feed "$(as systemctl --user show -P MainPID sbd.service)" "$start_ms" "$adopted_ms" "$stop_ms"
  else printf '%s\tfeed\t-\t-\t-\t-\t-\t-\t%s\t-\t%s\t-\t-\t-\t-\t-\t-\n' "$n" "$start_ms" "$stop_ms" | tee -a "$out"; continue; fi
  # its stop, timed on its own
  t0=$(date +%s%N); as systemctl --user stop sbd.service; t1=$(date +%s%N)
  printf '%s\tfeed-stop\t-\t-\t-\t-\t-\t-\t-\t-\t%s\t-\t-\t-\t-\t-\t-\n' "$n" $(((t1-t0)/1000000)) | tee -a "$out"
  # FEED_VARIANTS ("NAME=CONFIG;…"): the same sbd with another config each, measured as feed-NAME,
  # to tell which part of sbd the idle cost comes from (e.g. nofreeze={"freeze":{"checkS":86400}})
  IFS=';' read -r -a extra <<<"${FEED_VARIANTS:-}"
  for e in "${extra[@]}"; do
    if sbd_with "${e#*=}"; then measure "$n" "feed-${e%%=*}" "$(as systemctl --user show -P MainPID sbd.service)" "$start_ms" "$adopted_ms" "$stop_ms"; fi
    as systemctl --user stop sbd.service
  done
  if ((n <= OTHERS_UPTO)); then
    sbd_with '{"detector": {"windowS": 1, "fallbackIntervalS": 5}}'; measure "$n" sampling-5s "$(as systemctl --user show -P MainPID sbd.service)" "$start_ms" "$adopted_ms" "$stop_ms"
    as systemctl --user stop sbd.service; measure "$n" oomd "$(systemctl show -P MainPID systemd-oomd.service)" - -
  fi
done
