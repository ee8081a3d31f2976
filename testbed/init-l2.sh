#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the test bed's L2 ("guest"): load modules, run one script from this image.
#
# Kernel command line:
#   vtrace_run=SCRIPT   path inside this image of the script to run
#   vtrace_arg=ARG      passed to SCRIPT as $1
# The script's output goes to the console, which L1's QEMU writes to a file.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t tmpfs tmpfs /tmp

for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m || echo "vtrace-testbed: insmod $m failed"
done

# With l2_start --hostroot, L1's root (the outer machine's) is at /host.
mkdir -p /host
if mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host 2>/dev/null; then
	# chroot /host works like a full system: kernel file systems, writable tmp
	mount --rbind /proc /host/proc
	mount --rbind /sys /host/sys
	mkdir -p /dev/shm
	mount --rbind /dev /host/dev
	mount -t tmpfs tmpfs /host/dev/shm
	mount -t tmpfs tmpfs /host/tmp
	mount -t tmpfs tmpfs /host/run
else
	rmdir /host
fi

run= arg=
for w in $(cat /proc/cmdline); do
	case "$w" in
	vtrace_run=*)	run=${w#vtrace_run=} ;;
	vtrace_arg=*)	arg=${w#vtrace_arg=} ;;
	esac
done

# the bed's heartbeat (testbed/l2-watch.sh): uptime on the second serial
# port every 5 s, so that L1 notices within a minute a guest that stopped.
# Also the kernel's release and where this boot put the kernel and each
# module (KASLR), again when modules come and go: testbed/l2-stack.py names
# the functions a spinning guest's vCPUs are in with them (a module loaded
# again at another address: the last line counts).  What the loop costs
# lands in every benchmark window, so it starts no program (a busybox start
# costs dozens of CPUID exits here: bench/transport.sh's CPUID exits per MB
# went from 9 to 15 with a sed every 5 s) and writes a module's line once,
# when it first shows at that address, not the whole list on each change
# (every byte is I/O exits: 1,000 more in each vtrace_guest window, which
# loads and unloads the module).
if [ -c /dev/ttyS1 ]; then
	( (
		read -r rel < /proc/sys/kernel/osrelease
		echo "kernel $rel"
		sed -n '/ T _text$/{s/ .*//;s/^/text /;p;q}' /proc/kallsyms
		seen=,
		while :; do
			while read -r m size _ _ _ addr _; do
				l="module $m ${addr#0x} $size"
				case "$seen" in
				*",$l,"*) ;;
				*) echo "$l"; seen="$seen$l," ;;
				esac
			done < /proc/modules
			read -r up _ < /proc/uptime
			echo "$up"
			sleep 5
		done
	) 2>/dev/null > /dev/ttyS1 &)
fi

rc=1
if [ -n "$run" ]; then
	echo "vtrace-testbed: L2 up, running $run"
	sh "$run" "$arg"
	rc=$?
fi
echo "vtrace-testbed: L2 script exit $rc"
sync
poweroff -f
