#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test bed's L1 ("host") under QEMU TCG and run one script in it.
#
#   run-l1.sh [options] SCRIPT [ARG]
#     --out DIR           results folder, inside the project tree (required)
#     --kver KVER         L1 kernel release (default: $KVER, else newest installed)
#     --no-tsc-reliable   boot L1 without tsc=reliable: KVM then rewrites TSC
#                         offsets on every vCPU load (the unstable-TSC case;
#                         an RT L1, given an invariant TSC, gets tsc=unstable)
#     --timeout SEC       wall-clock bound of the whole boot (default 600)
#     --mem MIB           L1 memory (default 3072)
#     --no-kvm-pin        no idle VM held in L1 for the run (testbed/kvm-pin.py;
#                         for suites that count the host's VMs)
#     --freeze-watch      L1 may ask L0 to stop one of its vCPUs for a while
#                         (the host not running: testbed/l0-freeze.py, beside
#                         L1's QEMU until it ends; VTRACE_OUT/freeze-request)
#
# SCRIPT runs as bash inside L1, chrooted into the outer root (shared
# read-only over 9p), with the project tree writable at its usual path.
# L1's console lands in DIR/l1-console.log, the script's output in
# DIR/l1-script.out.  VTRACE_KMOD_DIR (environment) names the folder of the
# modules to test, when not the tree's own; L2_KVER the guests' kernel;
# L2_BOOT_WATCHDOG the guests' boot watchdog (testbed/lib.sh, l2_exec);
# VTRACE_QEMU the QEMU binary of L1 and of the L2 guests (default:
# qemu-system-x86_64 on PATH; an outer-root path, L1 sees the same file).
# Exit status: the script's, 124 on timeout, and 1 when any kernel log in
# DIR shows a splat (testbed/splat-check.sh).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/ticks.sh"
proj=$(cd "$here/.." && pwd)
kver=${KVER:-}
tsc="tsc=reliable"
timeout=600
mem=3072
nopin=
freeze=
out=

while [ $# -gt 0 ]; do
	case "$1" in
	--out)			out=$2; shift 2 ;;
	--kver)			kver=$2; shift 2 ;;
	--no-tsc-reliable)	tsc=""; shift ;;
	--timeout)		timeout=$2; shift 2 ;;
	--mem)			mem=$2; shift 2 ;;
	--no-kvm-pin)		nopin=" vtrace_nopin"; shift ;;
	--freeze-watch)		freeze=1; shift ;;
	-*)			echo "run-l1: unknown option $1" >&2; exit 2 ;;
	*)			break ;;
	esac
done
script=$(readlink -f "$1")
arg=${2:-}
[ -n "$out" ] || { echo "run-l1: --out DIR is required" >&2; exit 2; }
[ -n "$kver" ] || kver=$("$here/default-kver.sh")

mkdir -p "$out"
out=$(cd "$out" && pwd)
# The paths travel on L1's kernel command line, split at white space.
for p in "$proj" "$out" "$script" "$arg"; do
	if [[ $p =~ [[:space:]] ]]; then
		echo "run-l1: '$p' contains white space, which L1's kernel command line cannot carry: use a clone whose path has none" >&2
		exit 2
	fi
