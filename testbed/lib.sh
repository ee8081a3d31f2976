# SPDX-License-Identifier: GPL-2.0
# Helpers for test scripts that run inside the test bed's L1: KTAP output, L2 guests.
#
# Source it from a bash script started by run-l1.sh:
#   . "$VTRACE_PROJ/testbed/lib.sh"
# (scripts/check-libvirt.sh, on this machine, takes its KTAP helpers and
# L2_CMDLINE too.)
# Environment set by init-l1.sh: VTRACE_OUT (results folder), VTRACE_PROJ.

VTRACE_PROJ=${VTRACE_PROJ:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
VTRACE_OUT=${VTRACE_OUT:-$VTRACE_PROJ/build/testbed/manual}
KVER=${KVER:-$(uname -r)}
# The guest's kernel: L1's own unless L2_KVER names another installed one
L2_KVER=${L2_KVER:-$KVER}
L2_INITRD=${L2_INITRD:-$VTRACE_PROJ/build/testbed/initramfs-l2-$L2_KVER.cpio.gz}
# The start of every L2 guest's kernel command line.  The crypto self-tests
# (cryptomgr.notests) took 2-5 s of each guest's boot under the nesting,
# for algorithms no test uses
L2_CMDLINE="console=ttyS0 panic=-1 loglevel=6 cryptomgr.notests"
# The host module under test: the tree's, or VTRACE_KMOD_DIR/vtrace_host.ko
# (e.g. what DKMS built for this kernel).
if [ -n "${VTRACE_KMOD_DIR:-}" ]; then
	VTRACE_HOST_KO=$VTRACE_KMOD_DIR/vtrace_host.ko
else
	VTRACE_HOST_KO=$VTRACE_PROJ/kmod/host/vtrace_host.ko
fi

# ---- KTAP ---------------------------------------------------------------

# testbed/ktap.sh; a failed suite ends with every guest's console tail
ktap_on_fail=l2_console_tails
KTAP_TIMES=1	# each result with its seconds: where a suite's time goes
. "$VTRACE_PROJ/testbed/ktap.sh"
. "$VTRACE_PROJ/testbed/qemu-monitor.sh"

# l2_console_tails: the last lines of every guest's console and QEMU log, so
# that a failed suite's own output (all a CI log may keep) shows how each
# guest ended
l2_console_tails() {
	local f
	for f in "$VTRACE_OUT"/*/console.log; do
		[ -f "$f" ] || continue
		echo "# ---- last lines of $(basename "$(dirname "$f")")'s console and QEMU log"
		tail -n 25 "$f" | sed 's/\r$//; s/^/# | /'
		tail -n 5 "$(dirname "$f")/qemu.log" 2>/dev/null | sed 's/^/# qemu: /'
	done
}

# ---- kernel logs --------------------------------------------------------

# Save L1's dmesg into the results folder (splat-check.sh reads *.log there).
save_dmesg() {	# save_dmesg NAME
	dmesg > "$VTRACE_OUT/$1.log"
}

# ---- L2 guests ----------------------------------------------------------

# l2_drop_name ARRAY: ARRAY (a QEMU command line) without its "-name VALUE"
l2_drop_name() {
	local -n a=$1
	local out=() i
	for ((i = 0; i < ${#a[@]}; i++)); do
		if [ "${a[i]}" = -name ]; then
			i=$((i + 1))
			continue
		fi
		out+=("${a[i]}")
	done
	a=("${out[@]}")
}

# l2_start NAME SCRIPT [options]: start a guest in the background.
#   --cpus N        vCPUs (default 2)
#   --mem MIB       memory (default 512)
#   --ports N       data ports vtrace.cpu0..N-1 (default: --cpus), 0 for none
#   --ctl file|socket|none   how the host end of vtrace.ctl is made (default file)
#   --prefix P      port name prefix (default vtrace)
#   --arg ARG       passed to SCRIPT as $1
#   --timeout SEC   bound on the guest's life (default 300)
#   --hostroot      share L1's root (the outer root) read-only over 9p; the
#                   guest mounts it at /host (trace-cmd, cyclictest live there)
#   --qemu "ARGS"   extra QEMU arguments, word-split
#   --monitor       a human-monitor socket, /run/vtrace-NAME.mon (l2_monitor)
#   --vtrace-args   take the ports from "vtrace qemu-args" (what users run)
#                   instead of building them here (--ports/--prefix ignored)
#   --data-dir DIR  host ends of the data ports (cpuK) in DIR instead of
#                   NAME/: e.g. L1's tmpfs, where QEMU writes them at memory
#                   speed rather than over the 9p share (benchmarks)
# L2_QEMU_PLAIN=1: no "-name NAME,debug-threads=on", as on a QEMU command line
# a kernel developer types: the vCPU threads keep QEMU's own name (the bed's
# watchdog then sees no "CPU K/KVM" thread of this guest to sample)
# L2's CPU is "host,xsave=off": KVM nested under TCG reports an XSAVE area size
# that does not match XCR0, and the guest kernel WARNs at boot with XSAVE on.
# Files land in $VTRACE_OUT/NAME/: console.log, ctl, cpuK, qemu.pid, qemu.log;
# with --ctl socket, the control socket is /run/vtrace-NAME.sock (QEMU is the
# server; unix sockets cannot live on the 9p share), linked from NAME/ctl.sock.
# Sets L2_PID to the pid of the timeout wrapper.
l2_start() {
	local name=$1 script=$2
	shift 2
	local cpus=2 mem=512 ports= ctl=file prefix=vtrace arg= tmo=300 hostroot= extra= vtargs=
	local ddir= mon=none
	while [ $# -gt 0 ]; do
		case "$1" in
		--hostroot)	hostroot=1; shift; continue ;;
		--monitor)	mon="unix:/run/vtrace-$name.mon,server=on,wait=off"; shift; continue ;;
		--vtrace-args)	vtargs=1; shift; continue ;;
		--qemu)		extra=$2 ;;
		--cpus)		cpus=$2 ;;
		--mem)		mem=$2 ;;
		--ports)	ports=$2 ;;
		--ctl)		ctl=$2 ;;
		--prefix)	prefix=$2 ;;
		--arg)		arg=$2 ;;
		--data-dir)	ddir=$2 ;;
		--timeout)	tmo=$2 ;;
		*)		echo "l2_start: unknown option $1" >&2; return 2 ;;
		esac
		shift 2
	done
	[ -n "$ports" ] || ports=$cpus
	local dir=$VTRACE_OUT/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	[ -n "$ddir" ] || ddir=$dir
	mkdir -p "$ddir"

	# debug-threads: vCPU threads are named "CPU K/KVM" on the host
	local args=(-enable-kvm -cpu "${L2_CPU:-host,xsave=off}" -smp "$cpus" -m "$mem"
		-display none -no-reboot -monitor "$mon"
		-serial "file:$dir/console.log"
		-kernel "/boot/vmlinuz-$L2_KVER" -initrd "$L2_INITRD"
		-append "$L2_CMDLINE ${L2_APPEND:-} vtrace_run=$script vtrace_arg=$arg")
	if [ -n "$vtargs" ]; then
		if [ "$ctl" = socket ]; then
			echo "l2_start: --vtrace-args puts the socket on the 9p share: use --ctl file" >&2
			return 2
		fi
		# shellcheck disable=SC2207
		args+=($("$VTRACE_PROJ/user/vtrace" qemu-args --cpus "$cpus" --out "$dir" \
			--name "$name")) || return 1
		# the data ports' files, path=DIR/cpuK, to --data-dir
		local a
		for a in "${!args[@]}"; do
			args[a]=${args[a]/",path=$dir/cpu"/",path=$ddir/cpu"}
		done
		ports=0 ctl=none
		[ -z "${L2_QEMU_PLAIN:-}" ] || l2_drop_name args
	else
		# as many ports as the guest has (the data ports, the control
		# port, one spare), as "vtrace qemu-args" gives: each port is two
		# virtqueues the guest's virtio_console sets up in its boot
		[ -n "${L2_QEMU_PLAIN:-}" ] || args+=(-name "$name,debug-threads=on")
		args+=(-pidfile "$dir/qemu.pid"
		       -device "virtio-serial-pci,id=vser0,max_ports=$((ports + 2))")
	fi
	case "$ctl" in
	file)	args+=(-chardev "file,id=vtctl,path=$dir/ctl") ;;
	socket)	# QEMU cannot create a unix socket on the 9p share: it lives in
		# L1's /run, and NAME/ctl.sock points to it
		ln -sf "/run/vtrace-$name.sock" "$dir/ctl.sock"
		args+=(-chardev "socket,id=vtctl,path=/run/vtrace-$name.sock,server=on,wait=off") ;;
	none)	;;
	esac
	[ "$ctl" = none ] ||
		args+=(-device "virtserialport,bus=vser0.0,chardev=vtctl,name=$prefix.ctl")
	[ -z "$hostroot" ] ||
		args+=(-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap)
	# shellcheck disable=SC2206
	[ -z "$extra" ] || args+=($extra)
	local k
	for ((k = 0; k < ports; k++)); do
		args+=(-chardev "file,id=vtc$k,path=$ddir/cpu$k"
		       -device "virtserialport,bus=vser0.0,chardev=vtc$k,name=$prefix.cpu$k")
	done
	l2_exec "$tmo" "$dir" "${args[@]}"
}

# l2_exec SEC DIR QEMU-ARGS...: run one L2 QEMU in the background, bounded by
# SEC seconds (L2_PID = the pid of the wrapper); its output goes to DIR/qemu.log.
# The arguments must write the console to DIR/console.log and the pid to
# DIR/qemu.pid.
#
# QEMU removes its -pidfile when it exits; a hard link keeps it and it is put
# back, so that DIR/qemu.pid still matches the guest to its offset records
# (vtrace-merge reads it) after the guest is gone.
#
# Watchdogs (testbed/l2-watch.sh): a guest that hangs or resets in its boot
# is started again (at most twice); one whose heartbeat stops after "L2 up"
# is killed within L2_HEARTBEAT_WATCHDOG seconds (default 60) and logged
# "l2 stalled" (vCPUs idle: the bed's lost wake-ups) or "l2 stuck busy"; a
# later reset is logged "l2 guest reset".  Findings land in DIR/qemu.log and
# $VTRACE_OUT/l2-boot-watchdog.txt, for testbed/bed-glitch.sh.
# L2_BOOT_WATCHDOG (default 60, 0 = all off): seconds of console silence
# before "L2 up".  Callers that wait for a guest's console give it at least
# L2_BOOT_WATCHDOG + 120 s.
l2_exec() {
	local tmo=$1 dir=$2 wd=${L2_BOOT_WATCHDOG:-60}
	shift 2
	# a restarted guest gets its whole time again
	timeout -k 5 $((tmo + 2 * wd)) "$VTRACE_PROJ/testbed/l2-watch.sh" "$dir" "$wd" \
		"${L2_HEARTBEAT_WATCHDOG:-60}" "$VTRACE_OUT/l2-boot-watchdog.txt" "$@" \
		> "$dir/qemu.log" 2>&1 &
	L2_PID=$!
}

# l2_vcpu_tid NAME K: host thread id of vCPU K of guest NAME.
l2_vcpu_tid() {
	local pid t
	pid=$(cat "$VTRACE_OUT/$1/qemu.pid") || return 1
	for t in /proc/"$pid"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "CPU $2/KVM" ]; then
			basename "$t"
			return 0
		fi
	done
	return 1
}

# l2_wait: wait for the guest started last; returns its QEMU exit status.
l2_wait() {
	local rc=0
	wait "$L2_PID" || rc=$?
	return $rc
}

# l2_wait_console NAME REGEX SECONDS: wait until guest NAME's console has a
# line matching REGEX; 1 at once when the guest started last has ended (a
# reset under -no-reboot), 1 after SECONDS.  Looks twice a second.
l2_wait_console() {
	local i
	for ((i = 0; i < $3 * 2; i++)); do
		grep -q "$2" "$VTRACE_OUT/$1/console.log" 2>/dev/null && return 0
		kill -0 "$L2_PID" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# l1_hold_events SYSTEM/EVENT...: keep these tracepoints registered for the
# rest of the L1 run, in two trace instances with tracing off, so that a
# trace-cmd record started and stopped while guests run patches no kernel
# text for them: a tracepoint with two probes or more calls them through
# its iterator, and a third probe added or removed switches no static key
# and no static call (Documentation/testbed.rst, text patching under TCG).
# vtrace_host's event only before any VM exists: a buffer that enables it
# gets a snapshot event per existing vCPU, which these (tracing off) never take.
l1_hold_events() {
	local i e d
	for i in 0 1; do
		d=/sys/kernel/tracing/instances/bed-hold$i
		mkdir -p $d && echo 0 > $d/tracing_on && echo 4 > $d/buffer_size_kb || return 1
		for e; do
			echo 1 > $d/events/$e/enable || return 1
		done
	done
}

# l2_run NAME SCRIPT [options]: l2_start + l2_wait.
l2_run() {
	l2_start "$@" || return
	l2_wait
}

# l2_ktap NAME: the guest script's KTAP lines (those it printed with "vtg: ").
l2_ktap() {
	sed -n 's/\r$//; s/^vtg: //p' "$VTRACE_OUT/$1/console.log"
}
