#!/bin/bash
# The kernel log, copied for tester: see kmsg-copy.root.sh.
exec bash "$(dirname "$0")/kmsg-copy.root.sh"
