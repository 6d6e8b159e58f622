#!/bin/bash
# Which hardening can sbd's user unit take? Run as root in a lab guest (issue 12, fault 8):
#   test/vm/run-in-vm.sh -p . -t 1800 -o bench/unit-hardening/results -f bench/unit-hardening/probe.sh
# 1. The unit as it was (sbd-before.service): systemd-analyze --user security, and a bad config.
# 2. Guest test 46 against that unit (a copy of the project whose units/ holds it): it must fail.
# 3. units/sbd.service as it is: the score, a bad config, and each further candidate as a drop-in:
#    does sbd start, answer sbctl status and watch a braked session with a PSI trigger (feed psi)?
set -uo pipefail
cd /mnt/proj
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
T() { as-tester "$@"; }
H=/home/tester
UNITS=$H/.config/systemd/user
DROP=$UNITS/sbd.service.d
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/probe.log"; }
T mkdir -p $H/.config/sessionbrake "$DROP"
echo '{}' | T tee $H/.config/sessionbrake/config.json >/dev/null
state() { T systemctl --user show sbd.service -p ActiveState -p Result -p NRestarts -p ExecMainStatus -p MainPID | tr '\n' ' '; }
bad() {
  echo '{"detector":{"graceS":"x"}}' | T tee $H/.config/sessionbrake/config.json >/dev/null
  T systemctl --user reset-failed sbd.service 2>/dev/null
  T timeout 150 systemctl --user restart sbd.service 2>/dev/null
  sleep 20
  log "bad config ($1): $(state)"
  echo '{}' | T tee $H/.config/sessionbrake/config.json >/dev/null
}

# 1. before
sed -e "s|@NODE@|$(command -v node)|g" -e "s|@ROOT@|/mnt/proj|g" bench/unit-hardening/sbd-before.service | T tee $UNITS/sbd.service >/dev/null
T systemctl --user daemon-reload
T timeout 150 systemctl --user restart sbd.service
T systemd-analyze --user security sbd.service --no-pager >"$OUT/security-before.txt" 2>&1
log "unit as it was: $(grep -i 'overall exposure' "$OUT/security-before.txt") $(state)"
bad "unit as it was"

# 2. guest test 46 against the unit as it was
PB=/var/tmp/proj-before; mkdir -p $PB/units
for e in /mnt/proj/*; do b=$(basename "$e"); case $b in units|dist|test) ;; *) ln -s "$e" "$PB/$b";; esac; done
cp -r /mnt/proj/dist /mnt/proj/test $PB/; cp /mnt/proj/units/sessions.slice $PB/units/
cp bench/unit-hardening/sbd-before.service $PB/units/sbd.service; chown -R tester $PB
T systemctl --user stop sbd.service
(cd $PB && T env SB_LAB_GUEST=bookworm timeout 400 node --test test/vm/guest/46-unit.test.js >"$OUT/46-before.txt" 2>&1); log "46-unit.test.js on the unit as it was: rc=$?"
grep -E '^(not )?ok|^# (pass|fail)|^\s+(error|actual|expected):' "$OUT/46-before.txt" | head -20 | tee -a "$OUT/probe.log"
T systemctl --user stop 'hard1.scope' 2>/dev/null

# 3. units/ as it is
T node dist/cli/main.js install >/dev/null
T systemctl --user cat sbd.service >"$OUT/unit-after.txt"
T sh -c 'nohup node /mnt/proj/dist/cli/main.js run --name probe --memory-high 64M --swap-max 0 -- sleep 3000 >/dev/null 2>&1 &'
sleep 5
check() { # $1 name; rest: drop-in lines
  local name=$1; shift
  printf '[Service]\n' | T tee "$DROP/probe.conf" >/dev/null
  for l in "$@"; do printf '%s\n' "$l" | T tee -a "$DROP/probe.conf" >/dev/null; done
  T systemctl --user daemon-reload
  T systemctl --user reset-failed sbd.service 2>/dev/null
  local t0; t0=$(date +%s)
  T timeout 150 systemctl --user restart sbd.service; local rc=$?
  local st; st=$(state)
  local feed="-"
  if [[ $rc == 0 ]]; then
    feed=$(T timeout 90 node dist/cli/main.js status --json 2>&1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const r=JSON.parse(s);const p=r.sessions.find(x=>x.name==="probe");console.log(`feed=${r.service.feed} probe=${p?p.state:"missing"}`)}catch(e){console.log("status-error "+s.slice(0,200).replace(/\n/g," "))}})')
  fi
  local pid; pid=$(T systemctl --user show sbd.service -p MainPID --value)
  local ps="-"; [[ $pid != 0 ]] && ps="$(grep -E '^(NoNewPrivs|Seccomp):' /proc/$pid/status 2>/dev/null | tr '\n\t' '  ') mntns=$([[ $(readlink /proc/$pid/ns/mnt) == $(readlink /proc/self/ns/mnt) ]] && echo shared || echo own) userns=$([[ $(readlink /proc/$pid/ns/user) == $(readlink /proc/self/ns/user) ]] && echo shared || echo own)"
  local warn; warn=$(journalctl --since=@$t0 _SYSTEMD_USER_UNIT=sbd.service -o cat 2>/dev/null | grep -vE '"level":(20|30)' | head -3 | cut -c1-300 | tr '\n' ' ')
  log "$name: restart rc=$rc $st $feed $ps ${warn:+journal: $warn}"
}
check "units/sbd.service"
T systemd-analyze --user security sbd.service --no-pager >"$OUT/security-after.txt" 2>&1
log "units/sbd.service: $(grep -i 'overall exposure' "$OUT/security-after.txt")"
bad "units/sbd.service"
check syscall-filter 'SystemCallFilter=@system-service' 'SystemCallErrorNumber=EPERM'
check mdwe 'MemoryDenyWriteExecute=yes'
check protect-clock 'ProtectClock=yes'
check protect-system 'ProtectSystem=strict' 'ReadWritePaths=-%h/.local/state -%t'
check private-users 'PrivateUsers=yes'
check private-users+protect-system 'PrivateUsers=yes' 'ProtectSystem=strict' 'ReadWritePaths=-%h/.local/state -%t'
check protect-cgroups 'ProtectControlGroups=yes'
T rm -f "$DROP/probe.conf"; T systemctl --user daemon-reload
T systemctl --user stop probe.scope sbd.service 2>/dev/null
(cd /mnt/proj && T env SB_LAB_GUEST=bookworm timeout 400 node --test test/vm/guest/46-unit.test.js >"$OUT/46-after.txt" 2>&1); log "46-unit.test.js on units/sbd.service: rc=$?"
grep -E '^(not )?ok|^# (pass|fail)|systemd-analyze' "$OUT/46-after.txt" | tee -a "$OUT/probe.log"
# guest test 44 too (sbctl only), while the guest is up
(cd /mnt/proj && T env SB_LAB_GUEST=bookworm timeout 400 node --test test/vm/guest/44-reap-guard.test.js >"$OUT/44.txt" 2>&1); log "44-reap-guard.test.js rc=$?"
grep -E '^(not )?ok|^# (pass|fail)' "$OUT/44.txt" | tee -a "$OUT/probe.log"
log done
