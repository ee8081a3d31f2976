#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: transport benchmark (bench/transport.sh): the same marker load, moved out by each method.
#   $1: METHOD[:METHOD...],SIZE,SETTLE,BUFKB,NETPORT,PROF,WAIT,JOB[,JOB...]
#   JOB = RATExCOUNT (per CPU); WAIT: the start-up a trace-cmd method (agent,
#   net) may take (seconds); every wait of a job is bounded by its own
#   bound, derived from its size (job_bound), and on expiry the method is
#   reported failed ("vtg-bench-fail: method=M job=J waiting for WHAT ...")
#   and the bench goes on with the next method
#   METHOD: vtrace (vtrace_guest), splice (bench_splice, user-space splice loop
#   into the same ports), agent (trace-cmd agent over vsock; L1 records, and
#   says "go" on the port bench.ctl before each job), net (trace-cmd record
#   -N over TCP on virtio-net, QEMU user networking: to a trace-cmd listen in
#   L1 at 10.0.2.2:PORT, PORT the fifth field of $1), none (the load alone,
#   nobody reading: the baseline of exits and guest CPU), stuck (a
#   recorder that never starts recording: its instance's tracing_on stays 0,
#   as the agent's once did; the bench's own test that a stuck method fails
#   within its bound and the next one runs).
# Round r runs job r of every method, the methods' order rotated by r - 1
# ("vtg-bench-order: run=R M..." line); each method is set up and torn down
# around each of its jobs.
# Per job one line "vtg-bench: method=M job=J rate=R count=C size=S written=W
#   usec=T cpu_ns=N drain_ns=N lost=L moved=B": cpu_ns is the CPU time of the
#   method's threads from the start of the load to SETTLE seconds after its
#   end; drain_ns, for vtrace, that of the drain threads alone (not vtrace-ctl),
#   ctl_switches the times vtrace-ctl was scheduled in during that time,
#   drain_switches those of the method's threads (the drain threads for
#   vtrace); kworker_ns the CPU time of kworker and ksoftirqd threads
#   (per thread: a thread's time at the end minus its time at the start,
#   one born inside counted whole), kworker_gone those that ended inside
#   the window (see cpu_ns),
#   busy_ns the guest's whole busy time (/proc/stat) and load_ns the load's
#   own CPU time (bench_load) over the same window.
# Around that same window the guest writes "exits-begin M J" and "exits-end
# M J" on bench.ctl: L1 reads its VM's exit counters then (l1-transport.sh);
# after the method's tear-down, "job-end M J SENT" (SENT: the bytes it gave
# the data ports): L1 binds what came for job J to it, then answers.
# "vtg-bench-irq: method=M job=J NAME=N..." lines: the guest's interrupts
# (/proc/interrupts, both CPUs) in that window. With PROF (seventh field, 1),
# the guest's /proc/kallsyms goes to bench.ctl at the end, between
# "kallsyms-begin" and "kallsyms-end" lines (to name the exits' guest RIPs).
IFS=, read -r methods size settle bufkb netport prof wait jobs <<EOF2
$1
EOF2
IFS=' '
jobs=$(echo "$jobs" | tr , ' ')
T=/sys/kernel/tracing
D=/sys/kernel/debug/vtrace

say() { echo "vtg-bench: $*"; }

# now: seconds of guest uptime (no command started)
now() {
	read -r up _ < /proc/uptime
	echo "${up%.*}"
}

# job_bound METHOD RATE COUNT: the longest any wait of one job may take
# (seconds): the method's start-up (WAIT for trace-cmd's, agent and net; 10
# s for the others), plus three times the job's nominal length (COUNT
# markers at RATE a second; unpaced, RATE 0, taken as 1000 a second)
job_bound() {
	case "$1" in agent|net) b=$wait ;; *) b=10 ;; esac
	r=$2
	[ "$r" -gt 0 ] || r=1000
	echo $((b + 3 * ($3 / r + 1)))
}

# wait_for SECONDS CMD...: run CMD every 0.2 s until it succeeds (0), or
# until SECONDS have passed (1)
wait_for() {
	local b=$1 t0
	shift
	t0=$(now)
	until "$@"; do
		[ $(($(now) - t0)) -lt "$b" ] || return 1
		sleep 0.2
	done
}

