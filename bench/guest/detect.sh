#!/bin/bash
# Detection latency in the guest (issue 7, item 2): $WEDGES wedges on the event feed, then as
# many with sbd forced into 5 s timer sampling. Results: $LAB_OUT/detect.tsv (variant, name,
# onset ms, verdict ms).
set -u
WEDGES=${WEDGES:-10}
cd /mnt/proj
as() { as-tester "$@"; }
out=$LAB_OUT/detect.tsv
printf 'variant\tname\tonset_ms\tverdict_ms\n' >"$out"
as node dist/cli/main.js install >/dev/null
cfgdir=/home/tester/.config/sessionbrake; as mkdir -p $cfgdir
# Raising off and a long grace: only the verdict is timed, nothing acts.
for variant in feed sampling-5s; do
  if [[ $variant == feed ]]; then cfg='{"raise": {"enabled": false}, "detector": {"graceS": 600}}'
  else cfg='{"raise": {"enabled": false}, "detector": {"graceS": 600, "windowS": 1, "fallbackIntervalS": 5}}'; fi
  echo "$cfg" | as tee $cfgdir/config.json >/dev/null
  as systemctl --user restart sbd.service; sleep 5
  for i in $(seq 1 "$WEDGES"); do
    as node bench/guest/wedge.js "w-$variant-$i" | sed "s/^/$variant\t/" | tee -a "$out"
    sleep 2
  done
done
