#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fake-trace-cmd.sh: a stand-in for "trace-cmd record" in vtrace record's unit tests
# (VTRACE_TRACE_CMD): logs its arguments to $FAKE_TC_LOG, turns on the flags of
# the fake tracefs $VTRACE_TRACEFS that vtrace record waits for, writes its -o
# file, and exits 0 on SIGINT, after writing "stopped" to the log.
# FAKE_TC_FAIL=1: exits 1 at once (a trace-cmd that cannot record).
[ -n "${FAKE_TC_FAIL:-}" ] && { echo "fake trace-cmd: cannot record" >&2; exit 1; }
echo "$*" > "$FAKE_TC_LOG"
out=
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && out=$2
	shift
done
trap 'echo stopped >> "$FAKE_TC_LOG"; echo fake > "$out"; exit 0' INT
mkdir -p "$VTRACE_TRACEFS/events/vtrace_host" "$VTRACE_TRACEFS/events/kvm/kvm_entry"
echo 1 > "$VTRACE_TRACEFS/events/vtrace_host/enable"
echo 1 > "$VTRACE_TRACEFS/events/kvm/kvm_entry/enable"
echo 1 > "$VTRACE_TRACEFS/tracing_on"
while :; do
	sleep 0.1
done
