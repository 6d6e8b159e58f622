#!/bin/bash
# The sessionbrake demo, run as root in the lab guest by scripts/demo.js; everything that matters
# runs as the unprivileged user tester, as it would on a real server.
set -u
cd /mnt/proj
SBCTL="node /mnt/proj/dist/cli/main.js"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
as() { as-tester "$@"; }

say "The machine: Debian 12, systemd $(systemctl --version | head -1 | cut -d' ' -f2), kernel $(uname -r), cgroup v2, PSI; user tester with its own user manager"
say "sbctl doctor: does this machine give sbd what it needs?"
as $SBCTL doctor

say "sbctl install --now: sbd becomes a user unit (Type=notify, watchdog, restarted on failure)"
as $SBCTL install --now
as systemctl --user --no-pager status sbd.service | head -6

say "Two sessions: a quiet one, and a build that wants 400 MiB under a 64 MiB brake with no swap"
as $SBCTL run --name quiet --memory-high 256M -- sleep 300 &
as $SBCTL run --name build --memory-high 64M --memory-max 1G --swap-max 0 -- \
  python3 -c 'import time
chunks = []
for i in range(400):
    chunks.append(b"x" * (1 << 20))
print("build done", flush=True)
time.sleep(300)' &
sleep 8

say "sbctl status: the build stands still against its own brake (full pressure, anon memory, its biggest command)"
as $SBCTL status
say "...and 10 s later: the kernel has not killed it, it just does not move (no OOM, no output)"
sleep 10
as $SBCTL status

say "sbctl status --json: the same for tools"
as $SBCTL status build --json | head -30

say "sbd's journal: what it saw"
journalctl --user-unit sbd.service -M tester@ --no-pager -o cat 2>/dev/null | tail -5 || \
  as journalctl --user -u sbd.service --no-pager -o cat | tail -5

say "Stopping sbd: sbctl status still shows the sessions, straight from systemd, and exits 3"
as systemctl --user stop sbd.service
as $SBCTL status; echo "(exit code $?)"
as systemctl --user stop build.scope quiet.scope 2>/dev/null
say "Done. Later versions raise the build's brake or stop its biggest command by themselves."
