#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: transport benchmark (bench/transport.sh): the same marker load, moved out by each method.
#   $1: METHOD[:METHOD...],SIZE,SETTLE,BUFKB,JOB[,JOB...]   JOB = RATExCOUNT (per CPU)
#   METHOD: vtrace (vtrace_guest), splice (bench_splice, user-space splice loop
#   into the same ports), agent (trace-cmd agent over vsock; L1 records, and
#   says "go" on the port bench.ctl before each job).
# Per job one line "vtg-bench: method=M job=J rate=R count=C size=S written=W
#   usec=T cpu_ns=N drain_ns=N lost=L moved=B": cpu_ns is the CPU time of the
#   method's threads from the start of the load to SETTLE seconds after its
#   end; drain_ns, for vtrace, that of the drain threads alone (not vtrace-ctl).
IFS=, read -r methods size settle bufkb jobs <<EOF2
$1
EOF2
IFS=' '
jobs=$(echo "$jobs" | tr , ' ')
T=/sys/kernel/tracing
D=/sys/kernel/debug/vtrace

say() { echo "vtg-bench: $*"; }

# cpu_ns COMM_PATTERN: summed run time (ns) of every task of every process
# whose comm matches (schedstat: run time of each thread, live threads only)
cpu_ns() {
	s=0
	for p in /proc/[0-9]*; do
		c=$(cat "$p/comm" 2>/dev/null) || continue
		case "$c" in
		$1) for t in "$p"/task/*; do
			read -r ns _ < "$t/schedstat" 2>/dev/null && s=$((s + ns))
		    done ;;
		esac
	done
	echo $s
}

# ring_lost DIR: overrun + dropped events of every CPU of a tracefs instance
ring_lost() {
	cat "$1"/per_cpu/cpu*/stats | awk '/^overrun:|^dropped events:/ { s += $NF } END { print s + 0 }'
}

# load MARKER RATE COUNT: run the load, sets written and usec
load() {
	bench_load "$1" "$2" "$3" "$size" > /tmp/load.out 2>&1
	written=$(awk -F'[ =]' '/^load/ { s += $5 } END { print s + 0 }' /tmp/load.out)
	usec=$(awk -F'[ =]' '/^load/ { if ($7 > m) m = $7 } END { print m + 0 }' /tmp/load.out)
}

aj=0
for method in $(echo "$methods" | tr : " "); do
	echo "vtg-bench-info: method $method, size $size, settle $settle, buffer ${bufkb} KiB, jobs $jobs, $(nproc) CPUs"
	case "$method" in
	vtrace)
		insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 || { echo "vtg-bench-error: insmod"; exit 1; }
		I=$T/instances/vtrace
		echo sched:sched_process_exec > $D/events
		echo "$bufkb" > $I/buffer_size_kb
		;;
	splice)
		I=$T/instances/bench
		;;
	agent)
		I=$T
		chroot /host modprobe vmw_vsock_virtio_transport || { echo "vtg-bench-error: vsock"; exit 1; }
		echo "$bufkb" > $T/buffer_size_kb
		# cwd: a writable tmpfs of the outer root (the rest is read-only 9p)
		chroot /host sh -c 'cd /tmp && exec trace-cmd agent' > /tmp/agent.log 2>&1 &
		apid=$!
		# ready once it waits in accept() (it loads from the outer root over 9p)
		i=0
		until grep -q accept /proc/$apid/wchan 2>/dev/null || [ $i -ge 1200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		echo "vtg-bench-info: trace-cmd agent pid $apid waits in $(cat /proc/$apid/wchan) after $((i / 10)) s"
		port=
		for v in /sys/class/virtio-ports/*; do
			[ "$(cat "$v/name")" = bench.ctl ] && port=/dev/${v##*/}
		done
		[ -n "$port" ] || { echo "vtg-bench-error: no bench.ctl port"; exit 1; }
		exec 3< "$port"
		echo 0 > $T/tracing_on
		;;
	*)	echo "vtg-bench-error: unknown method $method"; exit 1 ;;
	esac

	j=0
	for job in $jobs; do
		j=$((j + 1))
		rate=${job%x*}
		count=${job#*x}
		moved=0 d0=0 d1=0
		case "$method" in
		vtrace)
			echo 1 > $D/enable || { echo "vtg-bench-error: enable"; exit 1; }
			sleep 1
			c0=$(cpu_ns 'vtrace-*')
			d0=$(cpu_ns 'vtrace-cpu*')
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			c1=$(cpu_ns 'vtrace-*')
			d1=$(cpu_ns 'vtrace-cpu*')
			echo 0 > $D/enable
			lost=$(awk '$2 == "yes" || $2 == "no" { s += $9 + $10 } END { print s + 0 }' $D/status)
			moved=$(awk '$2 == "yes" { s += $5 } END { print s + 0 }' $D/status)
			;;
		splice)
			rmdir $I 2>/dev/null
			mkdir $I && echo "$bufkb" > $I/buffer_size_kb && echo x86-tsc > $I/trace_clock
			bench_splice $I vtrace > /tmp/splice.out 2>&1 &
			sp=$!
			sleep 1
			l0=$(ring_lost $I)
			c0=$(cpu_ns 'bench_splice')
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			c1=$(cpu_ns 'bench_splice')
			lost=$(( $(ring_lost $I) - l0 ))
			kill -TERM $sp
			wait $sp
			moved=$(awk -F'[ =]' '/^splice cpu/ { s += $5 } END { print s + 0 }' /tmp/splice.out)
			;;
		agent)
			aj=$((aj + 1))
			echo "vtg-bench-agent-ready: $aj"
			read -r cmd <&3
			t0=$(date +%s)
			while read -r on < $T/tracing_on; [ "$on" != 1 ] && [ $(($(date +%s) - t0)) -lt 60 ]; do
				sleep 0.2
			done
			[ "$on" = 1 ] || { echo "vtg-bench-error: agent job $aj: tracing_on stayed 0 ($cmd)"
				sed 's/^/vtg-bench-agent-log: /' /tmp/agent.log; }
			sleep 1
			l0=$(ring_lost $I)
			c0=$(cpu_ns 'trace-cmd')
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			c1=$(cpu_ns 'trace-cmd')
			lost=$(( $(ring_lost $I) - l0 ))
			;;
		esac
		say "method=$method job=$j rate=$rate count=$count size=$size written=$written usec=$usec cpu_ns=$((c1 - c0)) drain_ns=$((d1 - d0)) lost=$lost moved=$moved"
		[ "$method" = agent ] && echo 0 > $T/tracing_on && echo "vtg-bench-done: $aj"
	done
	case "$method" in
	vtrace)	sed 's/^/vtg-bench-status: /' $D/status
		rmmod vtrace_guest ;;
	splice)	rmdir $I ;;
	agent)	sed 's/^/vtg-bench-agent-log: /' /tmp/agent.log ;;
	esac
done
echo "vtg-bench-end"
