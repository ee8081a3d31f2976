#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in L1 by bench/transport.sh: one L2 per method, the same marker load in each.
#   ARG: key=value pairs joined by commas (no spaces: it travels on L1's kernel
#   command line): methods=vtrace:splice:agent size=BYTES rate=PER_CPU
#   count=PER_CPU runs=N sweep=R1:R2:... scount=PER_CPU settle=SEC bufkb=KIB
#   prof=0|1 wait=SEC (a method's set-up or stop, at most) from=K (run only
#   the rounds K and later: bench/transport.sh's re-run of what an L1 reset
#   lost; the guest numbers them from 1 again)
# Writes $VTRACE_OUT/results.txt as the jobs end (an L1 reset keeps the rows
# of the finished ones): the guests' "vtg-bench" lines, plus
# "vtg-bench-file:" lines: the trace data bytes (ring-buffer pages) of the
# guest trace files L1 received, for the methods agent and net, and
# "vtg-bench-port:" lines: the bytes the data ports' files (vtrace, splice)
# grew by in L1 for each job (see job_end), and "vtg-bench-exits:"
# lines: what each job's window (the guest marks it on bench.ctl) cost L1:
# the VM's exits (kvm_exit events, by exit reason; KVM's debugfs counters,
# summed over the vCPUs, which miss the exits KVM's fast path handles) and
# the run time of QEMU's vCPU threads, its other threads and the vhost
# kthreads (see ctl_watch). With prof=1 also exits-M-J.hist (L1's kvm_exit
# by exit reason and guest RIP over the window) and the guest's kallsyms.
# Every method's data lands in L1's tmpfs (/tmp): the agent's and -N's
# trace files, and the host ends of the virtio-serial data ports, which
# QEMU would otherwise write over the 9p share of the results folder
# (a slower sink, which made the port methods look costlier in the guest).
# the initramfs bench/transport.sh built (testbed/build-l2.sh's may be rebuilt by others meanwhile)
L2_INITRD=$VTRACE_PROJ/build/bench/initramfs-l2-$(uname -r).cpio.gz
. "$VTRACE_PROJ/testbed/lib.sh"
set -u
methods=vtrace:splice:agent size=256 rate=2000 count=2000 runs=1 sweep= scount=4000 settle=2 bufkb=512
prof=0 wait=600 from=1
IFS=, read -ra kv <<< "${1:-}"
for w in "${kv[@]}"; do
	case "$w" in
	methods=*|size=*|rate=*|count=*|runs=*|sweep=*|scount=*|settle=*|bufkb=*|prof=*|wait=*|from=*) eval "${w%%=*}=\${w#*=}" ;;
	*) echo "l1-transport: unknown $w" >&2; exit 2 ;;
	esac
