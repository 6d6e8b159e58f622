#!/usr/bin/env bash
# Run one bash command/script as root in a guest started by vm-start.sh; print its stdout/stderr,
# exit with its rc (124: time-out, 125: qemu gone).
#   ./vm-exec.sh [-n NAME | -d RUNDIR] [-t TIMEOUT_S] [-o OUTDIR] ('command' | -f script.sh)
# -t (default 600): the guest kills the command's process group after it; the host gives up 30 s later.
# -o OUTDIR: files the command wrote to $LAB_OUT are copied to OUTDIR.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
name=default run="" tmo=600 script="" outdir=""
while getopts "n:d:t:f:o:" o; do
  case $o in n) name=$OPTARG;; d) run=$OPTARG;; t) tmo=$OPTARG;; f) script=$OPTARG;; o) outdir=$OPTARG;; *) exit 2;; esac
done
shift $((OPTIND-1))
run="${run:-$CACHE/run/$name}"; q="$run/q"
[[ -d "$q" && -f "$run/qemu.pid" ]] || { echo "vm-exec: no vm running in $run" >&2; exit 2; }
id="$(date +%s%N)-$$"
trap 'rm -rf "$q/$id".*' EXIT
echo "$tmo" >"$q/$id.timeout"
if [[ -n "$script" ]]; then cp "$script" "$q/$id.tmp"; else printf '%s\n' "$*" >"$q/$id.tmp"; fi
mv "$q/$id.tmp" "$q/$id.cmd"                   # the guest picks up only complete .cmd files
deadline=$((SECONDS + tmo + 30))
until [[ -f "$q/$id.rc" ]]; do
  ((SECONDS < deadline)) || { echo "vm-exec: no answer ${tmo}+30 s after submitting" >&2; exit 124; }
  kill -0 "$(cat "$run/qemu.pid")" 2>/dev/null || { echo "vm-exec: qemu is gone" >&2; exit 125; }
  sleep 0.02
done
cat "$q/$id.stdout"; cat "$q/$id.stderr" >&2
if [[ -n "$outdir" && -d "$q/$id.files" ]]; then
  mkdir -p "$outdir" && find "$q/$id.files" -mindepth 1 -maxdepth 1 -exec cp -R --preserve=mode,timestamps {} "$outdir/" \;
fi
exit "$(cat "$q/$id.rc")"
