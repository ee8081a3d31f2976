# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, the capture (sourced by l1/align*.sh inside L1).
#
# align_case NAME COUNT TSCWRITE...: run one guest per TSCWRITE argument, all at
# once, each emitting COUNT numbered marker pairs per vCPU around a
# hypercall (TSCWRITE 1: that guest adds 3e9 cycles to its vCPU 1's TSC
# half-way through, 0: its offsets never change), and record the host's
# kvm_hypercall, sched_switch and kvm_entry/kvm_exit events with trace-cmd
# (-C x86-tsc).  Prints one KTAP result, NAME-captured: every guest printed
# its end line and trace-cmd wrote host.dat.  The capture and the case's
# settings (NAME/case.env) stay in VTRACE_OUT, which L0 shares.
#
# What the capture proves is checked on L0 once L1 has ended
# (align-analyse.sh, run by run_vm_tests.sh through l0/SUITE.sh): one
# vtrace-merge of a capture took about 15 s in L1 under TCG and 0.6 s on
# L0, and the merges, checks and explains of align took 130 s of its 209 s
# in L1 (ci11, 2026-12-01), 170 s of the RT pair's 280 s.
#
# ALIGN_HISTORY=events (align_unstable): the way Documentation/workflow.rst
# tells a user to keep the offset history.  vtrace_host was loaded by the
# suite at L1's start with its default parameters and is not reloaded; the
# guest waits ALIGN_DELAY seconds after its boot before it traces, and the
# host starts "trace-cmd record -e vtrace_host ..." once the guest's VM
# exists (its creation records are then not in host.dat).  Otherwise a
# fresh vtrace_host sized for the capture is loaded before trace-cmd, and
# unloaded after it.  The module's tsc_offsets, stats and tsc_khz are kept
# beside host.dat either way.
#
# ALIGN_LATENCY=G (align.sh): guest gG also runs the late wake-up phases
# after its markers (l2/e2e_align.sh: timer task lat_hog, then lat_io,
# lat_cpuid and lat_msr beside loops of exits, lat_prio below a guest task
# of higher priority, lat_sirq, on its CPU 1, tracing scheduling and
# timers): when its console says so, the host pins that vCPU's thread to
# host CPU 1 and runs e2e_hog there (ALIGN_HOG: bursts, burst us, period
# us), later e2e_sirq (softirq work on that CPU: align_sirq), then
# vtrace_irqoff.ko keeps that CPU's interrupts off in sections (align_hirq),
# then L0 stops that CPU (L1's vCPU 1) in bursts (align_idle); their own
# counts go to NAME/hog.txt.  The host also records its interrupt and
# softirq events, its local timer interrupts and its hrtimers' starts and
# expiries (align_irq_events); the guest its local timer interrupts: the
# guest timer's path through both.
#
# ALIGN_FULL_FIRST=1 (align_unstable, with ALIGN_HISTORY=events): the user of
# the issue, who loaded vtrace_host at boot and records later: trace-cmd starts
# only once each guest's VM has used up its share of the module's default
# array ("vm PID NAME kept K dropped N" in stats with N > 0); the stats of
# that moment go to NAME/stats-before.
#
# ALIGN_PLAIN=G (align.sh): guest gG's QEMU runs without -name
# ...,debug-threads=on (L2_QEMU_PLAIN, testbed/lib.sh), as on a QEMU command
# line a kernel developer types: its vCPU threads keep QEMU's name, and
# vtrace-merge must tell them by their kvm_entry events, apart from the
# other guest's, of the same shape.  The thread ids of every guest's QEMU,
# read while it runs, go to its folder (qemu-tids) for align-analyse.sh.
#
# ALIGN_OLD_WAY: what align-analyse.sh does with the module's own file
# (refused: it must be refused as incomplete; file: it must order every
# sample too, and the capture paired wrongly on purpose must be refused).

