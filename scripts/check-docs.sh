#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every Documentation/*.rst must build with docutils without a warning; every
# Documentation/FILE the README and the docs name must exist; what users read
# names no path of the machine the docs were written on (/work/...), no run id
# (ci29) and no date of a run: measurements say what they are, not when.
set -u
cd "$(dirname "$0")/.."
n=0 pass=0 fail=0
docs=(README.md Documentation/*.rst Documentation/man/*.rst)
echo "KTAP version 1"
echo "1..$(($(ls Documentation/*.rst Documentation/man/*.rst | wc -l) + 5))"
builds() {	# builds TOOL FILE: one result, FILE builds with docutils' TOOL without a warning
	local out
	n=$((n + 1))
	out=$("$1" --report=2 --halt=5 "$2" 2>&1 > /dev/null)
	if [ -z "$out" ]; then
		pass=$((pass + 1)); echo "ok $n $2"
	else
		fail=$((fail + 1)); printf '# %s\n' "$out" | head -5; echo "not ok $n $2"
	fi
}
for f in Documentation/*.rst; do
	builds rst2html "$f"
done
# the man pages (Documentation/man/NAME.S.rst) build with rst2man without a warning
for f in Documentation/man/*.rst; do
	builds rst2man "$f"
done
# internal references: this project's Documentation/NAME.rst and images/ named in a doc exist
# (Documentation/SUBDIR/... is the kernel tree's)
n=$((n + 1))
bad=$(grep -Hno 'Documentation/\(images/\)\?[A-Za-z0-9_.-]*\.\(rst\|png\|svg\)' "${docs[@]}" |
      while IFS=: read -r file line ref; do [ -e "$ref" ] || echo "$file:$line: $ref does not exist"; done)
if [ -z "$bad" ]; then
	pass=$((pass + 1)); echo "ok $n internal references"
else
	fail=$((fail + 1)); printf '# %s\n' "$bad" | head -10; echo "not ok $n internal references"
fi
n=$((n + 1))
bad=$(grep -Hn '/work/' "${docs[@]}")
if [ -z "$bad" ]; then
	pass=$((pass + 1)); echo "ok $n no paths of the machine the docs were written on"
else
	fail=$((fail + 1)); printf '# %s\n' "$bad" | head -10; echo "not ok $n no paths of the machine the docs were written on"
fi
n=$((n + 1))
bad=$(grep -HnEi '\bci[0-9]+\b|\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b|validation run|\bissue [0-9]+' "${docs[@]}")
if [ -z "$bad" ]; then
	pass=$((pass + 1)); echo "ok $n no run ids, dates of runs or issue numbers"
else
	fail=$((fail + 1)); printf '# %s\n' "$bad" | head -10; echo "not ok $n no run ids, dates of runs or issue numbers"
fi
# example commands: every --option of a "$ vtrace ..." or "$ vtrace-merge ..." line is one
# the tool's (or its subcommand's) --help names
n=$((n + 1))
[ -x user/vtrace ] && [ -x user/vtrace-merge ] || make -s -C user > /dev/null 2>&1
bad=$(grep -Hn '^ *\$ vtrace\(-merge\)\? ' "${docs[@]}" | while IFS= read -r hit; do
	cmd=${hit#*\$ }
	read -r tool sub _ <<< "$cmd"
	if [ "$tool" = vtrace ]; then help=$(user/vtrace "$sub" --help 2>&1); else help=$(user/vtrace-merge --help 2>&1); fi
	for opt in $(grep -o -- '--[a-z][a-z0-9-]*' <<< "$cmd" | sort -u); do
		grep -q -- "$opt\b" <<< "$help" || echo "${hit%%\$*}: $tool $([ "$tool" = vtrace ] && echo "$sub ")has no option $opt"
	done
done)
if [ -z "$bad" ]; then
	pass=$((pass + 1)); echo "ok $n example commands name existing options"
else
	fail=$((fail + 1)); printf '# %s\n' "$bad" | head -10; echo "not ok $n example commands name existing options"
fi
# the man page of vtrace-merge documents every option its --help lists
n=$((n + 1))
bad=$(for opt in $(user/vtrace-merge --help 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
	grep -q -- "\*\*$opt\*\*" Documentation/man/vtrace-merge.1.rst || echo "$opt"
done)
if [ -z "$bad" ]; then
	pass=$((pass + 1)); echo "ok $n vtrace-merge(1) documents every option of vtrace-merge --help"
else
	fail=$((fail + 1)); echo "# not in Documentation/man/vtrace-merge.1.rst:" $bad; echo "not ok $n vtrace-merge(1) documents every option of vtrace-merge --help"
fi
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
