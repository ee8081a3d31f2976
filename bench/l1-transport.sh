#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in L1 by bench/transport.sh: one L2 per method, the same marker load in each.
#   ARG: key=value pairs joined by commas (no spaces: it travels on L1's kernel
#   command line): methods=vtrace:splice:agent size=BYTES rate=PER_CPU
#   count=PER_CPU runs=N sweep=R1:R2:... scount=PER_CPU settle=SEC bufkb=KIB
# Writes $VTRACE_OUT/results.txt: the guests' "vtg-bench:" lines, plus
# "vtg-bench-file:" lines: the trace data bytes (ring-buffer pages) of the
# guest trace files L1 received, for the methods agent and net, and
# "vtg-bench-port:" lines: the bytes the data ports' files (vtrace, splice)
# grew by in L1 up to each job's end (see port_watch).
# Every method's data lands in L1's tmpfs (/tmp): the agent's and -N's
# trace files, and the host ends of the virtio-serial data ports, which
# QEMU would otherwise write over the 9p share of the results folder
# (a slower sink, which made the port methods look costlier in the guest).
# the initramfs bench/transport.sh built (testbed/build-l2.sh's may be rebuilt by others meanwhile)
L2_INITRD=$VTRACE_PROJ/build/bench/initramfs-l2-$(uname -r).cpio.gz
. "$VTRACE_PROJ/testbed/lib.sh"
set -u
methods=vtrace:splice:agent size=256 rate=2000 count=2000 runs=1 sweep= scount=4000 settle=2 bufkb=512
IFS=, read -ra kv <<< "${1:-}"
for w in "${kv[@]}"; do
	case "$w" in
	methods=*|size=*|rate=*|count=*|runs=*|sweep=*|scount=*|settle=*|bufkb=*) eval "${w%%=*}=\${w#*=}" ;;
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
netport=12346
garg="$size,$settle,$bufkb,$netport$jobs"
njobs=$(( runs + $(wc -w <<< "${sweep//:/ }") ))
res=$VTRACE_OUT/results.txt
: > "$res"
echo "# L1 $(uname -r), jobs per method: $njobs ($garg)"
modprobe kvm_amd || exit 1
# the L2's life: every method's jobs at 3x their nominal length, plus 90 s per job
nmethods=$(wc -w <<< "${methods//:/ }")
tmo=$(( 300 + nmethods * (runs * count * 3 / rate + njobs * 90 + 30) ))
for r in ${sweep//:/ }; do tmo=$(( tmo + nmethods * 3 * (r == 0 ? 4 * scount / 1000 : 2) )); done

# wait_console NAME PATTERN SECONDS
wait_console() {
	local i
	for ((i = 0; i < $3 * 2; i++)); do
		grep -q "$2" "$VTRACE_OUT/$1/console.log" 2>/dev/null && return 0
		kill -0 "$L2_PID" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# port_watch: follow the guest's console; at each "vtg-bench: method=M job=J"
# line, write how many bytes the data ports' files in $pdir grew by since
# the previous line, then punch out what they hold (their size stays, their
# memory goes: L1 has 3 GB and one 50 MB job moves ~57 MB).  Bytes still in
# flight at a job's line are counted with the next; "method=rest" at the end.
port_watch() {
	local seen=0 last=0 tot over= mj
	while :; do
		kill -0 "$L2_PID" 2>/dev/null || over=1
		# (a here-string: L1 has no /dev/fd for a process substitution)
		while read -r mj; do
			[ -n "$mj" ] || continue
			tot=$(port_bytes 1)
			echo "vtg-bench-port: $mj bytes=$((tot - last))" >> "$res"
			last=$tot
			seen=$((seen + 1))
		done <<< "$(sed -n 's/\r$//; s/^vtg-bench: \(method=[^ ]* job=[^ ]*\) .*/\1/p' \
			    "$VTRACE_OUT/$name/console.log" 2>/dev/null | tail -n +$((seen + 1)))"
		[ -z "$over" ] || break
		sleep 1
	done
	echo "vtg-bench-port: method=rest job=0 bytes=$(( $(port_bytes) - last ))" >> "$res"
}

# port_bytes [PUNCH]: total size of the data ports' files; PUNCH: free their blocks
port_bytes() {
	local f s tot=0
	for f in "$pdir"/cpu*; do
		[ -f "$f" ] || continue
		s=$(stat -c %s "$f")
		tot=$((tot + s))
		[ -z "${1:-}" ] || fallocate -p -o 0 -l "$s" "$f" ||
			echo "# cannot punch $f" >&2
	done
	echo $tot
}

# dat_bytes FILE: bytes of trace data (ring-buffer pages, all CPUs) in a trace.dat
dat_bytes() {
	trace-cmd dump --flyrecord -i "$1" 2>/dev/null |
		awk '/\[id, data offset and size\]/ { s += $3 } /\[offset, size of cpu/ { s += $2 } END { print s + 0 }'
}

# agent_jobs: for each agent job the guest announces, run trace-cmd record -A
# in L1, tell the guest "go" on bench.ctl, stop the recording once it is done
agent_jobs() {
	local name=$1 fifo=$2 tdir=/tmp/bench-agent j rec try f
	for ((j = 1; j <= njobs; j++)); do
		wait_console $name "vtg-bench-agent-ready: $j\\b" 900 || { echo "# agent job $j: guest not ready"; return 1; }
		for ((try = 1; try <= 10; try++)); do
			rm -rf $tdir
			mkdir -p $tdir
			# host options before -A, the guest's after it
			# --notimeout: the guest, slow here, answers after trace-cmd's 5 s message timeout
			(cd $tdir && exec trace-cmd record --notimeout --tsync-interval -1 -o $tdir/trace.dat \
				--compression none -C x86-tsc -e sched:sched_process_exec \
				-A @3 --compression none -C x86-tsc -e sched:sched_process_exec) \
				> "$VTRACE_OUT/$name/record-$j.log" 2>&1 &
			rec=$!
			sleep 5
			kill -0 $rec 2>/dev/null && break
			wait $rec
			echo "# agent job $j: trace-cmd record ended at once (try $try): $(tail -2 "$VTRACE_OUT/$name/record-$j.log" | tr '\n' ' ')"
			sleep 3
		done
		echo "go $j" > $fifo.in
		wait_console $name "vtg-bench-done: $j\\b" 900 || echo "# agent job $j did not finish"
		kill -INT $rec 2>/dev/null
		wait $rec
		ls -l $tdir >> "$VTRACE_OUT/$name/record-$j.log"
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
	trace-cmd listen -p $netport -d $ndir > "$VTRACE_OUT/listen.txt" 2>&1 &
	lpid=$!
	;;
esac
pdir=/tmp/bench-ports
rm -rf $pdir
echo "# L2 start $(date +%T)"
l2_start $name /tests/bench_transport.sh --hostroot --vtrace-args --cpus 2 --timeout "$tmo" \
	--data-dir $pdir --qemu "$qemu" --arg "$methods,$garg"
port_watch &
pwatch=$!
cat $fifo.out > /dev/null &
drain=$!
case ":$methods:" in *:agent:*) agent_jobs $name $fifo ;; esac
rc=0
l2_wait || rc=$?
kill $drain 2>/dev/null
wait $pwatch
rm -rf $pdir
echo "# L2 end $(date +%T), qemu exit $rc"
if [ -n "$lpid" ]; then
	# one file per guest recording, in the order the jobs ran
	j=0
	for f in $(ls -tr $ndir/*.dat 2>/dev/null); do
		j=$((j + 1))
		echo "vtg-bench-file: method=net job=$j bytes=$(dat_bytes "$f")" >> "$res"
	done
	ls -l $ndir >> "$VTRACE_OUT/listen.txt"
	kill $lpid 2>/dev/null
	wait $lpid
	rm -rf $ndir
fi
sed -n 's/\r$//; /^vtg-bench/p' "$VTRACE_OUT/$name/console.log" | tee -a "$res" | sed 's/^/# /'
save_dmesg l1-dmesg
exit 0
