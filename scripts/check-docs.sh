#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every Documentation/*.rst must build with docutils without a warning.
set -u
cd "$(dirname "$0")/.."
n=0 pass=0 fail=0
echo "KTAP version 1"
echo "1..$(ls Documentation/*.rst | wc -l)"
for f in Documentation/*.rst; do
	n=$((n + 1))
	out=$(rst2html --report=2 --halt=5 "$f" 2>&1 > /dev/null)
	if [ -z "$out" ]; then
		pass=$((pass + 1)); echo "ok $n $f"
	else
		fail=$((fail + 1)); printf '# %s\n' "$out" | head -5; echo "not ok $n $f"
	fi
done
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
