#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: transport benchmark (bench/transport.sh): the same marker load, moved out by each method.
#   $1: METHOD[:METHOD...],SIZE,SETTLE,BUFKB,NETPORT,JOB[,JOB...]   JOB = RATExCOUNT (per CPU)
#   METHOD: vtrace (vtrace_guest), splice (bench_splice, user-space splice loop
#   into the same ports), agent (trace-cmd agent over vsock; L1 records, and
#   says "go" on the port bench.ctl before each job), net (trace-cmd record
#   -N over TCP on virtio-net, QEMU user networking: to a trace-cmd listen in
#   L1 at 10.0.2.2:PORT, PORT the sixth field of $1).
# Per job one line "vtg-bench: method=M job=J rate=R count=C size=S written=W
#   usec=T cpu_ns=N drain_ns=N lost=L moved=B": cpu_ns is the CPU time of the
#   method's threads from the start of the load to SETTLE seconds after its
#   end; drain_ns, for vtrace, that of the drain threads alone (not vtrace-ctl),
#   ctl_switches the context switches of vtrace-ctl in that time.
IFS=, read -r methods size settle bufkb netport jobs <<EOF2
$1
EOF2
IFS=' '
jobs=$(echo "$jobs" | tr , ' ')
T=/sys/kernel/tracing
D=/sys/kernel/debug/vtrace

say() { echo "vtg-bench: $*"; }

