#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fake-trace-cmd.sh: a stand-in for "trace-cmd record" in vtrace record's unit tests
# (VTRACE_TRACE_CMD): logs its arguments to $FAKE_TC_LOG, turns on the flags of
# the fake tracefs $VTRACE_TRACEFS that vtrace record waits for, writes its -o
# file, and exits 0 on SIGINT, after writing "stopped" to the log.  Its reader
# moves a page every 0.1 s (per_cpu/cpu0/stats' "read events" grows) and, once
# tracing_on is 0, the 5 pages still in the buffer; at SIGINT the log says
# "at stop: tracing_on N, pages left N" first.
# FAKE_TC_FAIL=1: exits 1 at once (a trace-cmd that cannot record).
[ -n "${FAKE_TC_FAIL:-}" ] && { echo "fake trace-cmd: cannot record" >&2; exit 1; }
echo "$*" > "$FAKE_TC_LOG"
out=
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && out=$2
	shift
done
left=5 read=0
stop() {
	echo "at stop: tracing_on $(cat "$VTRACE_TRACEFS/tracing_on"), pages left $left" >> "$FAKE_TC_LOG"
	echo stopped >> "$FAKE_TC_LOG"
	echo fake > "$out"
	exit 0
}
trap stop INT
mkdir -p "$VTRACE_TRACEFS/events/vtrace_host" "$VTRACE_TRACEFS/events/kvm/kvm_entry" \
	"$VTRACE_TRACEFS/per_cpu/cpu0"
echo 1 > "$VTRACE_TRACEFS/events/vtrace_host/enable"
echo 1 > "$VTRACE_TRACEFS/events/kvm/kvm_entry/enable"
echo 1 > "$VTRACE_TRACEFS/tracing_on"
while :; do
	if [ "$(cat "$VTRACE_TRACEFS/tracing_on")" = 1 ] || [ $left -gt 0 ]; then
		[ "$(cat "$VTRACE_TRACEFS/tracing_on")" = 1 ] || left=$((left - 1))
		read=$((read + 1))
		printf 'entries: 0\noverrun: 0\nread events: %d\n' $read \
			> "$VTRACE_TRACEFS/per_cpu/cpu0/stats"
	fi
	sleep 0.1
done