# tracing_is_on DIR: the tracefs instance DIR records
tracing_is_on() {
	read -r on < "$1/tracing_on"
	[ "$on" = 1 ]
}

# fail WHAT: the method's current job waited its whole bound for WHAT: say so;
# the method's other jobs are skipped (the caller breaks out of its loop)
fail() {
	echo "vtg-bench-fail: method=$method job=$j waiting for $* (bound $jb s)"
}

# stop_pid PID: SIGTERM (or the signal in $2), then SIGKILL after 10 s
stop_pid() {
	kill -"${2:-TERM}" "$1" 2>/dev/null
	wait_for 10 eval "! kill -0 $1 2>/dev/null" || kill -KILL "$1" 2>/dev/null
	wait "$1"
}

# cpu_ns COMM_PATTERN [SUB_PATTERN]: prints, from one pass over /proc (two
# passes apart would count the time between them in one; no command is
# started, which would add its own exits to the window):
#   1 the summed run time (ns) of every thread of every process whose comm
#     matches (schedstat: live threads only)
#   2 that of the ones SUB_PATTERN matches too
#   3 that of the kernel's helper threads (kworker, ksoftirqd), which do
#     some methods' sending (vsock's transmit work runs in a kworker), per
#     thread since the pass that printed $kprev (8 below; a thread born
#     since counts whole; without $kprev, the plain sum)
#   4 the guest's busy time (/proc/stat, both CPUs, 10 ms units, in ns)
#   5 the times the threads of 1 were scheduled in (schedstat), i.e. their
#     wake-ups and preemptions; 6 the same for the threads of 2
#   7 the helper threads of $kprev gone since (a kworker that exited: the
#     workqueue's idle timer destroys a worker only after it stayed idle
#     IDLE_WORKER_TIMEOUT, 300 s, longer than any window, so what it ran
#     in the window is its exit alone, not counted)
#   8 TID:NS,... of every helper thread now, for the next pass's $kprev
#   9 the guest's steal time (/proc/stat, both CPUs, in ns): time its vCPUs
#     were runnable in L1 but did not run (kvm steal time), which the
#     threads' run times of 1 to 3 include (no PARAVIRT_TIME_ACCOUNTING)
cpu_ns() {
	s=0 s2=0 k=0 n=0 n2=0 kl=, gone=0
	for p in /proc/[0-9]*; do
		read -r c < "$p/comm" 2>/dev/null || continue
		case "$c" in
		$1) for t in "$p"/task/*; do
			read -r ns _ sl < "$t/schedstat" 2>/dev/null || continue
			s=$((s + ns)) n=$((n + sl))
			case "$c" in ${2:-}) s2=$((s2 + ns)) n2=$((n2 + sl)) ;; esac
		    done ;;
		kworker/*|ksoftirqd/*)
			read -r ns _ < "$p/schedstat" 2>/dev/null || continue
			t=${p#/proc/}
			kl="$kl$t:$ns,"
			case "${kprev:-}" in
			*",$t:"*) v=${kprev#*,$t:}; k=$((k + ns - ${v%%,*})) ;;
			*) k=$((k + ns)) ;;
			esac ;;
		esac
	done
	# the threads of $kprev not seen in this pass
	v=${kprev:-,}
	while [ -n "${v#,}" ]; do
		v=${v#,}
		case "$kl" in *",${v%%:*}:"*) ;; *) gone=$((gone + 1)) ;; esac
		v=,${v#*,}
	done
	read -r _ u ni sy _ _ hi si st _ < /proc/stat
	echo $s $s2 $k $(( (u + ni + sy + hi + si) * 10000000 )) $n $n2 $gone $kl $((st * 10000000))
}

# irqs: one line, NAME=COUNT (both CPUs) of every /proc/interrupts line
irqs() {
	awk 'NR > 1 { n = 0; for (i = 2; i <= 3; i++) n += $i; k = $1; sub(":", "", k)
		if ($NF ~ /virtio|vport|input|output|control/) k = k "-" $NF; printf "%s=%d ", k, n }' \
		/proc/interrupts
}

# irq_delta BEFORE AFTER: the NAME=N pairs of AFTER minus BEFORE, non-zero only
irq_delta() {
	echo "$1" "|" "$2" | awk '{ for (i = 1; i <= NF; i++) { if ($i == "|") { a = 1; continue }
		split($i, kv, "="); if (a) d[kv[1]] += kv[2]; else d[kv[1]] -= kv[2] } }
		END { for (k in d) if (d[k]) printf "%s=%d ", k, d[k] }'
}

# tids COMM_PATTERN: the thread ids of the processes it matches, comma-separated
tids() {
	for p in /proc/[0-9]*; do
		read -r c < "$p/comm" 2>/dev/null || continue
		case "$c" in $1) for t in "$p"/task/*; do printf '%s,' "${t##*/}"; done ;; esac
	done
}