# cpu_ns COMM_PATTERN [SUB_PATTERN]: summed run time (ns) of every task of
# every process whose comm matches (schedstat: run time of each thread, live
# threads only); with SUB_PATTERN, then that of the ones it matches too, from
# the same pass (two passes apart would count the time between them in one)
cpu_ns() {
	s=0 s2=0
	for p in /proc/[0-9]*; do
		c=$(cat "$p/comm" 2>/dev/null) || continue
		case "$c" in
		$1) for t in "$p"/task/*; do
			read -r ns _ < "$t/schedstat" 2>/dev/null || continue
			s=$((s + ns))
			case "$c" in ${2:-}) s2=$((s2 + ns)) ;; esac
		    done ;;
		esac
	done
	echo $s $s2
}

# switches COMM: context switches (voluntary + not) of the threads named COMM
switches() {
	s=0
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = "$1" ] || continue
		s=$((s + $(awk '/ctxt_switches/ { n += $2 } END { print n + 0 }' "$p/status")))
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
		chroot /host sh -c 'cd /tmp && exec trace-cmd agent --notimeout' > /tmp/agent.log 2>&1 &
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
	net)
		I=$T
		chroot /host modprobe virtio_net || { echo "vtg-bench-error: virtio_net"; exit 1; }
		dev=
		for n in /sys/class/net/*; do
			[ "${n##*/}" = lo ] || { dev=${n##*/}; break; }
		done
		[ -n "$dev" ] || { echo "vtg-bench-error: no network device"; exit 1; }
		# QEMU user networking: the guest is 10.0.2.15, L1 is 10.0.2.2
		ip link set lo up && ip link set "$dev" up && ip addr add 10.0.2.15/24 dev "$dev" &&
			ip route add default via 10.0.2.2 dev "$dev" ||
			{ echo "vtg-bench-error: $dev set-up"; exit 1; }
		# the link comes up asynchronously (virtio-net's status)
		i=0
		until [ "$(cat /sys/class/net/$dev/carrier 2>/dev/null)" = 1 ] || [ $i -ge 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		ip addr show dev "$dev" | sed 's/^/vtg-bench-info: /'
		ip route | sed 's/^/vtg-bench-info: route /'
		echo "vtg-bench-info: $dev carrier $(cat /sys/class/net/$dev/carrier) after $((i / 10)) s, operstate $(cat /sys/class/net/$dev/operstate)"
		ip route get 10.0.2.2 2>&1 | sed 's/^/vtg-bench-info: route get: /'
		ping -c 1 -W 3 10.0.2.2 2>&1 | sed 's/^/vtg-bench-info: ping: /'
		# a port nobody listens on: "refused" means L1 was reached
		echo | nc -w 3 10.0.2.2 $((netport + 1)) > /dev/null 2>/tmp/nc.err
		echo "vtg-bench-info: nc 10.0.2.2:$((netport + 1)) exit $? $(cat /tmp/nc.err)"
		echo "$bufkb" > $T/buffer_size_kb
		echo "vtg-bench-info: $dev up, trace-cmd listen at 10.0.2.2:$netport"
		;;
	*)	echo "vtg-bench-error: unknown method $method"; exit 1 ;;
	esac

	j=0
	for job in $jobs; do
		j=$((j + 1))
		rate=${job%x*}
		count=${job#*x}
		moved=0 d0=0 d1=0 w0=0 w1=0
		case "$method" in
		vtrace)
			echo 1 > $D/enable || { echo "vtg-bench-error: enable"; exit 1; }
			sleep 1
			w0=$(switches vtrace-ctl)
			set -- $(cpu_ns 'vtrace-*' 'vtrace-cpu*')
			c0=$1 d0=$2
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			set -- $(cpu_ns 'vtrace-*' 'vtrace-cpu*')
			c1=$1 d1=$2
			w1=$(switches vtrace-ctl)
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
			set -- $(cpu_ns 'bench_splice'); c0=$1
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			set -- $(cpu_ns 'bench_splice'); c1=$1
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
			while read -r on < $T/tracing_on; [ "$on" != 1 ] && [ $(($(date +%s) - t0)) -lt 600 ]; do
				sleep 0.2
			done
			[ "$on" = 1 ] || { echo "vtg-bench-error: agent job $aj: tracing_on stayed 0 ($cmd)"
				sed 's/^/vtg-bench-agent-log: /' /tmp/agent.log; }
			echo "vtg-bench-info: agent job $aj: tracing_on $on after $(($(date +%s) - t0)) s"
			sleep 1
			l0=$(ring_lost $I)
			set -- $(cpu_ns 'trace-cmd'); c0=$1
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			set -- $(cpu_ns 'trace-cmd'); c1=$1
			lost=$(( $(ring_lost $I) - l0 ))
			;;
		net)
			echo 0 > $T/tracing_on
			# TCP for the data too (-t); raw pages in the file (no compression)
			chroot /host sh -c "cd /tmp && exec trace-cmd record --notimeout -N 10.0.2.2:$netport -t \
				--compression none -C x86-tsc -e sched:sched_process_exec" > /tmp/net.log 2>&1 &
			rp=$!
			t0=$(date +%s)
			while read -r on < $T/tracing_on; [ "$on" != 1 ] && [ $(($(date +%s) - t0)) -lt 600 ] &&
			      kill -0 $rp 2>/dev/null; do
				sleep 0.2
			done
			echo "vtg-bench-info: net job $j: tracing_on $on after $(($(date +%s) - t0)) s"
			[ "$on" = 1 ] || sed 's/^/vtg-bench-net-log: /' /tmp/net.log
			sleep 1
			l0=$(ring_lost $I)
			set -- $(cpu_ns 'trace-cmd'); c0=$1
			load $I/trace_marker "$rate" "$count"
			sleep "$settle"
			set -- $(cpu_ns 'trace-cmd'); c1=$1
			lost=$(( $(ring_lost $I) - l0 ))
			# stop: the rest is flushed and sent, then the connection closes
			kill -INT $rp 2>/dev/null
			i=0
			while kill -0 $rp 2>/dev/null && [ $i -lt 3000 ]; do
				sleep 0.1
				i=$((i + 1))
			done
			kill -0 $rp 2>/dev/null && { echo "vtg-bench-error: net job $j: trace-cmd record did not stop"; kill -KILL $rp; }
			wait $rp
			echo "vtg-bench-info: net job $j: trace-cmd record stopped after $((i / 10)) s, exit $?"
			grep -i "lost\|error\|fail" /tmp/net.log | sed 's/^/vtg-bench-net-log: /'
			;;
		esac
		say "method=$method job=$j rate=$rate count=$count size=$size written=$written usec=$usec cpu_ns=$((c1 - c0)) drain_ns=$((d1 - d0)) ctl_switches=$((w1 - w0)) lost=$lost moved=$moved"
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
