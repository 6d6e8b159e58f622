#!/usr/bin/env bash
# Power off a guest started by vm-start.sh:   ./vm-stop.sh [NAME | -d RUNDIR]
# Asks the guest to power off (q/stop), kills qemu after 15 s. The run dir (console.log) stays.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
run=""
[[ "${1:-}" == -d ]] && { run=$2; shift 2; }
run="${run:-$CACHE/run/${1:-default}}"
[[ -f "$run/qemu.pid" ]] || { echo "not running ($run)" >&2; exit 0; }
pid=$(cat "$run/qemu.pid")
touch "$run/q/stop"
for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { echo "forcing qemu $pid down" >&2; kill -9 "$pid"; }
rm -f "$run/qemu.pid"
