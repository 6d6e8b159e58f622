#!/bin/bash
# How late PSI speaks when the machine runs out (issue 11): run as root in the guest with
# test/vm/run-in-vm.sh -f bench/guest/machine-psi.sh; results: bench/results/machine-psi-guest.txt.
cat /proc/sys/kernel/dmesg_restrict
grep -E 'MemTotal|MemAvailable' /proc/meminfo
as-tester python3 - <<'PY'
import os
for f in ['/proc/pressure/memory', '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/memory.pressure', '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/memory.pressure']:
  try:
    fd=os.open(f, os.O_RDWR|os.O_NONBLOCK); os.write(fd, b'some 150000 2000000\0'); print('trigger ok', f)
  except Exception as e: print('trigger fail', f, e)
PY
# greedy scope without brake, grows 16 MiB every 50 ms (bounded 4 GiB, 120 s)
cat > /tmp/hog.py <<'PY'
import time, sys
c=[]; t0=time.monotonic()
while len(c) < 256 and time.monotonic()-t0 < 120:
    c.append(b'\x01'*(16<<20)); time.sleep(0.05)
print('done', len(c)); time.sleep(60)
PY
as-tester systemd-run --user --scope --slice=sessions.slice --unit=quiet -p MemorySwapMax=0 python3 -c 'import time; k=[b"\x01"*(200<<20)]; time.sleep(200)' &
sleep 3
as-tester systemd-run --user --scope --slice=sessions.slice --unit=greedy -p MemorySwapMax=0 python3 /tmp/hog.py &
S=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice
for i in $(seq 1 240); do
  echo "$(cut -d' ' -f1 /proc/uptime) avail=$(awk '/MemAvailable/{print $2}' /proc/meminfo) psi=$(head -1 /proc/pressure/memory | cut -d' ' -f5) full=$(tail -1 /proc/pressure/memory | cut -d' ' -f5) slice=$(tail -1 $S/memory.pressure 2>/dev/null| cut -d' ' -f5) greedy=$(cat $S/greedy.scope/memory.current 2>/dev/null) ev=$(grep oom_kill $S/memory.events 2>/dev/null)"
  sleep 0.25
  [ -d $S/greedy.scope ] || { echo greedy gone; break; }
done
dmesg | grep -iE 'killed process|oom' | tail -5
