#!/bin/bash
# Root's part of 40-leftovers: processes of ANOTHER user (root) that sbd and sbctl must never
# signal: one inside the checkout the test reaps, one carrying a copy of a session's marker.
mkdir -p /tmp/shared-checkout && chmod 777 /tmp/shared-checkout
cd /tmp/shared-checkout && setsid sleep 900 </dev/null >/dev/null 2>&1 &
echo $! >/tmp/root-in-checkout.pid
SESSIONBRAKE_SESSION=left1 setsid sleep 900 </dev/null >/dev/null 2>&1 &
echo $! >/tmp/root-marked.pid
chmod 644 /tmp/root-*.pid
