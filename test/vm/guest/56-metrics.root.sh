#!/bin/bash
# Root's part of 56-metrics: Debian's real node_exporter with its textfile collector on Debian's
# own directory, which tester may write to (on a shared server: a group of the sbd users; here
# tester's own group, since a group added now would not reach tester's running user manager). Only
# the textfile collector: the others cost seconds a scrape under TCG and are not what is tested.
set -euo pipefail
DIR=/var/lib/prometheus/node-exporter
mkdir -p "$DIR"
chgrp tester "$DIR"
chmod 1775 "$DIR" # the sticky bit: each user's file stays their own
echo 'ARGS="--collector.textfile.directory=/var/lib/prometheus/node-exporter --collector.disable-defaults --collector.textfile --web.listen-address=127.0.0.1:9100"' >/etc/default/prometheus-node-exporter
systemctl restart prometheus-node-exporter.service
for _ in $(seq 1 100); do
  if (exec 3<>/dev/tcp/127.0.0.1/9100) 2>/dev/null; then exit 0; fi
  sleep 0.2
done
echo "node_exporter does not listen on 127.0.0.1:9100" >&2
systemctl status --no-pager prometheus-node-exporter.service >&2 || true
exit 1
