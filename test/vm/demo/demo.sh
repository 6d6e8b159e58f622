#!/bin/bash
# The sessionbrake demo, run as root in the lab guest by scripts/demo.js; everything that matters
# runs as the unprivileged user tester, as it would on a real server. It narrates what sbd really
# does, and each step waits for it to happen (bounded) rather than for a fixed time.
set -u
cd /mnt/proj
# sbctl and sbd by name, as `npm start` links them on a real machine (here the checkout is the
# read-only 9p share, so small wrappers stand in for the links)
for n in sbctl:cli sbd:daemon; do
  printf '#!/bin/sh\nexec node /mnt/proj/dist/%s/main.js "$@"\n' "${n#*:}" >"/usr/local/bin/${n%%:*}"
  chmod 755 "/usr/local/bin/${n%%:*}"
done
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
as() { as-tester "$@"; }
# wait up to $1 seconds for the command to succeed
within() { local n=$1; shift; for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done; return 1; }

say "The machine: Debian 12, systemd $(systemctl --version | head -1 | cut -d' ' -f2), kernel $(uname -r), cgroup v2, PSI, $(free -m | awk '/^Mem/ {print $2}') MiB of RAM; user tester with its own user manager"
say "sbctl doctor: does this machine give sbd what it needs?"
as sbctl doctor

say "sbctl install --now: sbd becomes a user unit (Type=notify, watchdog, restarted on failure)"
as sbctl install --now
as systemctl --user --no-pager status sbd.service | head -4

say "sbctl watch, in the background: every incident as it happens"
as sbctl watch | sed -u 's/^/   watch| /' &
WATCH=$!
sleep 3

say "Two sessions: a quiet one, and a build that wants 400 MiB under a 64 MiB brake with no swap"
echo "(above its brake the kernel does not kill a session: it makes it sleep in reclaim, and without swap the build would stand still for hours, printing nothing)"
as sbctl run --name quiet --memory-high 256M -- sleep 300 &
as sbctl run --name build --memory-high 64M --memory-max 1G --swap-max 0 -- \
  python3 -c 'import time
chunks = []
for i in range(400):
    chunks.append(b"x" * (1 << 20))
print("   build| done: 400 MiB allocated", flush=True)
open("/tmp/sb-demo-build-done", "w").close()
time.sleep(300)' &
within 60 sh -c "as-tester sbctl status --json | grep -q '\"name\": \"build\"'"

say "sbctl status: both sessions, the build at its brake, and what sbd last did about it"
as sbctl status
say "Each time the build stands still against its own brake, sbd raises the brake by a step while the machine has room; the build goes on"
within 120 sh -c "as-tester sbctl status --json | grep -q 'brake-raised'" || echo "(no raise within 120 s)"
within 240 test -e /tmp/sb-demo-build-done || echo "(the build did not finish within 240 s)"
sleep 2
as sbctl status build

say "sbctl status --json: the same for tools"
as sbctl status build --json | head -24

say "sbd's journal: each incident is a structured entry with a fixed MESSAGE_ID (journalctl --user as tester)"
as journalctl --user -t sbd --no-pager -o cat | tail -4
echo "-- the last brake raise, with its fields (journalctl --user MESSAGE_ID=2500977d10d841ddb3ab9d852af4c967 -o verbose):"
as journalctl --user MESSAGE_ID=2500977d10d841ddb3ab9d852af4c967 -n 1 --no-pager -o verbose | grep -E '^ +[A-Z_]+=' | grep -v '^ *_' | head -12

say "Stopping sbd: sbctl status still shows the sessions, straight from systemd, and exits 3"
kill "$WATCH" 2>/dev/null
as systemctl --user stop sbd.service
as sbctl status; echo "(exit code $?)"
as systemctl --user stop build.scope quiet.scope 2>/dev/null
say "Done: the build finished under a brake sbd raised for it; nothing was killed. With no room left, sbd would instead stop the build's biggest command after the grace, never the agent."