done
# L1 sees the outer root read-only, with tmpfs on /tmp and /run, and the
# project tree at its own path: a script elsewhere under /tmp or /run is hidden.
case "$script" in
"$proj"/*) ;;
/tmp/*|/run/*)
	echo "run-l1: $script is outside $proj under /tmp or /run, which L1 cannot see: put it in the project tree" >&2
	exit 2 ;;
esac
case "$out" in
"$proj"/*) ;;
*)	echo "run-l1: --out must be inside $proj (L1 writes only there)" >&2; exit 2 ;;
esac
rm -f "$out/l1-exit-code" "$out/l1-console.log"

initrd="$proj/build/testbed/initramfs-l1-$kver.cpio.gz"
if [ ! -f "$initrd" ] || [ "$initrd" -ot "$here/init-l1.sh" ] ||
   [ "$initrd" -ot "$here/mkinitramfs.sh" ]; then
	"$here/mkinitramfs.sh" "$kver" l1 "$initrd"
fi

# KVM on a PREEMPT_RT kernel refuses to load without an invariant TSC ("RT
# requires X86_FEATURE_CONSTANT_TSC"), which TCG filters out of -cpu max.
# TCG's TSC is L0's (rdtsc of the host, constant_tsc there), so an RT L1 is
# told the truth with the filter forced off for that one bit.
cpu=max
if grep -qx 'CONFIG_PREEMPT_RT=y' "/boot/config-$kver" 2>/dev/null; then
	cpu="max,+invtsc,x-force-features=on"
	# with an invariant TSC, L1 trusts its TSC even without tsc=reliable:
	# the unstable-TSC case then needs tsc=unstable (KVM rewrites each
	# vCPU's offset on every vCPU load, as on the 6.1 L1 without tsc=reliable)
	[ -n "$tsc" ] || tsc="tsc=unstable"
fi

# l1_reset_cause LOG: ", a triple fault" when QEMU's -d cpu_reset
# log says its end was one (-no-reboot turns it into QEMU's exit 0, so no
# CPU state follows: that needs a reset, which would boot L1 again)
l1_reset_cause() {
	grep -q '^Triple fault' "$1" 2>/dev/null &&
		printf ', a triple fault: l1-qemu.log'
}

# l1_watch PID: L1's init writes its uptime to a second serial port every
# 5 s (l1-heartbeat.log); when that stops for L1_HEARTBEAT_WATCHDOG seconds
# (default 60: ten times the longest gap in healthy runs; before it starts:
# its console) with no kernel report on
# L1's console, L1 is stuck as a whole (its timer interrupts lost under
# TCG, seen as an idle CPU's soft lockup): "l1 stalled", a finding of
# testbed/bed-glitch.sh, and L1 is killed instead of holding the run until
# its bound.
#
# Until L1's init says "L1 up", the bound is L1_BOOT_WATCHDOG seconds
# (default 20): a healthy L1 boot has its console's first line 2 to 4 s
# after QEMU starts and no gap over 2.2 s of kernel time before "L1 up" in
# 18 validation runs' consoles, and a stall there (ci14, ci16) cost 60 s
# more with the bound of a running suite.  A boot whose QEMU keeps
# computing is slow, not stalled (ticks.sh's slow_boot(): a loaded machine,
# where L1's kernel decompressor alone took over 20 s), and gets up to three
# times the bound.
l1_watch() {
	local q=$1 hb=$SECONDS size=0 now cpus wd f=l1-console.log up= hz ticks0 ms said= busy silent qemu=
	hz=$(getconf CLK_TCK)
	ticks0=0
	while kill -0 "$q" 2>/dev/null; do
		# QEMU, timeout's child, once it is there (its CPU time: slow_boot)
		[ -n "$qemu" ] || qemu=$(pgrep -P "$q" | head -1)
		# the console until the heartbeat starts (a hang in L1's boot)
		[ ! -s "$out/l1-heartbeat.log" ] || f=l1-heartbeat.log
		[ -n "$up" ] || ! grep -aq 'vtrace-testbed: L1 up' "$out/l1-console.log" 2>/dev/null || up=1
		if [ -n "$up" ]; then wd=${L1_HEARTBEAT_WATCHDOG:-60}; else wd=${L1_BOOT_WATCHDOG:-20}; fi
		now=$f:$(stat -c %s "$out/$f" 2>/dev/null || echo 0)
		# a guest l2-watch.sh found spinning: where L1's CPUs are meanwhile
		if [ -e "$out/l1-cpus-request" ]; then
			python3 "$here/l1-cpus.py" "$mon" "$proj/build/testbed/l1-kallsyms-$kver" \
				"$out/l1-heartbeat.log" 5 > "$out/$(basename "$(cat "$out/l1-cpus-request")")" 2>&1
			rm -f "$out/l1-cpus-request"
		fi
		if [ "$now" != "$size" ]; then
			size=$now hb=$SECONDS ticks0=$(ticks "$qemu")
		elif [ $((SECONDS - hb)) -ge "$wd" ]; then
			# in the boot, QEMU busy while silent: slow
			ms=$((($(ticks "$qemu") - ticks0) * 1000 / hz))
			if [ -z "$up" ] && slow_boot $((SECONDS - hb)) "$wd" "$ms"; then
				[ -n "$said" ] ||
					echo "run-l1: L1's console silent for $((SECONDS - hb))s in its boot at ${size#*:} bytes, QEMU busy ($ms ms of CPU): a slow boot, waiting up to $((3 * wd))s" >&2
				said=1
				sleep 1
				continue
			fi
			silent=$((SECONDS - hb))
			# where L1's CPUs are, a few samples, before the kill
			python3 "$here/l1-cpus.py" "$mon" "$proj/build/testbed/l1-kallsyms-$kver" \
				"$out/l1-heartbeat.log" > "$out/l1-cpus.txt" 2>&1
			cpus="L1 killed; its CPUs (l1-cpus.txt): $(sed -n 's/^summary: //p' "$out/l1-cpus.txt")"
			busy=
			[ -n "$up" ] || busy=", QEMU $ms ms of CPU meanwhile"
			if "$here/splat-check.sh" "$out/l1-console.log" > /dev/null; then
				echo "l1 stalled: no output from L1 for ${silent}s ($f) and no kernel message$busy; $cpus" |
					tee "$out/l1-stalled.log" >&2
			else
				echo "run-l1: no output from L1 for ${silent}s ($f) after a kernel report$busy; $cpus" |
					tee "$out/l1-killed.log" >&2
			fi
			pkill -KILL -P "$q"
			kill -KILL "$q"
			return
		fi
		sleep 1
	done
}

rm -f "$out/l1-heartbeat.log" "$out/l1-reset.log" "$out/l1-stalled.log" "$out/l1-killed.log" \
	"$out/l1-cpus.txt" "$out/l1-cpus-request"
# L1's QMP socket, for testbed/l1-cpus.py (a short path: a unix socket's has
# at most 107 bytes, a clone's results folder may be deeper)
mon=$(mktemp -u /tmp/vtrace-l1mon.XXXXXX)
trap 'rm -f "$mon"' EXIT
rc=0
# --freeze-watch: QEMU names its threads ("CPU 1/TCG"), for testbed/l0-freeze.py
qname=()
[ -z "$freeze" ] || qname=(-name vtrace-l1,debug-threads=on)
# no_timer_check: L1 is no KVM guest (TCG), so its kernel tests whether the
# IO-APIC delivers the timer by waiting a few ticks in its boot; on a loaded
# machine TCG is too slow for it and L1 panics ("IO-APIC + timer doesn't
# work!", a guest_agent run of 2026-12-01 at load average 15, not
# retried).  no_timer_check skips the test: the timer works (every suite
# depends on it, and the heartbeat watch notices a stalled L1).
# -d cpu_reset: QEMU logs each vCPU's state at every reset of L1 (two at
# its start): an "l1 reset" (L1 gone with no kernel message) is a triple
# fault of L1 under TCG (-no-reboot), and this log says where
timeout -k 10 "$timeout" "${VTRACE_QEMU:-qemu-system-x86_64}" \
	-accel tcg,thread=multi -cpu "$cpu" -smp 2 -m "$mem" "${qname[@]}" \
	-d cpu_reset -D "$out/l1-qemu.log" \
	-display none -no-reboot -monitor none -qmp "unix:$mon,server=on,wait=off" \
	-serial "file:$out/l1-console.log" -serial "file:$out/l1-heartbeat.log" \
	-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=6 cryptomgr.notests no_timer_check $tsc vtrace_run=$script vtrace_out=$out vtrace_proj=$proj vtrace_arg=$arg vtrace_kmod=${VTRACE_KMOD_DIR:-} vtrace_l2kver=${L2_KVER:-} vtrace_l2wd=${L2_BOOT_WATCHDOG:-} vtrace_qemu=${VTRACE_QEMU:-}$nopin" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$proj,mount_tag=project,security_model=none,multidevs=remap" &
qpid=$!
fpid=
rm -f "$out/freeze-request" "$out/freeze-done" "$out/freeze-watch"
if [ -n "$freeze" ]; then
	python3 "$here/l0-freeze.py" "$qpid" "$out" &
	fpid=$!
fi
l1_watch $qpid
wait $qpid || rc=$?
# the watcher ends with QEMU (a thread it stopped is let go as it exits)
[ -z "$fpid" ] || wait "$fpid" || true
if [ -f "$out/l1-stalled.log" ]; then
	exit 1
fi
# killed by the heartbeat watch after a kernel report: said above, not a timeout
if [ -f "$out/l1-killed.log" ]; then
	echo "run-l1: L1 was killed by its watchdog after a kernel report (l1-killed.log), not at its ${timeout}s bound; logs in $out" >&2
	exit 1
fi

if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "run-l1: L1 timed out after ${timeout}s; logs in $out" >&2
	exit 124
fi
if [ ! -f "$out/l1-exit-code" ]; then
	if ! grep -aq 'vtrace-testbed: L1 up' "$out/l1-console.log"; then
		echo "run-l1: L1 ended before running the script (qemu exit $rc); see $out/l1-console.log" >&2
		grep -a 'vtrace-testbed: cannot' "$out/l1-console.log" >&2
	elif [ "$rc" -eq 0 ] && "$here/splat-check.sh" "$out/l1-console.log" > /dev/null; then
		# gone by itself in the middle, no kernel report: TCG reset L1
		echo "l1 reset: L1 ended by itself (qemu exit 0$(l1_reset_cause "$out/l1-qemu.log")) while running the script, with no kernel message; see $out/l1-console.log" |
			tee "$out/l1-reset.log" >&2
	else
		echo "run-l1: L1 ended while running the script (qemu exit $rc); see $out/l1-console.log" >&2
	fi
	exit 1
fi
rc=$(cat "$out/l1-exit-code")
if ! "$here/splat-check.sh" "$out"/*.log "$out"/*/*.log; then
	echo "run-l1: kernel splat in the logs above" >&2
	[ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
