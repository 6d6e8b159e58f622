#!/bin/bash
# Sourced by the guest benchmarks (as root): systemd-oomd on, watching tester's sessions.slice
# with ManagedOOMMemoryPressure=kill (and, as Debian ships it, user@1000.service at 50 %).
# The image masks oomd (test/vm/image/hooks/customize.sh). The user manager talks to oomd only
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