# prof_start COMM_PATTERN / prof_end: with PROF, the function_graph tracer
# (top-level buffer) on those threads over the window, limited to the
# functions of the drain path; prints per function its calls and total
# wall time inside the threads (interrupts included) as "vtg-bench-prof:"
prof_funcs="vtg_drain vtg_drain_sleep vtg_actor vtg_count_page vtg_port_splice vtg_port_wait
 vtg_flush_by_read splice_direct_to_actor tracing_buffers_splice_read ring_buffer_read_page
 ring_buffer_alloc_read_page splice_to_pipe port_fops_splice_write __splice_from_pipe pipe_to_sg
 __send_to_port virtqueue_kick virtqueue_notify vp_notify alloc_buf free_buf
 reclaim_consumed_buffers vfs_poll tracing_buffers_poll schedule schedule_timeout
 vring_interrupt irq_work_run __wake_up sysvec_apic_timer_interrupt sysvec_call_function_single
 sysvec_reschedule_ipi sysvec_irq_work __common_interrupt do_splice_to splice_read
 __x64_sys_splice do_splice __x64_sys_nanosleep __x64_sys_clock_nanosleep do_sys_poll
 __x64_sys_poll __x64_sys_ppoll"
prof_start() {
	[ "$prof" = 1 ] || return 0
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo 4096 > $T/buffer_size_kb
	for f in $prof_funcs; do echo "$f" >> $T/set_ftrace_filter 2>/dev/null; done
	echo > $T/set_ftrace_pid
	for t in $(tids "$1" | tr , ' '); do echo "$t" >> $T/set_ftrace_pid; done
	echo funcgraph-tail > $T/trace_options
	echo 6 > $T/max_graph_depth
	echo function_graph > $T/current_tracer
	echo > $T/trace
	echo 1 > $T/tracing_on
}
prof_end() {
	[ "$prof" = 1 ] || return 0
	echo 0 > $T/tracing_on
	awk '/ us +\|/ { d = $0; sub(/ us +\|.*/, "", d); sub(/.*[ +!#*@$]/, "", d)
		f = $0; sub(/.*\| /, "", f); n = match(f, /[^ ]/); ind = int((n - 1) / 2); f = substr(f, n)
		sub(/^ *\} \/\* /, "", f); sub(/ \*\/.*/, "", f); sub(/\(\);.*/, "", f)
		sub(/ \[.*\]/, "", f); k = ind " " f; t[k] += d; c[k]++ }
		END { for (k in t) printf "%d %.0f %s\n", c[k], t[k], k }' $T/trace |
		sort -k2 -n -r | head -45 | sed "s/^/vtg-bench-prof: $method: calls,us,depth,func /"
	grep -c . $T/trace | sed "s/^/vtg-bench-prof: $method: trace lines /"
	echo nop > $T/current_tracer
	echo > $T/set_ftrace_filter
	echo > $T/set_ftrace_pid
	echo > $T/trace
	echo 1 > $T/tracing_on
}

# idle_switches: vtrace_guest enabled for 5 s with no marker written: how
# often its control thread (vtrace-ctl) and its drain threads were
# scheduled in ("vtg-bench-idle:" line; schedstat's third field)
idle_switches() {
	echo 1 > $D/enable || return
	sleep 1
	set -- $(cpu_ns 'vtrace-*' 'vtrace-cpu*')
	i0=$5 i1=$6 i2=$(($1 - $2))
	sleep 5
	set -- $(cpu_ns 'vtrace-*' 'vtrace-cpu*')
	# moved: after the stop, which sends each CPU's last partial page
	echo 0 > $D/enable
	idle_moved=$(awk '$2 == "yes" { s += $5 } END { print s + 0 }' $D/status)
	echo "vtg-bench-idle: method=vtrace job=$j s=5 ctl_switches=$(($5 - $6 - i0 + i1)) drain_switches=$(($6 - i1)) ctl_ns=$(($1 - $2 - i2))" \
		"moved=$idle_moved"
}