align_case() {
	local name=$1 count=$2
	shift 2
	local tscwrites=("$@") guests=$#
	local dir=$VTRACE_OUT/$name g pids=() rc=0 hog=

	mkdir -p "$dir"
	# trace-cmd starts while the guests run: no text patch for its events
	align_irq_events
	l1_hold_events kvm/kvm_hypercall sched/sched_switch kvm/kvm_entry kvm/kvm_exit \
		"${ALIGN_IRQ_HOLD[@]}" ||
		ktap_diag "$name: could not hold L1's events (text patches while the guests run)"
	align_case_env "$name" "$count" "$guests"
	if [ "${ALIGN_HISTORY:-file}" = events ]; then
		align_start_events "$name" "$count" "${tscwrites[@]}"
	else
		align_start_file "$name" "$count" "${tscwrites[@]}"
	fi || {
		ktap_result 1 "$name-captured" "the guests or trace-cmd did not start"
		return
	}
	if [ -n "${ALIGN_LATENCY:-}" ]; then
		align_hog "$name-g$ALIGN_LATENCY" > "$dir/hog.txt" 2>&1 &
		hog=$!
	fi
	for ((g = 1; g <= guests; g++)); do
		wait "${pids[g - 1]}"
		echo $? > "$VTRACE_OUT/$name-g$g/exit"
	done
	[ -n "$hog" ] && wait "$hog"
	[ ${#ALIGN_TIDJOBS[@]} -eq 0 ] || wait "${ALIGN_TIDJOBS[@]}"
	kill -INT "$ALIGN_TC"
	wait "$ALIGN_TC"
	cp "/tmp/$name-host.dat" "$dir/host.dat" || rc=1
	cat /sys/kernel/debug/vtrace/tsc_offsets > "$dir/tsc_offsets"
	cat /sys/kernel/debug/vtrace/stats > "$dir/stats"
	cat /sys/kernel/debug/vtrace/tsc_khz > "$dir/khz"
	[ "${ALIGN_HISTORY:-file}" = events ] || rmmod vtrace_host

	for ((g = 1; g <= guests; g++)); do
		l2_ktap "$name-g$g" | grep -q '^ok 1 align_guest_done' && continue
		rc=1
		ktap_diag "guest g$g did not finish (QEMU exit $(cat "$VTRACE_OUT/$name-g$g/exit" 2>/dev/null)); the end of $VTRACE_OUT/$name-g$g/console.log:"
		tail -n 25 "$VTRACE_OUT/$name-g$g/console.log" | tr -d '\r' | while IFS= read -r l; do
			ktap_diag "  $l"
		done
	done
	ktap_result $rc "$name-captured"
}

# align_case_env NAME COUNT GUESTS: the case's settings, for align-analyse.sh
align_case_env() {
	{
		printf 'ALIGN_COUNT=%q\nALIGN_GUESTS=%q\n' "$2" "$3"
		printf 'ALIGN_HISTORY=%q\nALIGN_FULL_FIRST=%q\n' "${ALIGN_HISTORY:-file}" "${ALIGN_FULL_FIRST:-}"
		printf 'ALIGN_OLD_WAY=%q\nALIGN_LATENCY=%q\n' "${ALIGN_OLD_WAY:-refused}" "${ALIGN_LATENCY:-}"
		printf 'ALIGN_PLAIN=%q\n' "${ALIGN_PLAIN:-}"
	} > "$VTRACE_OUT/$1/case.env"
}

# align_irq_events: with ALIGN_LATENCY, the host also records its interrupt
# and softirq events (the late wake-ups' host_irq and host_softirq:
# align_sirq's phase), its local timer interrupts (a host cpu that runs
# takes one every tick, so their silence tells the host not running:
# align_idle's phase) and the starts and expiries of its hrtimers (KVM's
# timer of each vCPU: when the host fired the guest's timer, align_hirq's
# phase): trace-cmd's options in ALIGN_IRQ_OPTS, the events for
# l1_hold_events in ALIGN_IRQ_HOLD
align_irq_events() {
	local e
	ALIGN_IRQ_OPTS=() ALIGN_IRQ_HOLD=()
	[ -n "${ALIGN_LATENCY:-}" ] || return 0
	for e in irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit \
		irq_vectors/local_timer_entry timer/hrtimer_start timer/hrtimer_expire_entry; do
		ALIGN_IRQ_OPTS+=(-e "${e/\//:}")
		ALIGN_IRQ_HOLD+=("$e")
	done
}

# align_wait_line GUESTDIR TEXT [PID]: wait (800 s at most) until the
# guest's console has a line with TEXT; 1 as soon as the guest's QEMU has
# ended (a reset after "L2 up": nothing more will come, and waiting out the
# 800 s held ci47's align suite 13 minutes) or the helper PID waiting for
# the line has.  For a guest past "L2 up" (no boot restart can come).
align_wait_line() {
	local i vm
	for ((i = 0; i < 4000; i++)); do
		grep -aq "$2" "$VTRACE_OUT/$1/console.log" 2>/dev/null && return 0
		[ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || return 1
		vm=$(cat "$VTRACE_OUT/$1/qemu.pid" 2>/dev/null)
		if [ -n "$vm" ] && ! kill -0 "$vm" 2>/dev/null; then
			grep -aq "$2" "$VTRACE_OUT/$1/console.log" 2>/dev/null
			return
		fi
		sleep 0.2
	done
	return 1
}

# ALIGN_HOG: the host's bursts on the vCPU's CPU (ALIGN_LATENCY): count, us each, period us
ALIGN_HOG=(5 40000 400000)

# align_hog GUESTDIR: pin the guest's vCPU 1 thread to host CPU 1 and start
# e2e_hog there (SCHED_FIFO 20) at once, waiting on a FIFO; once the
# guest's console says "vtg: # lat hog", tell it to hold that CPU in
# ALIGN_HOG's bursts.  The guest's lat_hog runs 12 s, the bursts take 2 (the
# host saw the console line 6 s late once); e2e_hog started that late ran
# 0.24 s as a normal task on the CPU before its first burst (exec, set-up),
# itself a cause the test did not mean.  Then align_sirq.
align_hog() {
	local g=$1 tid i fifo=/tmp/$1-hog.fifo hog rc
	# the VM that runs: a boot the bed restarts is another QEMU (ci13 pinned
	# the first one's thread, and 4 of the 5 bursts missed the vCPU)
	align_wait_up "$g"
	for ((i = 0; i < 300; i++)); do
		tid=$(l2_vcpu_tid "$g" 1) && break
		sleep 1
	done
	[ -n "$tid" ] || { echo "align_hog: no vCPU 1 thread in $g"; return 1; }
	taskset -pc 1 "$tid" || return 1
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	# read-write: opening it blocks neither e2e_hog nor the writer below
	"$VTRACE_PROJ/build/helpers/e2e_hog" 1 10 "${ALIGN_HOG[1]}" "${ALIGN_HOG[2]}" 20 \
		"${ALIGN_HOG[0]}" - <> "$fifo" &
	hog=$!
	align_wait_line "$g" "vtg: # lat hog" $hog || echo "align_hog: no 'lat hog' from $g"
	sleep 1	# the line comes before lat_hog starts: one burst came 0.1 s early
	echo go 1<> "$fifo"
	wait $hog
	rc=$?
	align_sirq "$g" "$fifo" || rc=1
	rm -f "$fifo"
	align_hirq "$g" || rc=1
	align_idle "$g" || rc=1
	return $rc
}

# align_sirq GUESTDIR FIFO: e2e_sirq started at once, waiting on FIFO; once
# the guest's console says "vtg: # lat sirq", 2 s of NET_RX softirq work on
# host CPU 1 (the vCPU's), sent from CPU 0 (the guest's lat_sirq runs 4 s)
align_sirq() {
	local g=$1 fifo=$2 sirq
	"$VTRACE_PROJ/build/helpers/e2e_sirq" 1 0 2 - <> "$fifo" &
	sirq=$!
	align_wait_line "$g" "vtg: # lat sirq" $sirq || echo "align_sirq: no 'lat sirq' from $g"
	sleep 1
	echo go 1<> "$fifo"	# read-write: no wait for a reader that already died
	wait $sirq
}

# ALIGN_HIRQ: the host's irqs-off sections on the vCPU's CPU: us each, every ms
ALIGN_HIRQ=(3000 20)

# align_hirq GUESTDIR: from the guest console's "vtg: # lat hirq" to its
# "vtg: # lat idle" (lat_hirq runs 8 s), vtrace_irqoff.ko (built for this
# kernel on L0: testbed/build-l2.sh) keeps host CPU 1's interrupts off in
# ALIGN_HIRQ's sections (30 s at most); the module's count of them is printed
align_hirq() {
	local g=$1 ko=$VTRACE_PROJ/build/irqoff/$(uname -r)/vtrace_irqoff.ko n rc=0
	align_wait_line "$g" "vtg: # lat hirq" || { echo "align_hirq: no 'lat hirq' from $g"; return 1; }
	insmod "$ko" cpu=1 off_us="${ALIGN_HIRQ[0]}" period_ms="${ALIGN_HIRQ[1]}" \
		duration_ms=30000 || { echo "align_hirq: insmod $ko failed"; return 1; }
	align_wait_line "$g" "vtg: # lat idle" || { echo "align_hirq: no 'lat idle' from $g"; rc=1; }
	n=$(cat /sys/module/vtrace_irqoff/parameters/sections)
	rmmod vtrace_irqoff || return 1
	echo "vtrace_irqoff: $n sections of ${ALIGN_HIRQ[0]} us every ${ALIGN_HIRQ[1]} ms on cpu 1"
	return $rc
}

# ALIGN_IDLE: L1's vCPU 1 stopped from L0 (align_idle): count, us each, period us
ALIGN_IDLE=(5 50000 400000)

# align_idle GUESTDIR: once the guest's console says "vtg: # lat idle", ask
# L0 (testbed/l0-freeze.py, run-l1.sh --freeze-watch) to stop this host's
# CPU 1, the vCPU's, in ALIGN_IDLE's bursts (the guest's lat_idle runs 7 s:
# on a machine loaded 17 deep L0's first stop came 3.6 s after lat_idle
# began, run of 2026-12-02 08:24, all five after a lat_idle of 3 s);
# L0's answer ("l0-freeze: ...") is printed
align_idle() {
	local g=$1 i
	align_wait_line "$g" "vtg: # lat idle" || { echo "align_idle: no 'lat idle' from $g"; return 1; }
	[ -e "$VTRACE_OUT/freeze-watch" ] ||
		{ echo "align_idle: nothing on L0 to stop this host's CPU (run-l1.sh --freeze-watch)"; return 1; }
	sleep 0.5
	rm -f "$VTRACE_OUT/freeze-done"
	echo "1 ${ALIGN_IDLE[*]}" > "$VTRACE_OUT/freeze-request.tmp"
	mv "$VTRACE_OUT/freeze-request.tmp" "$VTRACE_OUT/freeze-request"
	for ((i = 0; i < 300; i++)); do	# 5 bursts every 0.4 s: 2 s, and L0's 0.1 s polls
		[ -s "$VTRACE_OUT/freeze-done" ] && break
		sleep 0.1
	done
	[ $i -lt 300 ] || { echo "align_idle: no answer from L0 in 30 s"; return 1; }
	cat "$VTRACE_OUT/freeze-done"
}

# align_start_file NAME COUNT TSCWRITE...: a fresh vtrace_host sized for the
# capture (an unstable TSC writes thousands of offsets a second: 1M
# records), trace-cmd, then the guests; sets ALIGN_TC and pids
align_start_file() {
	local name=$1 count=$2 g
	shift 2
	rmmod vtrace_host 2>/dev/null
	insmod "$VTRACE_HOST_KO" capacity=1048576 || return 1
	(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e kvm:kvm_hypercall \
		-e sched:sched_switch -e kvm:kvm_entry -e kvm:kvm_exit "${ALIGN_IRQ_OPTS[@]}" \
		-o "/tmp/$name-host.dat") > "$VTRACE_OUT/$name/trace-cmd.log" 2>&1 &
	ALIGN_TC=$!
	sleep 3
	for ((g = 1; g <= $#; g++)); do
		L2_QEMU_PLAIN=$([ "${ALIGN_PLAIN:-}" = $g ] && echo 1) \
		l2_start "$name-g$g" /tests/e2e_align.sh --cpus 2 --timeout 400 --vtrace-args \
			--arg "$count,$g,${!g},0,$([ "${ALIGN_LATENCY:-}" = $g ] && echo 1 || echo 0)"
		pids+=("$L2_PID")
		align_tids "$name" "$g" "$L2_PID" &
		ALIGN_TIDJOBS+=($!)
	done
}

# align_start_events NAME COUNT TSCWRITE...: the guests first (they wait
# ALIGN_DELAY s before tracing), then, once their VMs exist, trace-cmd with
# -e vtrace_host; vtrace_host stays as the suite loaded it
align_start_events() {
	local name=$1 count=$2 g w
	shift 2
	grep -q '^vtrace_host ' /proc/modules || { ktap_diag "vtrace_host is not loaded"; return 1; }
	for ((g = 1; g <= $#; g++)); do
		L2_QEMU_PLAIN=$([ "${ALIGN_PLAIN:-}" = $g ] && echo 1) \
		l2_start "$name-g$g" /tests/e2e_align.sh --cpus 2 --timeout 400 --vtrace-args \
			--arg "$count,$g,${!g},${ALIGN_DELAY:-30},$([ "${ALIGN_LATENCY:-}" = $g ] && echo 1 || echo 0)"
		pids+=("$L2_PID")
		align_tids "$name" "$g" "$L2_PID" &
		ALIGN_TIDJOBS+=($!)
	done
	for ((g = 1; g <= $#; g++)); do	# each guest's VM exists
		for ((w = 0; w < 600; w++)); do
			align_vm "$name" "$g" > /dev/null && break
			sleep 0.1
		done
	done
	[ -z "${ALIGN_FULL_FIRST:-}" ] || align_wait_full "$name" "$#"
	align_vms "$name" "$#" > "$VTRACE_OUT/$name/vms-before"
	(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e vtrace_host -e kvm:kvm_hypercall \
		-e sched:sched_switch -e kvm:kvm_entry -e kvm:kvm_exit "${ALIGN_IRQ_OPTS[@]}" \
		-o "/tmp/$name-host.dat") > "$VTRACE_OUT/$name/trace-cmd.log" 2>&1 &
	ALIGN_TC=$!
	for ((w = 0; w < 600; w++)); do	# trace-cmd records once the events are enabled
		[ "$(cat /sys/kernel/tracing/events/vtrace_host/tsc_offset/enable)" = 1 ] && break
		sleep 0.1
	done
	align_vms "$name" "$#" > "$VTRACE_OUT/$name/vms-recording"
	ktap_diag "$name: the guests' VMs exist; trace-cmd recording $((w / 10)).$((w % 10)) s after its start"
}

# align_vms NAME GUESTS: "gN PID" for each guest whose VM exists now (KVM's
# debugfs directory PID-FD); align-analyse.sh's align_pid_args compares the
# lists taken before trace-cmd started and once it recorded with the VMs
# the guests ended in, to tell a VM made before the recording from one the
# boot watchdog made during it (ci28's align_unstable: its restart came
# before the recording, which waits for "L2 up", and its VM was taken for one
# made during it)
align_vms() {
	local g vm
	for ((g = 1; g <= $2; g++)); do
		vm=$(align_vm "$1" "$g") && echo "g$g $vm"
	done
}

# align_vm NAME G: the QEMU pid of guest gG if its VM exists now (KVM's
# debugfs directory PID-FD), else fails
align_vm() {
	local vm
	vm=$(cat "$VTRACE_OUT/$1-g$2/qemu.pid" 2>/dev/null)
	[ -n "$vm" ] && ls -d /sys/kernel/debug/kvm/"$vm"-* > /dev/null 2>&1 && echo "$vm"
}

# align_tids NAME G RUNNER: every thread id guest gG's QEMUs have had, read every
# second while its runner (l2_start's L2_PID) lives (NAME-gG/qemu-tids, one a
# line): which host threads are that VM's. qemu.pid is read again each time:
# the boot watchdog starts a guest that reset in its boot in a new QEMU
align_tids() {
	local d=$VTRACE_OUT/$1-g$2 runner=$3 pid
	while kill -0 "$runner" 2>/dev/null; do
		pid=$(cat "$d/qemu.pid" 2>/dev/null) && [ -n "$pid" ] &&
			ls "/proc/$pid/task" >> "$d/qemu-tids.all" 2>/dev/null
		sleep 1
	done
	sort -un "$d/qemu-tids.all" > "$d/qemu-tids" 2>/dev/null
}

# align_vm_dropped PID STATS: the records vtrace_host dropped for the VM of
# QEMU pid PID, from a copy of its stats ("vm PID NAME kept K dropped N")
align_vm_dropped() {
	awk -v p="$1" '$1 == "vm" && $2 == p { n = $7 } END { print n + 0 }' "$2"
}

# align_wait_up GUESTDIR: wait (400 s at most) until the guest's console says
# "L2 up": its boot is past the boot watchdog, which starts a boot that
# resets again in another QEMU (testbed/l2-watch.sh)
align_wait_up() {
	local w
	for ((w = 0; w < 4000; w++)); do
		grep -aq "vtrace-testbed: L2 up" "$VTRACE_OUT/$1/console.log" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# align_wait_full NAME GUESTS: wait until every guest's boot is past the
# boot watchdog ("L2 up": a boot the bed restarts makes another VM, whose
# share the stats below would not have seen full: ci12's align_unstable,
# 2026-12-01 23:30), then (90 s at most) until every guest's VM has lost
# records in vtrace_host's array (its share is full); the stats of that
# moment go to NAME/stats-before
align_wait_full() {
	local name=$1 guests=$2 g w full pid
	for ((g = 1; g <= guests; g++)); do
		align_wait_up "$name-g$g"
	done
	for ((w = 0; w < 900; w++)); do
		cat /sys/kernel/debug/vtrace/stats > "$VTRACE_OUT/$name/stats-before"
		full=1
		for ((g = 1; g <= guests; g++)); do
			pid=$(cat "$VTRACE_OUT/$name-g$g/qemu.pid" 2>/dev/null)
			[ "$(align_vm_dropped "$pid" "$VTRACE_OUT/$name/stats-before")" -gt 0 ] || full=0
		done
		[ $full = 1 ] && break
		sleep 0.1
	done
	grep -E '^(kept|dropped|capacity|vm_share) |^vm ' "$VTRACE_OUT/$name/stats-before" |
		sed "s/^/# $name: stats before the recording: /"
	ktap_diag "$name: waited $((w / 10)).$((w % 10)) s for the guests' shares of the array to be full"
}
