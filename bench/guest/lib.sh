#!/bin/bash
# Sourced by the guest benchmarks, which run as root in /mnt/proj.

as() { as-tester "$@"; }
cfgdir=/home/tester/.config/sessionbrake

# bench_start NAME HEADER: sbd installed for tester (not yet configured), an empty config
# directory, and $out=$LAB_OUT/NAME.tsv holding the tab-separated HEADER line.
bench_start() {
  out=$LAB_OUT/$1.tsv
  printf '%s\n' "$2" >"$out"
  as node dist/cli/main.js install >/dev/null
  as mkdir -p "$cfgdir"
}

# sbd_config JSON: writes tester's config and restarts sbd with it.
sbd_config() {
  echo "$1" | as tee "$cfgdir/config.json" >/dev/null
  as systemctl --user restart sbd.service
}

# systemd-oomd on, watching tester's sessions.slice with ManagedOOMMemoryPressure=kill (and, as
# Debian ships it, user@1000.service at 50 %). The image masks oomd (test/vm/image/hooks/customize.sh). The user manager talks to oomd only
# if oomd was there when it started (probed: a later daemon-reload or set-property does not
# connect it), so the user manager is restarted: every session and sbd stop.
oomd_on() {
  rm -f /etc/systemd/system/systemd-oomd.service /etc/systemd/system/systemd-oomd.socket
  systemctl daemon-reload
  systemctl start systemd-oomd.socket systemd-oomd.service || return 1
  as-tester mkdir -p /home/tester/.config/systemd/user/sessions.slice.d
  printf '[Slice]\nManagedOOMMemoryPressure=kill\n' | as-tester tee /home/tester/.config/systemd/user/sessions.slice.d/50-oomd.conf >/dev/null
  systemctl restart user@1000.service
  for _ in $(seq 1 60); do [[ $(as-tester systemctl --user is-system-running 2>/dev/null) =~ running|degraded ]] && break; sleep 0.5; done
  as-tester systemctl --user stop sbd.service
}
# Prints what oomd monitors; fails unless it names sessions.slice (call once a session exists).
oomd_check() {
  oomctl | sed -n '/^Default Memory Pressure/p;/Memory Pressure Monitored/,$p' | grep -E 'Default|Path|Limit'
  oomctl | grep -q 'Path: .*/sessions.slice$'
}