# watch_start / watch_end: with PROF 2 (bench/transport.sh --watch), where
# vtrace's losses happen: every 0.1 s of the window, each CPU's ring
# (entries, overrun: per_cpu/cpuK/stats) and its drain thread (state, the
# CPU it is on: /proc/PID/stat), shell builtins only; at the end, a
# "vtg-bench-watch:" line per sample from 5 before to 1 after each one
# whose overrun grew, and the longest gap between two samples (the guest,
# or the sampler's vCPU, not running)
watch_start() {
	[ "$prof" = 2 ] && [ "$method" = vtrace ] || return 0
	rm -f /tmp/watch.stop
	watch_loop > /tmp/watch.log &
	wpid=$!
}
watch_loop() {
	local dp c l k up e o st
	dp=
	for c in 0 1; do
		for l in /proc/[0-9]*; do
			read -r k < "$l/comm" 2>/dev/null && [ "$k" = "vtrace-cpu$c" ] && dp="$dp ${l#/proc/}"
		done
	done
	while [ ! -e /tmp/watch.stop ]; do
		read -r up _ < /proc/uptime
		l="t=$up"
		k=0
		for c in $dp; do
			e= o=
			while read -r a b _; do
				case "$a" in entries:) e=$b ;; overrun:) o=$b ;; esac
			done < $I/per_cpu/cpu$k/stats
			read -r st < /proc/$c/stat
			set -- ${st##*) }
			l="$l cpu$k=$e/$o/$1@${37}"
			k=$((k + 1))
		done
		echo "$l"
		sleep 0.1
	done
}
watch_end() {
	[ -n "${wpid:-}" ] || return 0
	: > /tmp/watch.stop
	wait "$wpid"
	wpid=
	awk -v m="$method" -v j="$j" '{ t[NR] = $0; split($1, u, "="); ut[NR] = u[2]
		if (NR > 1 && ut[NR] - ut[NR - 1] > gap) { gap = ut[NR] - ut[NR - 1]; gat = ut[NR - 1] }
		for (i = 2; i <= NF; i++) { split($i, v, "/"); if (NR > 1 && v[2] != o[i]) hit[NR] = 1; o[i] = v[2]
			split($i, c, "="); k = substr(c[1], 4); split(v[3], w, "@"); split(c[2], e, "/")
			if (e[1] + 0 > mx[k] + 0 || !(k in mx)) { mx[k] = e[1]; mt[k] = ut[NR] }
			if (w[2] != k) away[k]++; if (w[1] == "R") run[k]++ } }
		END { for (n in hit) for (i = n - 5; i <= n + 1; i++) if (i >= 1 && i <= NR) show[i] = 1
			for (i = 1; i <= NR; i++) if (show[i]) printf "vtg-bench-watch: method=%s job=%s %s\n", m, j, t[i]
			s = ""; for (k in mx) s = s sprintf(" cpu%s: most entries %d at t=%s, drain thread on another CPU in %d, runnable in %d samples;", k, mx[k], mt[k], away[k], run[k])
			printf "vtg-bench-watch: method=%s job=%s samples=%d first=%s last=%s longest gap %.2f s after t=%s;%s (cpuK=entries/overrun/drain thread state@cpu)\n", m, j, NR, ut[1], ut[NR], gap, gat, s }' /tmp/watch.log
}

# mark WORD METHOD JOB: tell L1 (bench.ctl) where a measured window begins or ends
mark() {
	echo "$*" >&3
	# L1 answers once it has sampled (at most 30 s: a bench without it goes on)
	read -t 30 -r ack <&3 || echo "vtg-bench-info: no ack from L1 for $*"
}

# ring_lost DIR: overrun + dropped events of every CPU of a tracefs instance
ring_lost() {
	cat "$1"/per_cpu/cpu*/stats | awk '/^overrun:|^dropped events:/ { s += $NF } END { print s + 0 }'
}

