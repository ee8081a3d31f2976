#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install / uninstall into a scratch root, and DKMS builds for each kernel given.
#
#   install.sh KVER...
# DKMS runs with its own trees under build/dkms (nothing of the system's is
# touched); the modules it builds for KVER land in
# build/dkms/inst/KVER/updates/dkms/ and, uncompressed, in
# build/dkms/modules/KVER/, where the VM tests for a second kernel load them.  KTAP output, ends with "install: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
proj=$PWD
mkdir -p build
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
. testbed/ktap.sh
ktap_header $((4 + 2 * $#))

kver=$(testbed/default-kver.sh)
root=$proj/build/inst
rm -rf "$root"
make -s install DESTDIR="$root" > build/install.log 2>&1
ktap_result $? "make_install"

ok=0
for m in guest host; do
	ko=$root/lib/modules/$kver/updates/vtrace/kmod/$m/vtrace_$m.ko
	[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$kver" ] || ok=1
done
for t in vtrace-merge vtrace; do
	"$root/usr/local/bin/$t" --help > /dev/null 2>&1 || ok=1
done
[ -f "$root/usr/local/share/man/man1/vtrace-merge.1" ] || ok=1
ktap_result $ok "installed_modules_tools_man"

make -s uninstall DESTDIR="$root" >> build/install.log 2>&1
ktap_result $? "make_uninstall"
left=$(find "$root" -type f 2>/dev/null | wc -l)
[ -d "$root" ] && [ "$left" -eq 0 ]
ktap_result $? "uninstall_leaves_nothing"

D=(--sourcetree "$proj/build/dkms/src" --dkmstree "$proj/build/dkms/tree"
   --installtree "$proj/build/dkms/inst")
rm -rf build/dkms
mkdir -p "build/dkms/src/vtrace-$version" build/dkms/tree
git ls-files Kbuild dkms.conf kmod include | cpio -pdm --quiet "build/dkms/src/vtrace-$version"
dkms add -m vtrace -v "$version" "${D[@]}" > build/dkms.log 2>&1
for k in "$@"; do
	mkdir -p "build/dkms/inst/$k"
	dkms build -m vtrace -v "$version" -k "$k" "${D[@]}" >> build/dkms.log 2>&1 &&
		dkms install -m vtrace -v "$version" -k "$k" "${D[@]}" >> build/dkms.log 2>&1
	ktap_result $? "dkms_build_install_$k"
	# DKMS compresses modules where the kernel does (6.12: .ko.xz); the test
	# bed's busybox insmod wants them plain: build/dkms/modules/KVER/*.ko
	ok=0
	mkdir -p "build/dkms/modules/$k"
	for m in guest host; do
		ko=build/dkms/modules/$k/vtrace_$m.ko
		src=build/dkms/inst/$k/updates/dkms/vtrace_$m.ko
		if [ -f "$src.xz" ]; then
			xz -dc "$src.xz" > "$ko" || ok=1
		else
			cp "$src" "$ko" || ok=1
		fi
		[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$k" ] || ok=1
	done
	ktap_result $ok "dkms_modules_match_$k"
done
[ "$ktap_fail" -eq 0 ] || echo "# logs: build/install.log build/dkms.log"
echo "install: $ktap_pass passed, $ktap_fail failed"
[ "$ktap_fail" -eq 0 ]
