#!/bin/sh
# rdna1-mtype field kit: now `rdna1ctl report`, which this script only calls (kept for the
# instructions and scripts that name it, e.g. tests/hardware).
#   sudo -E dist/field-kit/field-kit.sh [REPORT.json]
# Runs `rdna1ctl report`: doctor and status, then the workload under mode off, audit and
# enforce with verify, the module's events, the kernel log's GPU faults, KFD's proof of GPU work
# and the numbers checked around each run, as the user who ran sudo; one JSON file and a
# summary. See docs/CLI.md (report).
# Environment: RDNA1CTL (rdna1ctl), WORKLOAD (a shell command line run instead of the layer
# battery beside this script), RDNA1CTL_ROOT (rdna1ctl's fake-root override, for tests).
# Exit: rdna1ctl report's (0 the three runs recorded, 4 not root, 5 module not loaded, ...).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
RDNA1CTL=${RDNA1CTL:-rdna1ctl}
out=${1:-}
if [ -n "${WORKLOAD:-}" ]; then
	exec "$RDNA1CTL" report ${out:+--output "$out"} -- sh -c "$WORKLOAD"
fi
exec "$RDNA1CTL" report ${out:+--output "$out"} --script "$here/battery.py"