# load MARKER RATE COUNT: run the load, sets written and usec; 1 when it
# did not end within the job's bound (jb)
load() {
	timeout "$jb" bench_load "$1" "$2" "$3" "$size" > /tmp/load.out 2>&1
	lrc=$?
	written=$(awk -F'[ =]' '/^load/ { s += $5 } END { print s + 0 }' /tmp/load.out)
	usec=$(awk -F'[ =]' '/^load/ { if ($7 > m) m = $7 } END { print m + 0 }' /tmp/load.out)
	load_ns=$(awk -F'[ =]' '/^load/ { s += $9 } END { print s * 1000 }' /tmp/load.out)
	# bench_load: 1 when a write failed (counted as not written), else killed
	[ "$lrc" -le 1 ]
}

# bench.ctl: "go" from L1 for the agent, window marks to L1 for every method
# (a virtio-serial port opens once: one read-write descriptor for both)
port=
for v in /sys/class/virtio-ports/*; do
	[ "$(cat "$v/name")" = bench.ctl ] && port=/dev/${v##*/}
done
[ -n "$port" ] || { echo "vtg-bench-error: no bench.ctl port"; exit 1; }
exec 3<> "$port"

# setup_method: get $method ready for job $j (a method is set up and torn down
# around each of its jobs, so that the methods can take turns); 1 when it failed
setup_method() {
	case "$method" in
	vtrace)
		insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 || { echo "vtg-bench-error: insmod"; exit 1; }
		I=$T/instances/vtrace
		echo sched:sched_process_exec > $D/events
		echo "$bufkb" > $I/buffer_size_kb
		[ "$j" != 1 ] || idle_switches
		;;
	splice)
		I=$T/instances/bench
		;;
	stuck)
		I=$T/instances/bench-stuck
		rmdir $I 2>/dev/null
		mkdir $I && echo "$bufkb" > $I/buffer_size_kb && echo 0 > $I/tracing_on ||
			{ echo "vtg-bench-error: stuck"; exit 1; }
		;;
	none)
		# the load alone, nobody reading: the baseline of the exits and
		# of the guest's busy time
		I=$T/instances/bench-none
		rmdir $I 2>/dev/null
		mkdir $I && echo "$bufkb" > $I/buffer_size_kb || { echo "vtg-bench-error: none"; exit 1; }
		;;
	agent)
		I=$T
		chroot /host modprobe vmw_vsock_virtio_transport || { echo "vtg-bench-error: vsock"; exit 1; }
		echo "$bufkb" > $T/buffer_size_kb
		# cwd: a writable tmpfs of the outer root (the rest is read-only 9p)
		chroot /host sh -c 'cd /tmp && exec trace-cmd agent --notimeout' > /tmp/agent.log 2>&1 &
		apid=$!
		# ready once it waits in accept() (it loads from the outer root over 9p)
		t0=$(now)
		wait_for "$wait" grep -q accept /proc/$apid/wchan 2>/dev/null
		echo "vtg-bench-info: trace-cmd agent pid $apid waits in $(cat /proc/$apid/wchan) after $(($(now) - t0)) s"
		echo 0 > $T/tracing_on
		grep -q accept /proc/$apid/wchan 2>/dev/null ||
			{ jb=$wait; fail "trace-cmd agent to listen (accept)"; return 1; }
		;;
	net)
		I=$T
		[ -z "$net_up" ] || return 0
		net_up=1
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
}

# window COMM_PATTERN [SUB_PATTERN]: the measured window of job $j, the same
# for every method: L1's marks around it (mark), the interrupts, and
# cpu_ns before and after the load ($I/trace_marker, $rate, $count) and
# SETTLE seconds; the function_graph profile (PROF) of vtrace's and splice's
# threads over it.  Sets c0/c1 (the CPU of the threads COMM_PATTERN
# matches), d0/d1 (of those SUB_PATTERN matches too), s0/s1 (the switches
# of the SUB_PATTERN threads, or of all when there is none), w0/w1 (those of
# the others, with SUB_PATTERN), k0/k1, b0/b1 (kworkers, busy), kg (kworkers
# gone), i0/i1 and
# lf (the load did not end within the job's bound)
window() {
	local pat=$1 sub=${2:-}
	case "$method" in vtrace|splice) prof_start "$pat" ;; esac
	mark exits-begin $method $j
	i0=$(irqs)
	set -- $(cpu_ns "$pat" "$sub")
	c0=$1 d0=$2 k0=0 b0=$4 w0=$(($5 - $6)) s0=$6 kl0=$8 st0=$9
	[ -n "$sub" ] || w0=0 s0=$5
	watch_start
	load $I/trace_marker "$rate" "$count" || { fail "the load (bench_load) to end"; lf=1; }
	sleep "$settle"
	watch_end
	set -- $(kprev=$kl0; cpu_ns "$pat" "$sub")
	c1=$1 d1=$2 k1=$3 b1=$4 w1=$(($5 - $6)) s1=$6 kg=$7 st1=$9
	[ -n "$sub" ] || w1=0 s1=$5
	i1=$(irqs)
	mark exits-end $method $j
	case "$method" in vtrace|splice) prof_end ;; esac
}

