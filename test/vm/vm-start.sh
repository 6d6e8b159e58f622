#!/usr/bin/env bash
# Boot a long-lived guest in server mode; run commands in it with vm-exec.sh, stop it with vm-stop.sh.
#   ./vm-start.sh [-p projdir] [NAME]     background: returns when the guest is ready; qemu's pid is
#                                         in $SB_VM_CACHE/run/NAME/qemu.pid (NAME: default)
#   ./vm-start.sh -F -d RUNDIR [-p projdir]   foreground: this process BECOMES qemu (exec) with
#       pdeathsig SIGKILL, so it dies with its parent; the parent waits for RUNDIR/out/ready itself.
#       Used by suite.test.js.
# -d RUNDIR: use this run directory (the 9p share: console.log, q/, out/) instead of run/NAME.
# Env: see lib.sh; SB_VM_BOOT_TIMEOUT (360 s, background mode). The project share is mounted with
# 9p cache=none in background mode (host edits show at once), cache=loose with -F (faster).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
proj="" run="" fg=""
while getopts "p:d:F" o; do
  case $o in p) proj="$(cd "$OPTARG" && pwd)";; d) run=$OPTARG;; F) fg=1;; *) exit 2;; esac
done
shift $((OPTIND-1))
run="${run:-$CACHE/run/${1:-default}}"
sbvm_check_image
if [[ -f "$run/qemu.pid" ]] && kill -0 "$(cat "$run/qemu.pid")" 2>/dev/null; then
  echo "vm in $run already running (pid $(cat "$run/qemu.pid"))" >&2; exit 1
fi
rm -rf "$run"; mkdir -p "$run/out" "$run/q"
# shellcheck disable=SC2034   # read by sbvm_qemu_argv
[[ -n "$fg" ]] || PROJ_CACHE="${SB_VM_PROJ_CACHE:-none}"   # long-lived: see host edits at once
sbvm_qemu_argv "$run" "$proj" "lab.serve=1"
if [[ -n "$fg" ]]; then
  echo $$ >"$run/qemu.pid"
  exec setpriv --pdeathsig SIGKILL -- "${QEMU_ARGV[@]}" </dev/null
fi

t0=$(date +%s.%N)
setsid "${QEMU_ARGV[@]}" </dev/null >"$run/qemu.log" 2>&1 &   # outlives this script by design
pid=$!; echo "$pid" >"$run/qemu.pid"
trap 'echo "boot interrupted: killing qemu $pid" >&2; kill -9 "$pid" 2>/dev/null; rm -f "$run/qemu.pid"; exit 130' INT TERM HUP
fail() { echo "$1; last console lines:" >&2; tail -n 40 "$run/console.log" >&2; kill -9 "$pid" 2>/dev/null; rm -f "$run/qemu.pid"; exit 1; }
deadline=$((SECONDS + ${SB_VM_BOOT_TIMEOUT:-360}))
until [[ -s "$run/out/ready" ]]; do
  kill -0 "$pid" 2>/dev/null || fail "qemu exited during boot ($(cat "$run/qemu.log"))"
  ((SECONDS < deadline)) || fail "guest not ready after ${SB_VM_BOOT_TIMEOUT:-360} s"
  sleep 0.1
done
echo "vm ready: pid=$pid wall_s=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N)-$t0}") guest_uptime_s=$(cat "$run/out/ready") run=$run" >&2
