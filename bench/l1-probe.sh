#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in L1 by bench/probe.sh: the cost of one TSC offset write to KVM, with and without a recorder.
#   ARG: COUNT,RUNS,CAPACITY[,RATES[,SECS]]   (commas: it travels on L1's kernel
#        command line; RATES: write rates a second for the rate ladder, colon-separated)
# Each run times COUNT host-initiated IA32_TSC writes (bench_tscset: one
# kvm_write_tsc_offset tracepoint call each) in three set-ups, interleaved:
#   none    nothing attached to the tracepoint
#   ftrace  the kvm:kvm_write_tsc_offset event enabled in a tracefs
#           instance (what trace-cmd record -e kvm:kvm_write_tsc_offset does)
#   vtrace  vtrace_host.ko loaded (capacity=CAPACITY)
#   event   vtrace_host.ko loaded and its event vtrace_host:tsc_offset
#           recorded by trace-cmd record -C x86-tsc -e vtrace_host (what
#           the user runs): every write must reach the file (probe-stream
#           line: events, overrun and lost pages)
# then once more with vtrace_host and the function_graph tracer on vth_probe
# alone (its own duration per call).  Writes $VTRACE_OUT/results.txt lines:
#   probe-run: mode=M run=R count=N ns=T
#   probe-graph: calls=N median_ns=T mean_ns=T
#   probe-mem: capacity=N vmalloc_bytes=V bytes_per_record=B kept=K dropped=D
#   probe-stream: run=R writes=W events=E overrun=O lost_pages=L count=N ns=T
#   probe-rate: rate=R writes=W events=E lost=L count=N ns=T
# The rate ladder: for each rate of RATES, SECS seconds of writes paced to
# it (bench_tscset COUNT RATE) while trace-cmd records the event at its
# default buffer size; the events in host.dat and those its pages say were
# lost (vtrace-merge --stats) against the probe's calls.
. "$VTRACE_PROJ/testbed/lib.sh"
set -u
IFS=, read -r count runs capacity rates secs <<< "${1:-1000,3,65536}"
rates=${rates:-10000:20000:40000:70000:100000} secs=${secs:-5}
T=/sys/kernel/tracing
TSCSET=$VTRACE_PROJ/build/helpers/bench_tscset
res=$VTRACE_OUT/results.txt
: > "$res"
modprobe kvm_amd || exit 1

# tscset MODE RUN: one timed batch
tscset() {
	local out
	out=$("$TSCSET" "$count") || { echo "# bench_tscset failed ($1)"; return 1; }
	echo "probe-run: mode=$1 run=$2 ${out#tscset }" >> "$res"
}

load_vth() {	# one VM: its share is the whole capacity
	insmod "$VTRACE_HOST_KO" capacity="$capacity" vm_share="$capacity" ||
		{ echo "# insmod vtrace_host failed"; return 1; }
}

# event RUN: a batch with the module's event recorded by trace-cmd record
# (what a user runs: -C x86-tsc -e vtrace_host); every probe call (kept or
# dropped by the array) is one event, and none may be lost: the events in
# the file must equal the probe's calls, with no "EVENTS DROPPED" page and
# no ring-buffer overrun
event() {
	local tc out writes dat=/tmp/vthev.dat ev lost ovr
	load_vth || return 1
	rm -f $dat
	tc_record $dat
	tc=$TC
	out=$("$TSCSET" "$count") || { echo "# bench_tscset failed (event)"; return 1; }
	echo "probe-run: mode=event run=$1 ${out#tscset }" >> "$res"
	sleep 1
	kill -INT $tc; wait $tc
	writes=$(($(stat_of kept) + $(stat_of dropped)))
	ev=$(trace-cmd report -i $dat -F vtrace_host 2> /dev/null | grep -c ' tsc_offset: ')
	lost=$(trace-cmd report -i $dat 2> /dev/null | grep -c 'EVENTS DROPPED')
	ovr=$(awk '/^ *overrun:/ { s += $2 } END { print s + 0 }' $dat.log)
	echo "probe-stream: run=$1 writes=$writes events=$ev overrun=$ovr lost_pages=$lost" \
		"${out#tscset }" >> "$res"
	rmmod vtrace_host
}

