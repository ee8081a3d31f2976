#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-reference.sh: every output of vtrace-merge and vtrace dat on fixed captures, byte for
# byte as recorded in reference.sha256 (one line per output: its name, the SHA-256 of its
# stdout, of its stderr with the temporary folder's path taken out, and its exit status).
#
# The captures are gen.py's (seeded: the same bytes on every run) and the real L2 fixture;
# the outputs are the text timeline, jsonl, --stats, --explain as text and jsonl, the
# perfetto and svg files, and every file vtrace dat writes.  A change of the code that
# is not meant to change what users get must leave them all the same; one that is meant
# to change an output updates the references, and its commit says which and why:
#
#   bash test-reference.sh --update     (in user/tests, after make)
cd "$(dirname "$0")" || exit 1
. ./merge-lib.sh
V=${VTRACE_BINDIR:-$here/..}/vtrace
REF=$here/reference.sha256
update=${1:-}
got=$T/got.sha256

sha() { sha256sum | cut -d' ' -f1; }

# out NAME PROGRAM ARGS...: one line of the outputs
out() {
	local name=$1 rc
	shift
	timeout 60 "$@" > "$T/o" 2> "$T/e"
	rc=$?
	echo "$name $(sed "s|$T|T|g" "$T/o" | sha) $(sed "s|$T|T|g" "$T/e" | sha) $rc" >> "$got"
}

# merge_outputs NAME ARGS...: vtrace-merge's outputs of one capture
merge_outputs() {
	local name=$1
	shift
	out "$name.text" "$M" "$@"
	out "$name.jsonl" "$M" "$@" --format jsonl
	out "$name.stats" "$M" "$@" --stats
	out "$name.perfetto" "$M" "$@" --format perfetto
	out "$name.explain" "$M" "$@" --explain --worst 3
	out "$name.explain-jsonl" "$M" "$@" --explain --worst 1000 --format jsonl
	out "$name.explain-svg" "$M" "$@" --explain --format svg
}

# dat_outputs NAME ARGS...: vtrace dat's files of one capture, each a line
dat_outputs() {
	local name=$1 f
	shift
	rm -rf "$T/dat"
	out "$name.dat" "$V" dat "$@" --out "$T/dat"
	# kernelshark.json holds each data file's modification time: taken out
	for f in $(cd "$T/dat" 2> /dev/null && ls); do
		echo "$name.dat/$f $(sed -e "s|$T|T|g" -e 's/"time": [0-9]*/"time": 0/' "$T/dat/$f" |
			sha) - -" >> "$got"
	done
}

: > "$got"
for s in basic explain_mix explain_migrate explain_exits kvm_lost two_vms; do
	$GEN make "$T/$s" "$s" --events 100 > /dev/null || { ok 1 "reference_gen_$s"; continue; }
	args=(--host "$T/$s/host" $(guests "$T/$s") --offsets "$T/$s/tsc_offsets")
	merge_outputs "$s" "${args[@]}"
done
R=fixtures/real-l2
merge_outputs real-l2 --host $R/host.dat --guest l2=$R --offsets $R/tsc_offsets
dat_outputs real-l2 --host $R/host.dat --guest l2=$R --offsets $R/tsc_offsets

if [ "$update" = --update ]; then
	cp "$got" "$REF"
	echo "# $(wc -l < "$REF") references written to $REF"
	exit 0
fi
# one result per output, named after it: same bytes, same exit status
while read -r name o e rc; do
	want=$(awk -v n="$name" '$1 == n { print $2, $3, $4 }' "$REF")
	[ "$want" = "$o $e $rc" ]
	ok $? "reference_$name" "$([ -z "$want" ] && echo "no reference" ||
		echo "differs from reference.sha256 (stdout/stderr/exit): bash test-reference.sh --update, if meant")"
done < "$got"
# and no reference is left without its output
[ "$(cut -d' ' -f1 "$REF" | sort)" = "$(cut -d' ' -f1 "$got" | sort)" ]
ok $? reference_outputs_all_made "$(diff <(cut -d' ' -f1 "$REF" | sort) <(cut -d' ' -f1 "$got" | sort) | head -5 | tr '\n' ' ')"
echo "# totals: $n tests"
