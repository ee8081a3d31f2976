#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the test bed's L1 ("host"): mount the outer machine, run one script there.
#
# Kernel command line:
#   vtrace_run=SCRIPT   absolute path (outer file system) of the bash script to run
#   vtrace_out=DIR      absolute path of the results folder (inside the project)
#   vtrace_proj=DIR     absolute path of the project tree (exported read-write)
#   vtrace_arg=ARG      passed to SCRIPT as $1
#   vtrace_kmod=DIR     modules to test (VTRACE_KMOD_DIR), default: the tree's
#   vtrace_l2kver=KVER  kernel of the L2 guests (L2_KVER), default: L1's
#   vtrace_l2wd=SEC     the L2 boot watchdog (L2_BOOT_WATCHDOG)
#   vtrace_qemu=PATH    the L2 guests' QEMU (VTRACE_QEMU), default: the outer root's
/bin/busybox --install -s /bin
export PATH=/bin:/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# what udev makes on a real host, and scripts expect (kselftest's runner
# appends to /dev/stdout)
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr

for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m || echo "vtrace-testbed: insmod $m failed"
done

run= out= proj= arg= kmod= l2kver= l2wd= qemu= pin=1
for w in $(cat /proc/cmdline); do
	case "$w" in
	vtrace_run=*)	run=${w#vtrace_run=} ;;
	vtrace_out=*)	out=${w#vtrace_out=} ;;
	vtrace_proj=*)	proj=${w#vtrace_proj=} ;;
	vtrace_arg=*)	arg=${w#vtrace_arg=} ;;
	vtrace_kmod=*)	kmod=${w#vtrace_kmod=} ;;
	vtrace_l2kver=*) l2kver=${w#vtrace_l2kver=} ;;
	vtrace_l2wd=*)	l2wd=${w#vtrace_l2wd=} ;;
	vtrace_qemu=*)	qemu=${w#vtrace_qemu=} ;;
	vtrace_nopin)	pin= ;;
	esac
done

mkdir -p /host /proj
# The outer root is read-only and does not change during a run: L1 caches
# it (cache=loose).  Uncached, every QEMU start looked up and read its
# libraries over 9p again: "qemu-system-x86_64 --version" took 4.0 s in L1,
# a machine set up and quit 8-9 s; cached 0.5 s and 1.0 s.  The project
# tree, which L1 writes and the outer machine reads, stays uncached.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host ||
	echo "vtrace-testbed: cannot mount the outer root"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none project /proj ||
	echo "vtrace-testbed: cannot mount the project tree"

mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount --rbind /sys /host/sys
mount --rbind /dev /host/dev
mount -t proc proc /host/proc
mount -t tmpfs tmpfs /host/run
mount -t tmpfs tmpfs /host/tmp
# A project under /tmp or /run (a clone made to try vtrace) lies below a
# tmpfs just mounted: its mount point is made there.  Elsewhere it exists.
[ -d "/host$proj" ] || mkdir -p "/host$proj"
if ! mount --bind /proj "/host$proj"; then
	echo "vtrace-testbed: cannot bind the project tree at $proj"
	run=
fi

# the bed's heartbeat (testbed/run-l1.sh): uptime on the second serial port
# every 5 s.  Also where this boot put the kernel and each module (KASLR),
# again when modules come and go, and, once per kernel and set of modules,
# a copy of /proc/kallsyms (about 1 s of L1's time): testbed/l1-cpus.py
# names the functions a stalled L1's CPUs are in with them.  Our own modules
# change with every build: they are named, not looked up.
ks=/proj/build/testbed/l1-kallsyms-$(uname -r)
( (
	sed -n 's/^\([0-9a-f]*\) T _text$/text \1/p' /proc/kallsyms
	seen=
	while :; do
		mods=$(sed -n 's/^\([a-z0-9_]*\) \([0-9]*\) .* 0x\([0-9a-f]*\).*$/module \1 \3 \2/p' /proc/modules)
		if [ "$mods" != "$seen" ]; then
			echo "$mods"
			seen=$mods
			for m in $(echo "$mods" | cut -d' ' -f2 | grep -v '^vtrace_'); do
				grep -qs "^module $m " "$ks" && continue
				{ echo "$mods"; cat /proc/kallsyms; } > /tmp/ks &&
					dd if=/tmp/ks of="$ks.new" bs=1M 2>/dev/null && mv "$ks.new" "$ks"
				rm -f /tmp/ks
				break
			done
		fi
		cut -d' ' -f1 /proc/uptime
		sleep 5
	done
) 2>/dev/null > /dev/ttyS1 &)

# an idle VM for the whole run (testbed/kvm-pin.py): KVM's static keys stay
# on, no text patch in L1 per guest
if [ -n "$run" ] && [ -n "$pin" ]; then
	chroot /host /sbin/modprobe kvm_amd
	chroot /host /usr/bin/env -i PATH=/usr/bin:/bin /usr/bin/python3 "$proj/testbed/kvm-pin.py" \
		> /tmp/kvm-pin.txt 2>&1 &
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -s /tmp/kvm-pin.txt ] && break
		sleep 0.5
	done
	echo "vtrace-testbed: $(cat /tmp/kvm-pin.txt)"
fi

rc=1
if [ -n "$run" ]; then
	echo "vtrace-testbed: L1 up, running $run"
	(chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		VTRACE_OUT="$out" VTRACE_PROJ="$proj" VTRACE_IN_L1=1 VTRACE_KMOD_DIR="$kmod" L2_KVER="$l2kver" \
		L2_BOOT_WATCHDOG="$l2wd" VTRACE_QEMU="$qemu" \
		/bin/bash "$run" "$arg"; echo $? > /tmp/rc) > "/host$out/l1-script.out" 2>&1
	rc=$(cat /tmp/rc)
	echo "$rc" > "/host$out/l1-exit-code"
fi
echo "vtrace-testbed: script exit $rc"
sync
umount "/host$proj" 2>/dev/null
umount /proj 2>/dev/null
poweroff -f
