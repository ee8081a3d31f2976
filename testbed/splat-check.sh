#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fail (exit 1) when a kernel log shows a WARNING, BUG, Oops, lockdep or RCU splat.
#
#   splat-check.sh LOG...
# Prints each offending line with its file name.
pattern='\] WARNING:|^WARNING:|BUG:|Oops|general protection fault|Kernel panic|kernel BUG at|'
pattern+='possible circular locking|possible recursive locking|inconsistent lock state|'
pattern+='lockdep|INFO: rcu_.*detected stall|rcu: INFO:|self-detected stall|'
pattern+='INFO: task .* blocked for more than|UBSAN:|KASAN:|kmemleak:|'
pattern+='Call Trace:|unreferenced object'
rc=0
for f in "$@"; do
	[ -f "$f" ] || continue
	if grep -aEn "$pattern" "$f" > /dev/null; then
		grep -aEn "$pattern" "$f" | head -20 | sed "s|^|$f:|"
		rc=1
	fi
done
exit $rc
