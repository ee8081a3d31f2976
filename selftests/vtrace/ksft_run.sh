#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run one host-side suite (selftests/vtrace/l1/SUITE.sh) in place, on this
# machine as the KVM host: kselftest's way, not the test bed's.
#
#   ksft_run.sh SUITE        (ksft_SUITE.sh calls it; kselftest runs those)
#
# Needs root, a working /dev/kvm, qemu-system-x86_64, the guest kernel
# /boot/vmlinuz-L2_KVER (default: this kernel) and vtrace_host for this
# kernel: VTRACE_KMOD_DIR/vtrace_host.ko if set, else the installed module
# (make install, make dkms-install), else the one built in the tree or
# shipped with the installed selftests.  The guest image (busybox,
# vtrace_guest.ko, the guest scripts) comes with the installed selftests, or
# is built from the tree.  A missing requirement: exit 4 (kselftest's skip)
# with the reason.  Results: KTAP on stdout, files in VTRACE_OUT (default:
# a new folder under /tmp, named in the output).
set -u
suite=$1
here=$(cd "$(dirname "$0")" && pwd)
if [ -d "$here/proj" ]; then
	proj=$here/proj	installed=1	# make install INSTALL_PATH=...
else
	proj=$(cd "$here/../.." && pwd) installed=	# in the tree
fi

skip() {
	echo "# SKIP $suite: $*"
	exit 4
}

vermagic() {	# vermagic KO: the release a module was built for
	case "$1" in
	*.xz)	xz -dc "$1" > "$tmpko" && modinfo -F vermagic "$tmpko" ;;
	*)	modinfo -F vermagic "$1" ;;
	esac 2>/dev/null | cut -d' ' -f1
}

uncompressed() {	# uncompressed KO DIR: DIR/NAME.ko, a plain copy of KO
	local name
	name=$(basename "${1%.xz}")
	mkdir -p "$2"
	case "$1" in
	*.xz)	xz -dc "$1" > "$2/$name" ;;
	*)	cp "$1" "$2/$name" ;;
	esac
}

kver=$(uname -r)
[ "$(id -u)" -eq 0 ] || skip "needs root (loads kvm and vtrace_host, reads debugfs)"
command -v qemu-system-x86_64 > /dev/null || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
kvm=kvm_amd
grep -qw vmx /proc/cpuinfo && kvm=kvm_intel
[ -c /dev/kvm ] || modprobe "$kvm" 2>/dev/null
[ -c /dev/kvm ] || skip "no /dev/kvm, modprobe $kvm failed: no hardware virtualisation (in a VM: enable nested virtualisation)"
python3 -c '' 2>/dev/null || skip "no python3 (the checkers are python)"
if grep -q '^vtrace_host ' /proc/modules 2>/dev/null; then
	skip "vtrace_host is loaded: the suites load and unload it themselves; rmmod vtrace_host first"
fi

l2kver=${L2_KVER:-$kver}
[ -r "/boot/vmlinuz-$l2kver" ] || skip "no guest kernel /boot/vmlinuz-$l2kver (set L2_KVER to an installed one)"

out=${VTRACE_OUT:-$(mktemp -d /tmp/vtrace-ksft-"$suite".XXXXXX)}
mkdir -p "$out"
tmpko=$out/.vermagic.ko

# Does KVM run a guest at all?  A 64 KiB BIOS whose reset vector writes 1
# to QEMU's isa-debug-exit port: QEMU then exits with status 3.
{ head -c 65520 /dev/zero; printf '\xb0\x01\xe6\xf4\xf4'; head -c 11 /dev/zero; } > "$out/kvm-probe.bin"
timeout -k 2 120 qemu-system-x86_64 -accel kvm -machine pc -nodefaults -display none -monitor none \
	-bios "$out/kvm-probe.bin" -device isa-debug-exit,iobase=0xf4,iosize=1 > "$out/kvm-probe.log" 2>&1
rc=$?
[ $rc -eq 3 ] || skip "QEMU -accel kvm does not run a guest here (exit $rc): $(grep -v warning "$out/kvm-probe.log" | head -1)"

# the host module under test
if [ -n "${VTRACE_KMOD_DIR:-}" ]; then
	ko=$VTRACE_KMOD_DIR/vtrace_host.ko
	[ -f "$ko" ] || skip "VTRACE_KMOD_DIR=$VTRACE_KMOD_DIR has no vtrace_host.ko"
elif ko=$(modinfo -n vtrace_host 2>/dev/null); then
	:
else
	ko=$proj/kmod/host/vtrace_host.ko
	[ -f "$ko" ] || skip "vtrace_host is not installed for $kver (make install or make dkms-install)"
fi
[ "$(vermagic "$ko")" = "$kver" ] || skip "$ko is built for '$(vermagic "$ko")', not $kver"
uncompressed "$ko" "$out/kmod"

# the guest: kernel and image
initrd=$proj/build/testbed/initramfs-l2-$l2kver.cpio.gz
if [ -n "$installed" ]; then
	# installed: the image made at install time
	[ -f "$initrd" ] ||
		skip "no guest image for $l2kver in $proj/build/testbed (install the selftests with L2_KVER=$l2kver)"
else
	# in the tree: made again when older than the guest module or scripts
	gko=$proj/kmod/guest/vtrace_guest.ko
	[ "$(vermagic "$gko")" = "$l2kver" ] || gko=$(modinfo -k "$l2kver" -n vtrace_guest 2>/dev/null)
	[ -n "$gko" ] && [ "$(vermagic "$gko")" = "$l2kver" ] ||
		skip "no vtrace_guest.ko for the guest kernel $l2kver (make modules, or make install)"
	if [ ! -f "$initrd" ] || [ -n "$(find "$gko" "$proj/selftests/vtrace/l2" -newer "$initrd" -print -quit)" ]; then
		uncompressed "$gko" "$out/gkmod"
		"$proj/testbed/build-l2.sh" "$l2kver" "$out/gkmod/vtrace_guest.ko" > "$out/build-l2.log" 2>&1 ||
			skip "cannot build the guest image: $(tail -1 "$out/build-l2.log")"
	fi
fi
rm -f "$tmpko"

echo "# vtrace $suite on $(uname -n) ($kver, $kvm), guest $l2kver, files in $out"
export VTRACE_PROJ=$proj VTRACE_OUT=$out KVER=$kver L2_KVER=$l2kver VTRACE_KMOD_DIR=$out/kmod
export L2_INITRD=$initrd
# a suite with a second half (the checks of what the first left in
# VTRACE_OUT, which run_vm_tests.sh runs on L0): here, in place, after it
second=$proj/selftests/vtrace/l0/$suite.sh
[ -f "$second" ] || exec bash "$proj/selftests/vtrace/l1/$suite.sh"
bash "$proj/selftests/vtrace/l1/$suite.sh"
rc=$?
echo "# $suite, second half: $second"
bash "$second" || [ $rc -ne 0 ] || rc=1
exit $rc