done
jobs=
for ((i = 0; i < runs; i++)); do jobs+=",${rate}x$count"; done
# a sweep step: 2 s of markers at its rate, at least SCOUNT; rate 0
# (as fast as the load goes) 4 x SCOUNT
for r in ${sweep//:/ }; do
	c=$(( r == 0 ? 4 * scount : (2 * r > scount ? 2 * r : scount) ))
	jobs+=",${r}x$c"
done
# from=K: drop the first K - 1 rounds
IFS=, read -ra jl <<< "${jobs#,}"
jobs=
for ((i = from - 1; i < ${#jl[@]}; i++)); do jobs+=",${jl[i]}"; done
netport=12346
garg="$size,$settle,$bufkb,$netport,$prof,$wait$jobs"
njobs=$(( ${#jl[@]} - from + 1 ))
res=$VTRACE_OUT/results.txt
: > "$res"
echo "# L1 $(uname -r), jobs per method: $njobs ($garg)"
modprobe kvm_amd || exit 1
# the agent and net methods' trace-cmd record switches this event while the
# guest runs: hold it (testbed/lib.sh), no text patch then
l1_hold_events sched/sched_process_exec || echo "# could not hold sched_process_exec"
# the L2's life: every method's jobs at 3x their nominal length, plus 90 s per job
nmethods=$(wc -w <<< "${methods//:/ }")
tmo=$(( 300 + nmethods * (runs * count * 3 / rate + njobs * 90 + 30) ))
for r in ${sweep//:/ }; do tmo=$(( tmo + nmethods * 3 * (r == 0 ? 4 * scount / 1000 : 2) )); done

# port_watch: follow the guest's console; copy each of its "vtg-bench" lines
# to $res as it comes (whole lines only: a row is there once its job ended).
# What the data ports carried for each job is counted at the job's end
# mark, by ctl_watch (job_end).
port_watch() {
	local seen=0 over= line
	while :; do
		kill -0 "$L2_PID" 2>/dev/null || over=1
		# (a here-string: L1 has no /dev/fd for a process substitution)
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			seen=$((seen + 1))
			echo "$line" >> "$res"
		done <<< "$(console_lines "$over" | tail -n +$((seen + 1)))"
		[ -z "$over" ] || break
		sleep 1
	done
}

# console_lines [END]: the guest's "vtg-bench" lines so far, without a last
# line still being written (unless END: the guest has ended); a line the
# guest's kernel wrote into is mended (console-rows.awk)
console_lines() {
	local f=$VTRACE_OUT/$name/console.log n
	n=$(stat -c %s "$f" 2>/dev/null) || return 0
	head -c "$n" "$f" | if [ -n "$1" ] || [ -z "$(head -c "$n" "$f" | tail -c 1)" ]; then
		cat
	else
		sed '$d'
	fi | awk -f "$VTRACE_PROJ/bench/console-rows.awk"
}

# port_bytes [PUNCH]: total size of the data ports' files; PUNCH: free their blocks
port_bytes() {
	local f s tot=0
	for f in "$pdir"/cpu*; do
		[ -f "$f" ] || continue
		s=$(stat -c %s "$f")
		tot=$((tot + s))
		[ -z "${1:-}" ] || [ "$s" -eq 0 ] || fallocate -p -o 0 -l "$s" "$f" ||
			echo "# cannot punch $f" >&2
	done
	echo $tot
}

# l1_sample: the VM's exit counters (KVM debugfs, all vCPUs; one VM runs) and
# the CPU time (ns) of QEMU's vCPU threads, its other threads (process total
# minus the vCPUs: threads that ended count too) and the vhost kthreads.
# CPU times in ticks (/proc/PID/stat utime + stime), 10 ms each.
kvm_stats="kvm_exits io_exits mmio_exits irq_exits halt_exits irq_window_exits irq_injections"
kvm_stats+=" hypercalls insn_emulation halt_wakeup"
# ticks FILE: utime + stime of a /proc stat file (the comm may hold spaces)
ticks() {
	local l w
	read -r l < "$1" 2>/dev/null || { echo 0; return; }
	read -ra w <<< "${l##*) }"
	echo $(( w[11] + w[12] ))
}
l1_sample() {
	local f v qpid t c all=0 vcpu=0 vhost=0 out=
	for f in $kvm_stats; do
		v=0
		read -r v < /sys/kernel/debug/kvm/${f#kvm_} 2>/dev/null
		out+="$v "
	done
	read -r qpid < "$VTRACE_OUT/$name/qemu.pid" 2>/dev/null
	if [ -n "$qpid" ]; then
		all=$(ticks /proc/$qpid/stat)
		for t in /proc/$qpid/task/*; do
			read -r c < "$t/comm" 2>/dev/null || continue
			case "$c" in "CPU "*) vcpu=$((vcpu + $(ticks "$t/stat"))) ;; esac
		done
	fi
	for t in /proc/[0-9]*; do
		read -r c < "$t/comm" 2>/dev/null || continue
		case "$c" in vhost-*) vhost=$((vhost + $(ticks "$t/stat"))) ;; esac
	done
	echo "$out$((vcpu * 10000000)) $(((all - vcpu) * 10000000)) $((vhost * 10000000))"
}

# job_end M J SENT: the guest's mark after job J of method M, sent before its
# next job begins (it waits for the answer): write "vtg-bench-port: method=M
# job=J bytes=N", N what the data ports' files grew by since the previous
# mark, once they have grown by SENT (the bytes the guest gave the ports;
# what it gave is written by QEMU as it takes it, so wait at most 20 s), and
# punch out what they hold (their size stays, their memory goes: L1 has 3 GB
# and one 50 MB job moves ~57 MB).  Net: the trace-cmd listen files made
# since are job J's (renamed net-J.*.dat: listen creates a connection's
# file when the guest's trace-cmd record connects, and fills it once that
# ends), counted when listen's process for it has closed it (net_file).
job_end() {
	local last=0 tot i f n=0
	read -r last < $pdir.last 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		tot=$(port_bytes)
		[ $((tot - last)) -lt "$3" ] || break
		sleep 0.2
	done
	[ $((tot - last)) -ge "$3" ] ||
		echo "# job_end $1 $2: the ports grew by $((tot - last)) of the $3 bytes the guest sent, after 20 s"
	tot=$(port_bytes 1)
	echo "$tot" > $pdir.last
	echo "vtg-bench-port: method=$1 job=$2 bytes=$((tot - last))" >> "$res"
	[ "$1" = net ] || return 0
	for f in $ndir/trace.*.dat; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		mv "$f" "$ndir/net-$2.$n.dat"
		net_file "$ndir/net-$2.$n.dat" $2 &
	done
	[ $n -gt 0 ] || echo "vtg-bench-file: method=net job=$2 bytes=0 files=0" >> "$res"
}

# net_file FILE J: once no process holds FILE open (trace-cmd listen's
# process for the connection has written it: 1 s, stop its readers, 1 s,
# the file; at most 10 minutes here), write its trace data bytes as job J's
# "vtg-bench-file:" line, then remove it
net_file() {
	local i fd held
	for ((i = 0; i < 1200; i++)); do
		held=
		for fd in /proc/[0-9]*/fd/*; do
			# (-ef: the same file; no command started per descriptor)
			[ ! "$fd" -ef "$1" ] || { held=1; break; }
		done
		[ -n "$held" ] || break
		sleep 0.5
	done
	[ -z "$held" ] || echo "# net job $2: $1 still open after 10 minutes"
	echo "vtg-bench-file: method=net job=$2 bytes=$(dat_bytes "$1") files=1 after_s=$((i / 2))" >> "$res"
	ls -l "$1" >> "$VTRACE_OUT/listen.txt"
	rm -f "$1"
}

# ctl_watch: read the guest's lines on bench.ctl: at "exits-begin M J" and
# "exits-end M J" sample the counters (l1_sample), count L1's kvm_exit
# events by exit reason in between (a hist trigger; with prof=1 by guest RIP
# too, kept in exits-M-J.hist), answer "ack" (the guest waits for it, so
# that the window holds its work only), and at the end write a
# "vtg-bench-exits:" line: exits=N (kvm_exit events), xR=N per SVM exit
# reason R, and the differences of the counters.  The guest's kallsyms
# (prof=1) go to kallsyms.txt.
ctl_watch() {
	local w m j a b i out names ev=/sys/kernel/tracing/events/kvm/kvm_exit
	local key='hist:keys=exit_reason:sort=hitcount.descending'
	[ "$prof" != 1 ] || key='hist:keys=exit_reason,guest_rip:sort=hitcount.descending:size=8192'
	names="$kvm_stats l1_vcpu_ns l1_qemu_ns l1_vhost_ns"
	# One trigger for the whole run, paused outside the windows: adding or
	# removing it switches kvm_exit's tracepoint, a text patch of L1's
	# hottest path while a guest runs (the stale-text stalls of
	# Documentation/testbed.rst); pause, continue and clear patch nothing.
	echo "$key:pause" > $ev/trigger
	while read -r w m j w2; do
		case "$w" in
		exits-begin)
			echo "$key:clear" >> $ev/trigger
			echo "$key:cont" >> $ev/trigger
			a=($(l1_sample))
			echo ack > $fifo.in ;;
		exits-end)
			b=($(l1_sample))
			echo "$key:pause" >> $ev/trigger
			cat $ev/hist > "$VTRACE_OUT/exits-$m-$j.hist"
			echo ack > $fifo.in
			out="vtg-bench-exits: method=$m job=$j $(awk '
				/^\{ exit_reason:/ { r = $0; sub(/.*exit_reason: */, "", r); sub(/[ ,}].*/, "", r)
					n = $NF; t += n; x[r] += n }
				END { printf "exits=%d", t; for (r in x) printf " x%s=%d", r, x[r] }' \
				"$VTRACE_OUT/exits-$m-$j.hist")"
			i=0
			for w in $names; do
				out+=" $w=$(( ${b[i]:-0} - ${a[i]:-0} ))"
				i=$((i + 1))
			done
			echo "$out" >> "$res" ;;
		job-end)
			job_end $m $j ${w2:-0}
			echo ack > $fifo.in ;;
		kallsyms-begin)
			sed '/^kallsyms-end/q' > "$VTRACE_OUT/kallsyms.txt" ;;
		esac
	done < $fifo.out
}

# dat_bytes FILE: bytes of trace data (ring-buffer pages, all CPUs) in a trace.dat
dat_bytes() {
	trace-cmd dump --flyrecord -i "$1" 2>/dev/null |
		awk '/\[id, data offset and size\]/ { s += $3 } /\[offset, size of cpu/ { s += $2 } END { print s + 0 }'
}

# stop_rec PID: stop trace-cmd record (SIGINT: it flushes), SIGKILL after 60 s
stop_rec() {
	local i
	kill -INT "$1" 2>/dev/null
	for ((i = 0; i < 120; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
	kill -0 "$1" 2>/dev/null && { echo "# trace-cmd record $1 did not stop: SIGKILL"; kill -KILL "$1"; }
	wait "$1"
}

# agent_jobs: for each agent job the guest announces, run trace-cmd record -A
# in L1, tell the guest "go" on bench.ctl (it then waits for tracing_on),
# start the recording again if it ends at once, stop it once the job is done.
# The guest bounds each of its waits (a job's bound, from its size) and says
# "vtg-bench-fail: method=agent" when one expires: then stop, as the guest
# goes on with its next method. Waits here are bounded by the L2's life only.
agent_jobs() {
	local name=$1 fifo=$2 tdir=/tmp/bench-agent j rec try f i
	local failed='vtg-bench-fail: method=agent '
	for ((j = 1; j <= njobs; j++)); do
		l2_wait_console $name "vtg-bench-agent-ready: $j\\b\\|$failed" $tmo || { echo "# agent job $j: guest not ready"; return 1; }
		grep -q "$failed" "$VTRACE_OUT/$name/console.log" && { echo "# agent: the guest gave up (job $j)"; return 1; }
		for ((try = 1; try <= 5; try++)); do
			rm -rf $tdir
			mkdir -p $tdir
			# host options before -A, the guest's after it
			# --notimeout: the guest, slow here, answers after trace-cmd's 5 s message timeout
			(cd $tdir && exec trace-cmd record --notimeout --tsync-interval -1 -o $tdir/trace.dat \
				--compression none -C x86-tsc -e sched:sched_process_exec \
				-A @3 --compression none -C x86-tsc -e sched:sched_process_exec) \
				> "$VTRACE_OUT/$name/record-$j.log" 2>&1 &
			rec=$!
			[ $try -gt 1 ] || echo "go $j" > $fifo.in
			for ((i = 0; i < 10; i++)); do
				kill -0 $rec 2>/dev/null || break
				sleep 0.5
			done
			kill -0 $rec 2>/dev/null && break
			wait $rec
			echo "# agent job $j: trace-cmd record ended at once (try $try): $(tail -2 "$VTRACE_OUT/$name/record-$j.log" | tr '\n' ' ')"
			sleep 3
		done
		l2_wait_console $name "vtg-bench-done: $j\\b\\|$failed" $tmo || echo "# agent job $j did not finish"
		stop_rec $rec
		ls -l $tdir >> "$VTRACE_OUT/$name/record-$j.log"
		grep -q "$failed" "$VTRACE_OUT/$name/console.log" && { echo "# agent: the guest gave up (job $j)"; return 1; }
		for f in $tdir/trace-*.dat; do
			[ -f "$f" ] && echo "vtg-bench-file: method=agent job=$j bytes=$(dat_bytes "$f")" >> "$res"
		done
	done
	rm -rf $tdir
}

name=bench fifo=/run/bench-ctl
modprobe vhost_vsock || echo "# no vhost_vsock in L1"
rm -f $fifo.in $fifo.out
mkfifo $fifo.in $fifo.out
qemu="-device vhost-vsock-pci,guest-cid=3 -device virtio-serial-pci,id=bser -chardev pipe,id=bctl,path=$fifo -device virtserialport,bus=bser.0,chardev=bctl,name=bench.ctl"
ndir=/tmp/bench-net lpid=
case ":$methods:" in *:net:*)
	# the guest's trace-cmd record -N reaches L1's 127.0.0.1 at 10.0.2.2
	# (QEMU connects there for it: L1's loopback must be up)
	qemu+=" -nic user,model=virtio-net-pci"
	ip link set lo up || echo "# cannot bring L1's lo up"
	rm -rf $ndir
	mkdir -p $ndir
	# --debug: no time-out. Without it listen's process for a connection
	# gives up on the guest's metadata (its trace.dat's headers, event
	# formats, kallsyms: sent over the control connection before the
	# recording starts) after 5 s without a message ("reading client
	# -110"), throws the rest away, and writes a file with no headers,
	# which has no trace data for trace-cmd dump. Under TCG the guest's
	# trace-cmd pauses longer than that (2026-12-02: every job of a
	# default run; one of two at 2 MB). --debug is also the only way to
	# turn off that time-out in listen (it has no --notimeout): it
	# serves one connection at a time then (no fork), as the jobs come.
	trace-cmd listen --debug -p $netport -d $ndir > "$VTRACE_OUT/listen.txt" 2>&1 &
	lpid=$!
	;;
esac
pdir=/tmp/bench-ports
rm -rf $pdir $pdir.last
echo "# L2 start $(date +%T)"
l2_start $name /tests/bench_transport.sh --hostroot --vtrace-args --cpus 2 --timeout "$tmo" \
	--data-dir $pdir --qemu "$qemu" --arg "$methods,$garg"
port_watch &
pwatch=$!
ctl_watch &
drain=$!
case ":$methods:" in *:agent:*) agent_jobs $name $fifo ;; esac
rc=0
l2_wait || rc=$?
# ctl_watch ends at QEMU's end of bench.ctl; a little time for the kallsyms
for ((i = 0; i < 20; i++)); do kill -0 $drain 2>/dev/null || break; sleep 0.5; done
kill $drain 2>/dev/null
wait $pwatch
# what the ports carried after the guest's last job-end mark
last=0
read -r last < $pdir.last 2>/dev/null
echo "vtg-bench-port: method=rest job=0 bytes=$(( $(port_bytes) - last ))" >> "$res"
rm -rf $pdir $pdir.last
echo "# L2 end $(date +%T), qemu exit $rc"
if [ -n "$lpid" ]; then
	# job_end's net_file writes each job's file line, then removes the file
	for ((i = 0; i < 1200; i++)); do
		ls $ndir/net-*.dat > /dev/null 2>&1 || break
		sleep 0.5
	done
	ls -l $ndir >> "$VTRACE_OUT/listen.txt"
	kill $lpid 2>/dev/null
	wait $lpid
	rm -rf $ndir
fi
# (port_watch has copied them to $res)
sed -n 's/\r$//; /^vtg-bench/p' "$VTRACE_OUT/$name/console.log" | sed 's/^/# /'
save_dmesg l1-dmesg
exit 0
