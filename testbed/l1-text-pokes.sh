#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# l1-text-pokes.sh SUITE: run one L1 suite (selftests/vtrace/l1/SUITE.sh)
# and count L1's text patches meanwhile: a kprobe event on
# text_poke_bp_batch, with stack traces, in a trace instance of its own.
# Every static key, static call, tracepoint or kprobe switched in L1 goes
# through it, and under TCG each is a chance for a vCPU to run stale text
# (Documentation/testbed.rst).  Run it in L1:
#   testbed/run-l1.sh --out build/pokes testbed/l1-text-pokes.sh guest_accounting
# Output: the suite's, then "text-pokes: N calls" and one line per caller
# (count, first uptime, frames 4 to 7 of its stack);
# the raw trace in $VTRACE_OUT/text-pokes.trace.
T=/sys/kernel/tracing
I=$T/instances/text-pokes
echo 'p:text_pokes/tpb text_poke_bp_batch nr=%si:u32' >> $T/kprobe_events &&
	mkdir $I && echo 8192 > $I/buffer_size_kb && echo 1 > $I/options/stacktrace &&
	echo 1 > $I/events/text_pokes/tpb/enable ||
	{ echo "text-pokes: cannot set the kprobe event up"; exit 1; }
echo "# text-pokes: counting from uptime $(cut -d' ' -f1 /proc/uptime)"
bash "$VTRACE_PROJ/selftests/vtrace/l1/$1.sh"
rc=$?
echo 0 > $I/events/text_pokes/tpb/enable
cat $I/trace > "$VTRACE_OUT/text-pokes.trace"
awk '/^overrun:/ && $2 > 0 { print "text-pokes: ring overrun, counts too low" }' $I/per_cpu/cpu*/stats
awk '/ tpb: / { match($0, / [0-9]+\.[0-9]+: tpb:/); t = substr($0, RSTART + 1, RLENGTH - 7)
		n = 0; calls++; next }
	/^ => / { n++; if (n >= 4 && n <= 7) k = k " " $2
		if (n == 7) { c[k]++; if (!(k in f)) f[k] = t; k = "" } }
	END { printf "text-pokes: %d calls\n", calls
		for (k in c) printf "text-pokes: %5d %12s%s\n", c[k], f[k], k }' \
	"$VTRACE_OUT/text-pokes.trace" | sort -k2,2nr
exit $rc
