#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: drive the ring buffer into overrun on purpose; every marker is delivered or counted lost.
#   $1: markers per CPU and session (default 3000)
#
# Three sessions, markers only (no event enabled), fixed-size markers
# (MARK_WIDTH: every marker event is 56 bytes, so a page always has room
# for the missed-events count the kernel stores at its end):
#   1 overwrite, stalled reader: 16 KiB per CPU, drain threads asleep
#     (drain_ms=60000, drain_max_ms=0: no wake-ups from the ring) while the
#     burst is written; the oldest pages go.
#   2 overwrite, a reader that keeps up only in pauses: 16 KiB, drain
#     every 20 ms, markers in bursts of 1000 with 100 ms pauses: overruns
#     in each burst, pages with missed counts mid-stream.
#   3 no overwrite, stalled reader: the full ring refuses writes
#     (MARK_KEEP_GOING counts them); nothing already recorded is lost.
# After each stop the guest prints its status table, the ring's own
# per_cpu/cpuK/stats and what the generator wrote; the host compares them
# with the EOS messages, the page headers and vtrace-merge --stats.
N=${1:-3000}
D=/sys/kernel/debug/vtrace
I=/sys/kernel/tracing/instances/vtrace
P=/sys/module/vtrace_guest/parameters
export MARK_WIDTH=12
n=0
t() {	# t RC NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "vtg: ok $n $2"; else echo "vtg: not ok $n $2"; fi
}
col() {	# col CPU FIELD: a number of the status table
	awk -v c="$1" -v f="$2" '$1 == c && NF == 11 { print $f }' $D/status
}
stat() {	# stat CPU FIELD: a number of the ring's per_cpu/cpuK/stats
	awk -F: -v f="$2" '$1 == f { print $2 + 0 }' $I/per_cpu/cpu"$1"/stats
}

# report S: print what the host checks for session S; check the guest-side identities
report() {
	s=$1
	sed "s/^/vtg-status $s: /" $D/status
	ok=0
	for c in 0 1; do
		ov=$(stat $c overrun) co=$(stat $c "commit overrun") dr=$(stat $c "dropped events")
		en=$(stat $c entries)
		echo "vtg-ring $s cpu=$c overrun=$ov commit_overrun=$co dropped=$dr entries=$en"
		# the module's ring_lost is the ring's own count of lost events
		[ "$(col $c 10)" = $((ov + co + dr)) ] || ok=1
		# every marker written was sent, lost or refused, and the stop
		# left nothing in the ring (no filler, no partial page)
		w=$(awk -v c=$c -F'[ =]' '$3 == c { print $5 + $7 }' /tmp/gen.$s)
		[ "$w" = $(($(col $c 6) + $(col $c 9) + $(col $c 10))) ] || ok=1
		[ "$en" = 0 ] && [ "$(col $c 7)" = 0 ] || ok=1
	done
	sed "s/^markers /vtg-gen $s: /" /tmp/gen.$s
	return $ok
}

# drain_max_ms=0: the drain threads drain every drain_ms and nothing else
# wakes them (else the ring would wake a "stalled" reader at buffer_percent)
insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 drain_max_ms=0
t $? load
echo 16 > $I/buffer_size_kb
t $? buffer_16k

# 1: overwrite, stalled reader
echo 60000 > $P/drain_ms
echo 1 > $D/enable
guest_markers "$N" 0 1 > /tmp/gen.1
t $? s1_markers_written
echo 0 > $D/enable
report 1
t $? s1_status_equals_ring_and_generator
[ "$(col 0 10)" -gt 0 ] && [ "$(col 1 10)" -gt 0 ] && [ "$(col 0 8)" = 0 ] && [ "$(col 1 8)" = 0 ]
t $? s1_ring_overran_no_port_loss

# 2: overwrite, bursts the ring cannot hold, read in the pauses
echo 20 > $P/drain_ms
echo 1 > $D/enable
MARK_BURST=1000 MARK_PAUSE_MS=100 guest_markers "$((N * 3))" 0 1 > /tmp/gen.2
t $? s2_markers_written
echo 0 > $D/enable
report 2
t $? s2_status_equals_ring_and_generator
[ "$(col 0 10)" -gt 0 ] && [ "$(col 1 10)" -gt 0 ]
t $? s2_ring_overran

# 3: no overwrite, stalled reader: writes beyond the ring are refused
echo 60000 > $P/drain_ms
echo 0 > $I/options/overwrite
echo 1 > $D/enable
MARK_KEEP_GOING=1 guest_markers "$N" 0 1 > /tmp/gen.3
echo 0 > $D/enable
report 3
t $? s3_status_equals_ring_and_generator
f0=$(awk -F'[ =]' '$3 == 0 { print $7 }' /tmp/gen.3)
[ "$f0" -gt 0 ] && [ "$(col 0 10)" -ge "$f0" ]
t $? s3_writes_refused_and_counted
echo 1 > $I/options/overwrite

rmmod vtrace_guest
t $? unload
