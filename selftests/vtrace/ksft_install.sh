#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install of selftests/vtrace: the kselftest collection folder DIR.
#
#   ksft_install.sh DIR L2_KVER FILE...
#
# DIR gets the FILEs (the ksft_*.sh tests, ksft_run.sh, settings, config)
# and DIR/proj/, what the suites use of the tree: testbed/*.sh (lib.sh and
# the scripts it runs), selftests/vtrace/ (l1/ suites, libraries, checkers), the
# tools, the protocol header, vtrace_host.ko as built here (used only when
# no vtrace_host is installed), and the guest image for L2_KVER (busybox,
# vtrace_guest.ko, the guest scripts).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proj=$(cd "$here/../.." && pwd)
dir=$1 l2kver=$2
shift 2
[ -n "$l2kver" ] || { echo "ksft_install: no guest kernel: build the modules or pass L2_KVER=" >&2; exit 1; }

"$proj/testbed/build-l2.sh" "$l2kver"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/proj"
p=$dir/proj
mkdir -p "$p/testbed" "$p/selftests/vtrace" "$p/user" "$p/include/uapi/linux" \
	"$p/build/testbed" "$p/build/helpers" "$p/kmod/host"
(cd "$here" && cp "$@" "$dir/")
cp "$proj"/testbed/*.sh "$p/testbed/"
cp -r "$here/l1" "$here"/*.sh "$here"/*.py "$p/selftests/vtrace/"
cp "$proj/user/vtrace" "$proj/user/vtrace-merge" "$p/user/"
cp "$proj/include/uapi/linux/vtrace.h" "$p/include/uapi/linux/"
cp "$proj"/build/helpers/* "$p/build/helpers/"
cp "$proj/kmod/host/vtrace_host.ko" "$p/kmod/host/"
cp "$proj/build/testbed/initramfs-l2-$l2kver.cpio.gz" "$p/build/testbed/"
echo "ksft_install: $dir ($(du -sh "$dir" | cut -f1)), guest kernel $l2kver"