# run_job RATExCOUNT: job $j of $method; 1 when one of its waits expired
run_job() {
	rate=${1%x*}
	count=${1#*x}
	jb=$(job_bound "$method" "$rate" "$count")
	lf= kg=0 moved=0 d0=0 d1=0 w0=0 w1=0 s0=0 s1=0 k0=0 k1=0 b0=0 b1=0 c0=0 c1=0 lost=0
	case "$method" in
	vtrace)
		echo 1 > $D/enable || { echo "vtg-bench-error: enable"; exit 1; }
		sleep 1
		window 'vtrace-*' 'vtrace-cpu*'
		echo 0 > $D/enable
		[ -z "$lf" ] || return 1
		lost=$(awk '$2 == "yes" || $2 == "no" { s += $9 + $10 } END { print s + 0 }' $D/status)
		moved=$(awk '$2 == "yes" { s += $5 } END { print s + 0 }' $D/status)
		;;
	stuck)
		# a recorder that never starts: nobody turns tracing_on on
		wait_for "$jb" tracing_is_on $I || { fail "tracing_on 1 in $I"; return 1; }
		;;
	none)
		# no process is named so: the method's CPU and switches stay 0
		window 'bench_none'
		lost=0
		[ -z "$lf" ] || return 1
		;;
	splice)
		rmdir $I 2>/dev/null
		mkdir $I && echo "$bufkb" > $I/buffer_size_kb && echo x86-tsc > $I/trace_clock
		bench_splice $I vtrace > /tmp/splice.out 2>&1 &
		sp=$!
		sleep 1
		l0=$(ring_lost $I)
		window 'bench_splice'
		lost=$(( $(ring_lost $I) - l0 ))
		stop_pid $sp
		[ -z "$lf" ] || return 1
		moved=$(awk -F'[ =]' '/^splice cpu/ { s += $5 } END { print s + 0 }' /tmp/splice.out)
		;;
	agent)
		aj=$((aj + 1))
		echo "vtg-bench-agent-ready: $aj"
		read -t "$jb" -r cmd <&3 || { fail "\"go\" from L1 on bench.ctl"; return 1; }
		t0=$(now)
		wait_for "$jb" tracing_is_on $T
		echo "vtg-bench-info: agent job $aj: tracing_on $on after $(($(now) - t0)) s"
		[ "$on" = 1 ] || { fail "tracing_on 1 (trace-cmd record -A's recorders; $cmd)"; return 1; }
		sleep 1
		l0=$(ring_lost $I)
		window 'trace-cmd'
		lost=$(( $(ring_lost $I) - l0 ))
		[ -z "$lf" ] || return 1
		;;
	net)
		echo 0 > $T/tracing_on
		# TCP for the data too (-t); raw pages in the file (no compression)
		chroot /host sh -c "cd /tmp && exec trace-cmd record --notimeout -N 10.0.2.2:$netport -t \
			--compression none -C x86-tsc -e sched:sched_process_exec" > /tmp/net.log 2>&1 &
		rp=$!
		t0=$(now)
		wait_for "$jb" eval "tracing_is_on $T || ! kill -0 $rp 2>/dev/null"
		echo "vtg-bench-info: net job $j: tracing_on $on after $(($(now) - t0)) s"
		if [ "$on" != 1 ]; then
			sed 's/^/vtg-bench-net-log: /' /tmp/net.log
			kill -0 $rp 2>/dev/null && fail "tracing_on 1 (trace-cmd record -N's recorders)" ||
				fail "tracing_on 1 (trace-cmd record -N ended)"
			stop_pid $rp KILL
			return 1
		fi
		sleep 1
		l0=$(ring_lost $I)
		window 'trace-cmd'
		lost=$(( $(ring_lost $I) - l0 ))
		# stop: the rest is flushed and sent, then the connection closes
		kill -INT $rp 2>/dev/null
		t0=$(now)
		wait_for "$jb" eval "! kill -0 $rp 2>/dev/null" ||
			{ fail "trace-cmd record -N to stop (SIGINT)"; kill -KILL $rp; lf=1; }
		wait $rp
		echo "vtg-bench-info: net job $j: trace-cmd record stopped after $(($(now) - t0)) s, exit $?"
		grep -i "lost\|error\|fail" /tmp/net.log | sed 's/^/vtg-bench-net-log: /'
		[ -z "$lf" ] || return 1
		;;
	esac
	say "method=$method job=$j rate=$rate count=$count size=$size written=$written usec=$usec cpu_ns=$((c1 - c0)) drain_ns=$((d1 - d0)) ctl_switches=$((w1 - w0)) drain_switches=$((s1 - s0)) kworker_ns=$((k1 - k0)) kworker_gone=$kg busy_ns=$((b1 - b0)) steal_ns=$((st1 - st0)) load_ns=$load_ns lost=$lost moved=$moved"
	echo "vtg-bench-irq: method=$method job=$j $(irq_delta "$i0" "$i1")"
	if [ "$method" = agent ]; then echo 0 > $T/tracing_on; echo "vtg-bench-done: $aj"; fi
}

