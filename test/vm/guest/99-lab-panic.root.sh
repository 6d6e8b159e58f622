#!/usr/bin/env bash
# Root step of 99-lab-panic.test.js: a kernel panic, as the emulated 6.12 kernel's own fault ends a
# guest mid-file, in the boot whose share carries the host step's marker; nothing in the next one.
set -eu
if [ -e /mnt/lab/panic-once ]; then
  echo "99-lab-panic: panicking this guest's kernel (sysrq c)" >&2
  sync
  echo c > /proc/sysrq-trigger
  sleep 60   # the kernel is gone before this ends
fi
