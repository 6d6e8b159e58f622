#!/bin/bash
# How far a fast hog's memory overshoots memory.high before the kernel's throttling holds it
# (the measurement behind config raise.maxMargin). Run as tester in the guest:
#   test/vm/vm-exec.sh -n NAME -t 600 'as-tester bash /mnt/proj/bench/guest/overshoot.sh'
# For each brake B, twice: stress-ng --vm 1 --vm-bytes 1500M --vm-keep in a scope with
# MemoryHigh=B, MemorySwapMax=0 and no MemoryMax; memory.current sampled every 50 ms for 15 s,
# then memory.peak (the kernel's own maximum, between our samples too). Then, while the hog is
# held, the brake is raised by 256M (what sbd does) and the peak over the new brake measured.
set -u
SL=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice
kib() { echo $(( $1 / 1024 )); }
sample() { # dir seconds -> max memory.current seen
  local max=0 c end=$(( $(date +%s) + $2 ))
  while [ "$(date +%s)" -lt $end ]; do
    c=$(cat "$1/memory.current" 2>/dev/null || echo 0); [ "$c" -gt $max ] && max=$c; sleep 0.05
  done
  echo $max
}
for B in ${BRAKES:-64 256 512}; do
  for rep in 1 2; do
    u=overshoot-$B-$rep; d=$SL/$u.scope
    systemd-run --user --quiet --scope --unit=$u --slice=sessions.slice -p MemoryHigh=${B}M -p MemorySwapMax=0 \
      stress-ng --temp-path /tmp --vm 1 --vm-bytes 1500M --vm-keep --timeout 120s >/dev/null 2>&1 &
    for _ in $(seq 1 100); do [ -d "$d" ] && break; sleep 0.1; done
    max=$(sample "$d" 15)
    peak=$(cat "$d/memory.peak"); high=$(cat "$d/memory.high")
    echo "brake ${B}M rep $rep: peak-high $(kib $((peak - high))) KiB, sampled max-high $(kib $((max - high))) KiB, high events $(awk '$1=="high"{print $2}' "$d/memory.events.local")"
    NB=$((B + 256))
    systemctl --user set-property --runtime $u.scope MemoryHigh=${NB}M
    max=$(sample "$d" 15)
    peak=$(cat "$d/memory.peak"); high=$(cat "$d/memory.high")
    echo "  raised to ${NB}M: peak-high $(kib $((peak - high))) KiB, sampled max-high $(kib $((max - high))) KiB"
    systemctl --user set-property --runtime $u.scope MemoryHigh=infinity
    systemctl --user stop $u.scope
    sleep 1
  done
done