# agent_alone: no trace-cmd process runs but the agent itself ($apid)
agent_alone() {
	for p in /proc/[0-9]*; do
		read -r c < "$p/comm" 2>/dev/null || continue
		[ "$c" != trace-cmd ] || [ "${p#/proc/}" = "$apid" ] || return 1
	done
}

# teardown_method: undo setup_method; sets sent, the bytes the method gave
# its data ports since its set-up (vtrace: the idle phase's too)
teardown_method() {
	sent=0
	case "$method" in
	vtrace)	sed 's/^/vtg-bench-status: /' $D/status
		sent=$(( ${idle_moved:-0} + $(awk '$2 == "yes" { s += $5 } END { print s + 0 }' $D/status) ))
		idle_moved=0
		rmmod vtrace_guest ;;
	splice)	rmdir $I
		sent=$(awk -F'[ =]' '/^splice cpu/ { s += $5 } END { print s + 0 }' /tmp/splice.out) ;;
	none|stuck)	rmdir $I ;;
	agent)	sed 's/^/vtg-bench-agent-log: /' /tmp/agent.log
		# the session (a child of the agent, with its recorders) ends
		# when L1's trace-cmd record has taken the data and closed
		wait_for "${jb:-$wait}" agent_alone ||
			echo "vtg-bench-info: agent job $j: its session still runs after ${jb:-$wait} s"
		stop_pid $apid ;;
	esac
}

# Round r runs job r of every method (the main runs, then the sweep steps),
# the methods in the given order rotated by r - 1, so that no method is
# always first (after the boot) or last in a round: a drift of the
# machine's load spreads over all of them. A method that failed is
# skipped from then on.
aj=0 failed= net_up= r=0
nm=$(echo "$methods" | tr : "\n" | grep -c .)
for job in $jobs; do
	r=$((r + 1))
	order=$(echo "$methods" | tr : "\n" | awk -v k=$(((r - 1) % nm)) '{ m[NR - 1] = $0 }
		END { for (i = 0; i < NR; i++) printf "%s ", m[(i + k) % NR] }')
	echo "vtg-bench-order: run=$r $order"
	for method in $order; do
		case " $failed " in *" $method "*) continue ;; esac
		j=$r
		read -r upm _ < /proc/uptime
		echo "vtg-bench-info: method $method job $j ($job), size $size, settle $settle, buffer ${bufkb} KiB, $(nproc) CPUs"
		if ! { setup_method && run_job "$job"; }; then
			failed="$failed $method"
		fi
		teardown_method
		# the job's end for L1 (before the next job begins): it counts
		# what the data ports' files grew by, once they hold the SENT
		# bytes, and which trace-cmd listen files came (net)
		mark job-end $method $j $sent
		read -r up _ < /proc/uptime
		echo "vtg-bench-time: method=$method job=$j s=${upm%.*}..${up%.*} (guest uptime)"
	done
done
if [ "$prof" = 1 ]; then
	mark kallsyms-begin
	cat /proc/kallsyms >&3
	mark kallsyms-end
fi
echo "vtg-bench-end"
