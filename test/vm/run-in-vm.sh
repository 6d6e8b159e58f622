#!/usr/bin/env bash
# Boot a fresh guest, run ONE bash script/command in it as root, print its stdout/stderr and exit
# with its exit code (124: time-out, 125: no result). The image is used with snapshot=on.
#   ./run-in-vm.sh 'cat /sys/fs/cgroup/cgroup.controllers'
#   ./run-in-vm.sh -p . 'cd /mnt/proj && as-tester node --test test/vm/guest/00-lab.test.js'
#   ./run-in-vm.sh -o results/ -f bench.sh     # files the script leaves in $LAB_OUT land in results/
# -t SECONDS: time-out of the command (default $SB_VM_TIMEOUT or 600), enforced in the guest and
# backed up on the host. Env: see lib.sh, SB_VM_VERBOSE=1 (print the serial console), SB_VM_KEEP_SHARE=1.
# qemu runs under setpriv --pdeathsig SIGKILL: it dies with this script, even on SIGKILL.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
usage() { echo "usage: $0 [-p projdir] [-o outdir] [-t timeout_s] (-f script | 'command')" >&2; exit 2; }
proj="" outdir="" script="" tmo="${SB_VM_TIMEOUT:-600}"
while getopts "p:o:t:f:" o; do
  case $o in p) proj="$(cd "$OPTARG" && pwd)";; o) outdir=$OPTARG;; t) tmo=$OPTARG;; f) script=$OPTARG;; *) usage;; esac
done
shift $((OPTIND-1))
[[ -n "$script" || $# -gt 0 ]] || usage
sbvm_check_image

share="$(mktemp -d "${TMPDIR:-/tmp}/sbvm-share.XXXXXX")"
chmod 755 "$share"                 # the guest sees host modes: tester must reach $LAB_OUT
qpid=""
cleanup() {
  [[ -n "$qpid" ]] && kill -9 "$qpid" 2>/dev/null
  if [[ -n "${SB_VM_KEEP_SHARE:-}" ]]; then echo "share kept: $share" >&2; else rm -rf "$share"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
if [[ -n "$script" ]]; then cp "$script" "$share/cmd"; else printf '%s\n' "$*" >"$share/cmd"; fi
echo "$tmo" >"$share/timeout"
mkdir -p "$share/out"

sbvm_qemu_argv "$share" "$proj" ""
t0=$(date +%s.%N)
setpriv --pdeathsig SIGKILL -- "${QEMU_ARGV[@]}" </dev/null >"$share/qemu.log" 2>&1 &
qpid=$!
deadline=$((SECONDS + tmo + ${SB_VM_BOOT_TIMEOUT:-360} + 30))   # boot + command + power-off
while kill -0 "$qpid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
if kill -0 "$qpid" 2>/dev/null; then echo "sbvm: host time-out, killing qemu" >&2; kill -9 "$qpid"; fi
qrc=0; wait "$qpid" || qrc=$?
qpid=""

[[ -n "${SB_VM_VERBOSE:-}" ]] && cat "$share/console.log" >&2
[[ -f "$share/out/stdout" ]] && cat "$share/out/stdout"
[[ -f "$share/out/stderr" ]] && cat "$share/out/stderr" >&2
if [[ -n "$outdir" && -d "$share/out/files" ]]; then
  mkdir -p "$outdir" && find "$share/out/files" -mindepth 1 -maxdepth 1 -exec cp -R --preserve=mode,timestamps {} "$outdir/" \;
fi
{ printf "sbvm: qemu_rc=%s wall_s=%s " "$qrc" "$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N)-$t0}")"
  [[ -f "$share/out/timing" ]] && tr '\n' ' ' <"$share/out/timing"; echo; } >&2
if [[ ! -f "$share/out/rc" ]]; then
  echo "sbvm: no result (qemu rc $qrc); last console lines:" >&2
  tail -n 40 "$share/console.log" >&2 || true; cat "$share/qemu.log" >&2
  exit 125
fi
exit "$(cat "$share/out/rc")"
