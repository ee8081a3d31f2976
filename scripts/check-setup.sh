#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's "setup" part: the build's kernel-tree detection as a fresh
# machine meets it.  A fake root (VTRACE_SYSROOT) starts with no kernel
# headers; `make demo` runs with a DEPS_CMD that installs fake Debian headers
# there (a stub kbuild) and a DEMO_CMD that prints what it was given: the
# first `make demo` must find the headers deps just installed; so must the
# first `make check` (its modules part: CHECK_PARTS=modules).  KTAP.
set -u
cd "$(dirname "$0")/.."
proj=$PWD
root=$(mktemp -d /tmp/vtrace-sysroot.XXXXXX)
trap 'rm -rf "$root"' EXIT
rel=9.9.9-vtrace-test-amd64
hdr=$root/usr/src/linux-headers-$rel
n=0 pass=0 fail=0

check() {	# check NAME CONDITION-RC DETAIL...
	local name=$1 rc=$2
	shift 2
	n=$((n + 1))
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1)); echo "ok $n $name"
	else
		fail=$((fail + 1)); printf '# %s\n' "$@"; echo "not ok $n $name"
	fi
}

# What `apt-get install linux-headers-amd64` leaves: a configured build tree
# whose Makefile builds external modules.  The stub only says it was asked.
cat > "$root/install-headers.sh" <<EOS
#!/bin/sh
mkdir -p "$hdr/include/generated"
echo '#define UTS_RELEASE "$rel"' > "$hdr/include/generated/utsrelease.h"
printf 'CONFIG_%s=y\n' TRACING RING_BUFFER DEBUG_FS TRACEPOINTS VIRTIO_CONSOLE KVM X86_64 > "$hdr/.config"
printf 'modules:\n\t@echo "stub kbuild: modules in \$(CURDIR) M=\$(M)"\n' > "$hdr/Makefile"
echo "fake deps: installed $hdr"
EOS
chmod +x "$root/install-headers.sh"
mkdir -p "$root/lib/modules" "$root/usr/src"

echo "KTAP version 1"
echo "1..7"
out=$(VTRACE_SYSROOT=$root scripts/kdir.sh 2>&1)
rc=$?
[ "$rc" -eq 1 ] && [ -z "$out" ]
check "no headers yet: kdir.sh defers (exit 1, prints nothing)" $? "rc $rc, printed: $out"

out=$(VTRACE_SYSROOT=$root make -s --no-print-directory help 2>&1)
check "no headers yet: the Makefile parses" $? "$out"

out=$(VTRACE_SYSROOT=$root KDIR= KVER= make -s --no-print-directory demo \
	DEPS_CMD="$root/install-headers.sh" DEMO_CMD='echo demo KVER=$$KVER KDIR=$$KDIR' 2>&1)
rc=$?
sed 's/^/# /' <<< "$out" | head -20
check "first make demo: exit 0" $rc "rc $rc"
grep -qxF "stub kbuild: modules in $hdr M=$proj" <<< "$out"
check "first make demo: modules built against the headers deps installed" $? \
	"no line 'stub kbuild: modules in $hdr M=$proj'"
grep -qxF "demo KVER=$rel KDIR=$hdr" <<< "$out"
check "first make demo: the demo gets KVER=$rel KDIR=$hdr" $? "no line 'demo KVER=$rel KDIR=$hdr'"

# and make check, its first command too: its parts' makes find them (the
# modules part, W=1 as always), in a copy of the build's files (its logs go
# to build/: not over the real run's; no other part could run there)
rm -rf "$hdr"
tree=$root/tree
mkdir -p "$tree/testbed" "$tree/scripts" "$tree/kmod/guest" "$tree/kmod/host"
cp -r Makefile Kbuild dkms.conf include "$tree/"
cp scripts/kdir.sh scripts/check.sh scripts/check-kconfig.sh scripts/check-layers.sh \
	scripts/check-kdoc.sh "$tree/scripts/"
cp testbed/ktap.sh "$tree/testbed/"
cp testbed/default-kver.sh "$tree/testbed/"
# the modules part checks their layers and kernel-doc too (the stub headers have
# no kernel-doc: the real tree's)
cp kmod/guest/*.[ch] "$tree/kmod/guest/"
cp kmod/host/*.[ch] "$tree/kmod/host/"
rm -f "$tree"/kmod/*/*.mod.c
out=$(cd "$tree" && KERNELDOC=$(scripts/kdir.sh)/scripts/kernel-doc \
	VTRACE_SYSROOT=$root KDIR= KVER= make -s --no-print-directory check \
	DEPS_CMD="$root/install-headers.sh" CHECK_PARTS=modules 2>&1)
rc=$?
sed 's/^/# /' <<< "$out" | head -20
[ $rc -eq 0 ] && grep -qxF "stub kbuild: modules in $hdr M=$tree" <<< "$out" &&
	grep -qE '^modules: [1-9][0-9]* passed, 0 failed' <<< "$out"
check "first make check: its modules part builds against the headers deps installed" $? \
	"rc $rc; no line 'stub kbuild: modules in $hdr M=$tree' or 'modules: N passed, 0 failed'"

# the running kernel's own build tree wins; KVER=... names its tree
mkdir -p "$root/lib/modules/$(uname -r)/build"
touch "$root/lib/modules/$(uname -r)/build/Makefile"
a=$(VTRACE_SYSROOT=$root scripts/kdir.sh) b=$(VTRACE_SYSROOT=$root scripts/kdir.sh 1.2.3)
[ "$a" = "$root/lib/modules/$(uname -r)/build" ] && [ "$b" = "$root/lib/modules/1.2.3/build" ]
check "kdir.sh: running kernel's tree first, KVER=... its own" $? "got '$a' and '$b'"

echo "setup: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
