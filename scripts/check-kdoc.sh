#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's scripts/kernel-doc finds no fault in the modules' comments, and
# every function one file of a module calls in another has a kernel-doc comment.
#
#   scripts/check-kdoc.sh [DIR...]   default: kmod/guest kmod/host, then the
#                                    check itself on a copy of kmod/guest with
#                                    a parameter misnamed and a shared
#                                    function's comment made plain: both fail
#
# kernel-doc is the one of the tree the modules build against
# (scripts/kdir.sh; KERNELDOC=PATH another), run with -none over every .c
# and .h: any warning or error fails.  The functions called across files
# come from scripts/check-layers.sh --shared.  Prints KTAP: two tests per
# directory (and one for the self-check).
set -u
cd "$(dirname "$0")/.."
selfcheck=
if [ $# -eq 0 ]; then
	set -- kmod/guest kmod/host
	selfcheck=1
fi
kdoc=${KERNELDOC:-$(scripts/kdir.sh)/scripts/kernel-doc}

documented() {	# documented FILE NAME: FILE has a kernel-doc comment "NAME() - ..." for NAME
	awk -v name="$2" '
	prev == "/**" && ($0 ~ "^ \\* " name "\\(\\) - " || $0 ~ "^ \\* " name " - ") { found = 1 }
	{ prev = $0 }
	END { exit !found }' "$1"
}

. testbed/ktap.sh
ktap_header $(($# * 2 + ${selfcheck:-0}))
if [ ! -x "$kdoc" ]; then
	for ((i = 1; i <= $# * 2; i++)); do
		echo "not ok $i kernel-doc: $kdoc not found"
	done
	echo "kdoc: 0 passed, $(($# * 2)) failed"
	exit 1
fi
for dir in "$@"; do
	files=()
	for f in "$dir"/*.[ch]; do
		case "$f" in *.mod.c) ;; *) files+=("$f") ;; esac
	done
	out=$("$kdoc" -none "${files[@]}" 2>&1)
	rc=$?
	[ -z "$out" ] || sed 's/^/# /' <<< "$out"
	[ $rc -eq 0 ] && ! grep -qiE 'warning|error' <<< "$out"
	ktap_result $? "$dir: kernel-doc -none: no warning (${#files[@]} files)"
	missing=0 shared=0
	while read -r file name; do
		[ -n "$file" ] || continue
		shared=$((shared + 1))
		if ! documented "$file" "$name"; then
			echo "# $file: $name() is called from another file but has no kernel-doc comment"
			missing=$((missing + 1))
		fi
	done < <(scripts/check-layers.sh --shared "$dir")
	[ $missing -eq 0 ]
	ktap_result $? "$dir: kernel-doc on each of the $shared functions other files call"
done
if [ -n "$selfcheck" ]; then
	t=$(mktemp -d)
	cp kmod/guest/*.[ch] "$t/"
	rm -f "$t"/*.mod.c
	sed -i 's/^ \* @seq:\t/ * @sq:\t/; s/^ \* vtg_send_hello() - send HELLO/ * Send HELLO/' "$t/ctl.c"
	out=$(scripts/check-kdoc.sh "$t" 2>&1)
	rc=$?
	rm -rf "$t"
	sed 's/^/# self-check: /' <<< "$out" | grep -E "warning|no kernel-doc|^# self-check: (not )?ok"
	[ $rc -ne 0 ] && grep -q "not ok 1 .*kernel-doc -none" <<< "$out" &&
		grep -q "not ok 2 .*functions other files call" <<< "$out" &&
		grep -q "vtg_send_hello() is called from another file" <<< "$out" &&
		grep -q "'seq' not described in 'vtg_send_ack'" <<< "$out"
	ktap_result $? "the check fails on a misnamed parameter and on a plain comment"
fi
echo "kdoc: $ktap_pass passed, $ktap_fail failed"
[ "$ktap_fail" -eq 0 ]