# tc_record DAT: trace-cmd record -e vtrace_host into DAT, in the
# background (TC), returning once it records
tc_record() {
	local w
	(cd /tmp && exec trace-cmd record -C x86-tsc -e vtrace_host -o "$1") > "$1.log" 2>&1 &
	TC=$!
	for ((w = 0; w < 300; w++)); do	# trace-cmd records once the event is enabled
		[ "$(cat $T/events/vtrace_host/tsc_offset/enable)" = 1 ] && break
		sleep 0.1
	done
	sleep 1
}

# rate_step RATE: SECS s of writes paced to RATE while trace-cmd records
rate_step() {
	local dat=/tmp/vthrate.dat out st
	load_vth || return 1
	rm -f $dat
	tc_record $dat
	out=$("$TSCSET" $(($1 * secs)) "$1") || { echo "# bench_tscset failed (rate $1)"; return 1; }
	sleep 1
	kill -INT $TC; wait $TC
	st=$("$VTRACE_PROJ/user/vtrace-merge" --host $dat --stats --raw-tsc 2> /dev/null)
	echo "$st" | sed 's/^/# rate '"$1"': /'
	echo "probe-rate: rate=$1 writes=$(($(stat_of kept) + $(stat_of dropped)))" \
		"events=$(echo "$st" | awk '$1 == "host" { s += $3 } END { print s + 0 }')" \
		"lost=$(echo "$st" | awk '$1 == "host" { s += $6 } END { print s + 0 }')" \
		"${out#tscset }" >> "$res"
	rmmod vtrace_host
}

stat_of() {	# stat_of NAME: one value of vtrace_host's stats file
	awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/vtrace/stats
}

rc=0
# warm-up (not counted): the first VMs of a boot run slower
"$TSCSET" "$count" > /dev/null || rc=1
for ((r = 1; r <= runs; r++)); do
	tscset none $r || rc=1
	mkdir $T/instances/probe
	echo 1 > $T/instances/probe/events/kvm/kvm_write_tsc_offset/enable
	tscset ftrace $r || rc=1
	rmdir $T/instances/probe
	load_vth || { rc=1; break; }
	tscset vtrace $r || rc=1
	rmmod vtrace_host
	event $r || rc=1
done
for r in ${rates//:/ }; do
	rate_step "$r" || rc=1
done

# the probe's own duration: function_graph on vth_probe (a last batch)
load_vth || exit 1
echo vth_probe > $T/set_graph_function
echo vth_probe > $T/set_ftrace_filter
echo function_graph > $T/current_tracer
"$TSCSET" "$count" > /dev/null || rc=1
echo 0 > $T/tracing_on	# read before the tracer changes: that clears the buffer
grep -v '^#' $T/trace | head -3 | sed 's/^/# function_graph: /'
# "   0)   0.811 us    |  vth_probe();" (leaf calls, duration in us)
awk '/vth_probe/ { for (i = 1; i < NF; i++) if ($(i + 1) == "us") { print $i * 1000; break } }' \
	$T/trace | sort -n > /tmp/probe-graph.txt
echo nop > $T/current_tracer
echo 1 > $T/tracing_on
echo > $T/set_ftrace_filter
echo > $T/set_graph_function
awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "probe-graph: calls=%d median_ns=%d mean_ns=%d\n", NR, v[int((NR + 1) / 2)], s / NR }' \
	/tmp/probe-graph.txt >> "$res"

# memory: the record array is the module's one large vmalloc (its size
# there includes one guard page)
vm=$(awk '/vth_|vtrace_host/ && $2 > m { m = $2 } END { print m + 0 }' /proc/vmallocinfo)
rb=$(awk -v c="$capacity" -v v="$vm" 'BEGIN { print (v - 4096) / c }')
echo "probe-mem: capacity=$capacity vmalloc_bytes=$vm bytes_per_record=$rb kept=$(stat_of kept) dropped=$(stat_of dropped)" >> "$res"
grep -E 'vth_|vtrace_host' /proc/vmallocinfo | sed 's/^/# vmallocinfo: /'
rmmod vtrace_host
sed 's/^/# /' "$res"
save_dmesg l1-dmesg
exit $rc
