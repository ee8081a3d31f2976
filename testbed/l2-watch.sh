#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run one L2 guest's QEMU in L1 under the bed's watchdogs (testbed/lib.sh, l2_exec, calls it).
#
#   l2-watch.sh DIR BOOT_WD HB_WD LOG QEMU-ARGS...
#
# DIR holds the guest's console.log and qemu.pid (the arguments must say so);
# LOG collects the watchdogs' findings for testbed/bed-glitch.sh.  The exit
# status is QEMU's, 137 for a guest the watchdog killed.
#
# In this nested bed (KVM under QEMU's TCG) an L2 guest fails on its own in
# ways that have nothing to do with what it runs (Documentation/testbed.rst,
# "Known quirks of the nesting", has the measured rates and one caught cause:
# a triple fault of the guest kernel right after an MSR exit, in its boot):
#
#  boot      Until init says "L2 up", the console must not stay silent for
#            BOOT_WD seconds (a hang in the boot) and QEMU must not end by
#            itself with status 0 and no kernel report (a reset in the boot,
#            which -no-reboot turns into QEMU's exit).  Either way QEMU is
#            started again, at most twice; nothing of the test has run yet.
#            A kernel report in the boot with no "L2 up" BOOT_WD seconds
#            later ends QEMU too: started again when the reports are the
#            lost wake-ups' (an RCU kthread's timer that never fired, soft
#            lockups) with no vtrace frame in them, else not ("l2 boot
#            stuck", the suite fails now instead of at its bound).
#  heartbeat After "L2 up", the guest's init writes its uptime to a second
#            serial port every 5 s (DIR/heartbeat.log, added here).  When it
#            stops for HB_WD seconds while QEMU runs (and is not stopped on
#            purpose, SIGSTOP), the guest is stuck: the CPU time its vCPU
#            threads use in 5 s tells whether it is idle (under 5 %: the bed's lost
#            wake-ups: "l2 stalled") or spinning ("l2 stuck busy", never
#            taken for the bed's), and QEMU is killed so that the suite fails
#            within a minute instead of at its bound.
#  reset     A guest that ends by itself with status 0 after "L2 up", without
#            its init's "L2 script exit" and with no kernel report, reset.
#            With L2_EXIT_RING=1 (environment), from "L2 up" on, L1 records
#            its vCPU threads' kvm_exit events in a small overwriting ring (a
#            tracing instance of its own, in L1 only): for a reset its last
#            exits go to DIR/exits.txt and the last one's reason and RIP into
#            the finding ("shutdown": the guest's triple fault).  Not on by
#            default: with the rings on, the host suite's trace-cmd record
#            left its events unread in the kernel's buffer in 3 of 5 runs.
# BOOT_WD 0 turns all three off.
d=$1 boot_wd=$2 hb_wd=$3 log=$4
shift 4
qemu=${VTRACE_QEMU:-qemu-system-x86_64}
mem=128	# the guest's RAM in MiB, QEMU's -m (default 128)
for ((i = 1; i < $#; i++)); do
	[ "${!i}" = -m ] || continue
	j=$((i + 1))
	[[ ${!j} =~ ^([0-9]+)[mM]?$ ]] && mem=${BASH_REMATCH[1]}
done
here=$(cd "$(dirname "$0")" && pwd)
splat=$here/splat-check.sh
. "$here/ticks.sh"
. "$here/qemu-monitor.sh"

say() {	# say MESSAGE: to the guest's qemu.log and to LOG
	echo "$*" | tee -a "$log"
}

up() {
	grep -aq "vtrace-testbed: L2 up" "$d/console.log" 2>/dev/null
}

size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

vcpu_ticks() {	# vcpu_ticks PID: user + system clock ticks of its vCPU threads
	ticks "$1" "CPU */KVM"
}

lost_wakeups() {	# the console's reports are the bed's lost wake-ups, no vtrace frame in them
	grep -aqE "kthread timer wakeup didn't happen|soft lockup - CPU#[0-9]* stuck" "$d/console.log" &&
		! grep -aqE '(vtg|vtrace)_[a-z0-9_]*\+0x|\[vtrace_(guest|host)\]' "$d/console.log"
}

stopped() {	# stopped PID: the process is stopped (SIGSTOP by a test)
	[ "$(sed 's/^.*) \(.\).*/\1/' /proc/"$1"/stat 2>/dev/null)" = T ]
}

# exit_sample PID: half a second of L1's kvm_exit events of its vCPU
# threads (a tracing instance of its own, filtered to those threads), read
# by exit-loop.awk: one line
exit_sample() {
	local i=/sys/kernel/tracing/instances/l2-watch-$1 tids
	[ -d /sys/kernel/tracing/events/kvm/kvm_exit ] || { echo "no kvm:kvm_exit event in L1"; return; }
	tids=$(threads "$1" "CPU */KVM" | tr "\n" " ")
	[ -n "$tids" ] || { echo "no vCPU thread"; return; }
	mkdir "$i" 2> /dev/null || { echo "no tracing instance for the sample"; return; }
	echo "$tids" > "$i/set_event_pid" &&
		echo 1 > "$i/events/kvm/kvm_exit/enable" && sleep 0.5 &&
		echo 0 > "$i/events/kvm/kvm_exit/enable"
	awk -v mem="$mem" -f "$here/exit-loop.awk" "$i/trace"
	rmdir "$i"
}

# ring_start PID: the exit ring of QEMU PID's vCPU threads (in L1, with kvm:kvm_exit)
ring=
ring_start() {
	local i=/sys/kernel/tracing/instances/l2-ring-$1 tids
	# opt-in: with the rings on, trace-cmd record in L1 left events unread (below)
	[ -n "${L2_EXIT_RING:-}" ] && [ -n "${VTRACE_IN_L1:-}" ] &&
		[ -d /sys/kernel/tracing/events/kvm/kvm_exit ] || return
	tids=$(threads "$1" "CPU */KVM" | tr "\n" " ")
	[ -n "$tids" ] && mkdir "$i" 2> /dev/null || return
	ring=$i
	{ echo 64 > "$i/buffer_size_kb" && echo "$tids" > "$i/set_event_pid" &&
		echo 1 > "$i/events/kvm/kvm_exit/enable"; } 2> /dev/null || ring_stop
}
ring_stop() {
	[ -z "$ring" ] || rmdir "$ring" 2> /dev/null
	ring=
}
# ring_last: its last 400 exits into DIR/exits.txt, and ", last kvm_exit: REASON at RIP"
ring_last() {
	local last
	[ -n "$ring" ] || return
	echo 0 > "$ring/events/kvm/kvm_exit/enable"
	grep -v '^#' "$ring/trace" | tail -400 > "$d/exits.txt"
	last=$(tail -1 "$d/exits.txt" | sed -nE 's/.*kvm_exit: .*reason ([^ ]+) rip (0x[0-9a-f]+).*/\1 at \2/p')
	[ -z "$last" ] || printf ', last kvm_exit: %s' "$last"
}

# l1_cpus: ask L0 (testbed/run-l1.sh, l1_watch) to sample L1's CPUs while
# the guest still spins (VTRACE_OUT/l1-cpus-request: the file to write, in
# VTRACE_OUT); waits for the answer at most 15 s
l1_cpus() {
	local f i
	[ -n "${VTRACE_IN_L1:-}" ] && [ -d "${VTRACE_OUT:-}" ] || return
	f=l1-cpus-$(basename "$d").txt
	echo "$f" > "$VTRACE_OUT/l1-cpus-request.tmp" &&
		mv "$VTRACE_OUT/l1-cpus-request.tmp" "$VTRACE_OUT/l1-cpus-request" || return
	for ((i = 0; i < 150; i++)); do
		[ -e "$VTRACE_OUT/l1-cpus-request" ] || break
		sleep 0.1
	done
	[ -s "$VTRACE_OUT/$f" ] && echo "; L1's CPUs meanwhile: $f"
}

# vcpu_regs: each vCPU's registers and stack from the watchdog's own monitor
# (QEMU pauses nothing for it) into DIR/l2-regs.txt, named with the guest's
# layout in its heartbeat and L1's copy of its kallsyms (testbed/l2-stack.py),
# and "; vCPUs: ..." for the finding: where a spinning guest spins, and what
# its stacks hold, for lack of the guest's own report
vcpu_regs() {
	local f=$d/l2-regs.txt
	[ -S "$mon" ] || return
	# (VTRACE_L1_KALLSYMS: testbed/tests/test-bed.sh's stand-in)
	python3 "$here/l2-stack.py" "$mon" "${VTRACE_L1_KALLSYMS:-$here/../build/testbed/l1-kallsyms-$(uname -r)}" \
		"$d/heartbeat.log" > "$f" 2>&1
	grep -q '^summary: ' "$f" && echo "; vCPUs: $(sed -n 's/^summary: //p' "$f") (registers, stacks: $(basename "$f"))"
}

stuck() {	# stuck PID: classify a guest whose heartbeat stopped, kill it
	local a b hz ms
	hz=$(getconf CLK_TCK)
	a=$(vcpu_ticks "$1")
	sleep 5
	b=$(vcpu_ticks "$1")
	ms=$(((b - a) * 1000 / hz))
	if [ $ms -lt 250 ]; then
		say "l2 stalled: $d: no heartbeat for ${hb_wd}s after \"L2 up\", its vCPU threads idle ($ms ms of CPU in 5 s): the guest lost its wake-ups; QEMU killed"
	else
		say "l2 stuck busy: $d: no heartbeat for ${hb_wd}s after \"L2 up\", its vCPU threads busy ($ms ms of CPU in 5 s); their exits: $(exit_sample "$1")$(l1_cpus)$(vcpu_regs); QEMU killed"
	fi
	kill -9 "$1"
}

# watch PID: 0 when QEMU ended by itself, 1 when the boot watchdog killed it
# A boot whose console is silent for BOOT_WD seconds while its vCPU threads
# keep computing (a loaded machine: firmware and the kernel's first steps
# under nested TCG took 144 s with a load average of 10) is slow, not hung:
# it gets up to 3 x BOOT_WD of silence; an idle one (under 5 % of a CPU: a
# lost wake-up) does not.
watch() {
	local q=$1 last=$SECONDS size=0 hb=0 hbsize=0 ticks0 ms hz silent said= report= first
	hz=$(getconf CLK_TCK)
	ticks0=$(vcpu_ticks "$q")
	while kill -0 "$q" 2>/dev/null; do
		if [ $hb -eq 0 ] && [ -n "$report" ] && [ $((SECONDS - report)) -ge "$boot_wd" ] && ! up; then
			first=$("$splat" "$d/console.log" | head -1 | sed 's/^.*\] //')
			if lost_wakeups; then
				say "l2 boot watchdog: $d: a kernel report in the boot and no \"L2 up\" ${boot_wd}s later, the lost wake-ups' with no vtrace frame: $first (attempt $try), QEMU killed"
				kill -9 "$q"
				return 1
			fi
			say "l2 boot stuck: $d: a kernel report in the boot and no \"L2 up\" ${boot_wd}s later: $first; QEMU killed, not started again"
			kill -9 "$q"
			return 0
		fi
		if [ $hb -eq 0 ]; then
			silent=$((SECONDS - last))
			if up; then
				hb=$SECONDS
				echo "l2: booted to its script after about $((SECONDS - t0))s"
				ring_start "$q"
			elif [ "$(size "$d/console.log")" != "$size" ]; then
				size=$(size "$d/console.log") last=$SECONDS ticks0=$(vcpu_ticks "$q")
				# a kernel report (splat-check.sh's) in the boot: the clock above
				[ -n "$report" ] || "$splat" "$d/console.log" > /dev/null || report=$SECONDS
			elif [ $silent -ge "$boot_wd" ]; then
				ms=$((($(vcpu_ticks "$q") - ticks0) * 1000 / hz))
				if slow_boot "$silent" "$boot_wd" "$ms"; then
					[ -n "$said" ] ||
						echo "l2: console silent for ${silent}s at $size bytes, its vCPU threads busy ($ms ms of CPU): a slow boot, waiting up to $((3 * boot_wd))s"
					said=1
					sleep 0.5
					continue
				fi
				say "l2 boot watchdog: $d: console silent for ${silent}s at $size bytes before \"L2 up\", its vCPU threads $ms ms of CPU meanwhile (attempt $try), QEMU killed"
				kill -9 "$q"
				return 1
			fi
		elif [ "$(size "$d/heartbeat.log")" != "$hbsize" ] || stopped "$q"; then
			hbsize=$(size "$d/heartbeat.log") hb=$SECONDS
		elif [ $((SECONDS - hb)) -ge "$hb_wd" ]; then
			stuck "$q"
			return 0
		fi
		sleep 0.5
	done
	[ $hb -ne 0 ] || ! up || echo "l2: booted to its script after about $((SECONDS - t0))s"
	return 0
}

if [ "$boot_wd" -eq 0 ]; then
	exec "$qemu" "$@"
fi
# the watchdog's own monitor (vcpu_regs); /run: a socket's path is short
mon=/run/vtrace-watch-$$.mon
trap 'ring_stop; rm -f "$mon"' EXIT
for try in 1 2 3; do
	rm -f "$d/qemu.pid" "$d/.qemu.pid" "$d/heartbeat.log"
	t0=$SECONDS
	rm -f "$mon"
	"$qemu" "$@" -serial "file:$d/heartbeat.log" -monitor "unix:$mon,server=on,wait=off" &
	q=$!
	while [ ! -s "$d/qemu.pid" ] && kill -0 $q 2>/dev/null; do sleep 0.1; done
	# QEMU removes its pid file at exit: a hard link keeps it (lib.sh)
	ln -f "$d/qemu.pid" "$d/.qemu.pid" 2>/dev/null
	watch $q
	killed=$?
	wait $q
	rc=$?
	# a guest whose watchdog killed it is started again: its ring goes
	[ $killed -eq 0 ] || ring_stop
	if [ "$d/.qemu.pid" -ef "$d/qemu.pid" ]; then
		rm -f "$d/.qemu.pid"
	elif [ -f "$d/.qemu.pid" ]; then
		mv -f "$d/.qemu.pid" "$d/qemu.pid"
	fi
	[ $killed -eq 0 ] || continue
	bysig=$(grep -a "terminating on signal" "$d/qemu.log" 2>/dev/null)
	if up; then
		# up, then gone by itself with status 0 without its init
		# saying so and without a kernel message: the guest reset
		if [ $rc -eq 0 ] && [ -z "$bysig" ] &&
		   ! grep -aq "vtrace-testbed: L2 script exit" "$d/console.log" &&
		   "$splat" "$d/console.log" > /dev/null; then
			say "l2 guest reset: $d: QEMU ended (exit 0$(ring_last)) after \"L2 up\", with no poweroff by its init and no kernel message"
		fi
		ring_stop
		exit $rc
	fi
	echo "l2: QEMU ended before the guest said \"L2 up\" (exit $rc)"
	# a reset in the boot: QEMU ended by itself, status 0, no kernel report
	if [ $rc -ne 0 ] || [ -n "$bysig" ] || ! "$splat" "$d/console.log" > /dev/null; then
		exit $rc
	fi
	say "l2 boot watchdog: $d: QEMU ended (exit 0) in the guest's boot at $(size "$d/console.log") console bytes, no kernel report: a reset (attempt $try)"
done
say "l2 boot watchdog: $d: no boot in 3 attempts, giving up"
exit 124
