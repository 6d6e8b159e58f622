#!/bin/bash
# Root's part of the tests that check the kernel log (tester may not read it: Debian sets
# kernel.dmesg_restrict=1): one copy of /dev/kmsg for the rest of the guest's life, readable by
# all at /tmp/sb-kmsg.log. Started once; later callers find it running.
if ! { [[ -s /tmp/sb-kmsg.pid ]] && kill -0 "$(cat /tmp/sb-kmsg.pid)" 2>/dev/null; }; then
  setsid cat /dev/kmsg </dev/null >/tmp/sb-kmsg.log 2>&1 &
  echo $! >/tmp/sb-kmsg.pid
  chmod 644 /tmp/sb-kmsg.log /tmp/sb-kmsg.pid
fi
