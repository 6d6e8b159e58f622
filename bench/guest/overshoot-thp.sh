#!/bin/bash
# How far a held hog overshoots memory.high after the raises sbd makes in guest test 50, with
# transparent huge pages on ("always", as both guest kernels ship) and off, in one run: the
# measurement behind raise.maxMargin at MemoryMax. Run as root in the guest (it sets THP):
#   test/vm/vm-exec.sh -n NAME -t 900 'bash /mnt/proj/bench/guest/overshoot-thp.sh'
# For each THP mode, REPS times: stress-ng --vm 1 --vm-bytes 1500M --vm-keep in tester's scope
# with MemoryHigh=64M, MemorySwapMax=0 and no MemoryMax (an overshoot is measured, not killed);
# each time the hog is held at its brake (memory.current within 8 MiB of memory.high, or 30 s),
# the brake goes up as sbd's raises did in test 50 (320M, 576M, then 640M = 768M minus the 128M
# margin); then HOLD_S seconds held at 640M. Printed per run: memory.peak minus the last brake,
# the high events, and memory.stat's anon_thp and thp_fault_alloc.
set -u
SL=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice
THP=/sys/kernel/mm/transparent_hugepage/enabled
MiB=$((1024 * 1024))
orig=$(sed -E 's/.*\[([a-z]+)\].*/\1/' "$THP")
trap 'echo "$orig" >"$THP"' EXIT
stat_of() { awk -v k="$2" '$1==k{print $2}' "$1/memory.stat"; }
held() { # dir -> waits until memory.current is within 8 MiB of memory.high (30 s at most)
  local h c
  for _ in $(seq 1 300); do
    h=$(cat "$1/memory.high"); c=$(cat "$1/memory.current" 2>/dev/null || echo 0)
    [ $((c + 8 * MiB)) -ge "$h" ] && return 0
    sleep 0.1
  done
  return 1
}
echo "# overshoot-thp: kernel $(uname -r), $(nproc) CPU, MemTotal $(awk '/MemTotal/{print $2}' /proc/meminfo) KiB, $(date -u +%FT%TZ)"
printf 'thp\trep\tpeak_over_last_brake_MiB\thigh_events\tanon_thp_MiB\tthp_fault_alloc\treached\n'
for mode in ${MODES:-always never}; do
  echo "$mode" >"$THP"
  for rep in $(seq 1 "${REPS:-2}"); do
    u=overshoot-thp-$mode-$rep; d=$SL/$u.scope
    as-tester systemd-run --user --quiet --scope --unit=$u --slice=sessions.slice -p MemoryHigh=64M -p MemorySwapMax=0 \
      stress-ng --temp-path /tmp --vm 1 --vm-bytes 1500M --vm-keep --timeout 300s >/dev/null 2>&1 &
    for _ in $(seq 1 100); do [ -d "$d" ] && break; sleep 0.1; done
    reached=""
    for B in 320 576 640; do
      held "$d" && reached="$reached+" || reached="$reached-"
      as-tester systemctl --user set-property --runtime $u.scope MemoryHigh=${B}M
    done
    held "$d" && reached="$reached+" || reached="$reached-"
    sleep "${HOLD_S:-20}"
    peak=$(cat "$d/memory.peak"); high=$(cat "$d/memory.high")
    events=$(awk '$1=="high"{print $2}' "$d/memory.events.local")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$rep" "$(awk -v p="$peak" -v h="$high" 'BEGIN{printf "%.1f", (p-h)/1048576}')" \
      "$events" "$(( $(stat_of "$d" anon_thp) / MiB ))" "$(stat_of "$d" thp_fault_alloc)" "$reached"
    as-tester systemctl --user stop $u.scope
    sleep 1
  done
done
