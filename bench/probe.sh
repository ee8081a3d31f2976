#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/probe.sh: what vtrace_host adds to each TSC offset write of KVM, and its memory per record.
#
#   bench/probe.sh [--count N] [--runs R] [--capacity C] [--rates R1:R2:..] [--secs S]
#                  [--kver KVER] [--tiny] [--out DIR]
#
# Boots the test bed's L1 (no L2: testbed/run-l1.sh) and runs
# bench/l1-probe.sh there: R runs (default 5), each timing N host-initiated
# IA32_TSC writes to an idle vCPU (default 20000; one kvm_write_tsc_offset
# tracepoint call each) with nothing attached, with the ftrace event
# kvm:kvm_write_tsc_offset enabled, and with vtrace_host loaded; then the
# function_graph duration of vtrace_host's probe alone, and the module's
# record array (vmalloc) size at --capacity (default 65536, the module's
# default). Prints medians per write, the added cost against no recorder,
# and the ratio to the ftrace event. Then the rate ladder: S seconds
# (default 5) of writes paced to each rate (writes a second, default
# 10000:20000:40000:70000:100000) while trace-cmd records vtrace_host's
# event; every write must be in host.dat, and the highest rate with none
# lost is printed. Not a test: no pass/fail on the figures.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
count=20000 runs=5 capacity=65536 kver=${KVER:-} out=$here/build/bench/probe
rates=10000:20000:40000:70000:100000 secs=5
while [ $# -gt 0 ]; do
	case $1 in
	--count)	count=$2; shift 2 ;;
	--runs)		runs=$2; shift 2 ;;
	--capacity)	capacity=$2; shift 2 ;;
	--rates)	rates=$2; shift 2 ;;
	--secs)		secs=$2; shift 2 ;;
	--kver)		kver=$2; shift 2 ;;
	--out)		out=$2; shift 2 ;;
	--tiny)		count=2000 runs=1 rates=20000 secs=1; shift ;;
	*)		echo "usage: $0 [--count N] [--runs R] [--capacity C] [--rates R1:R2:..] [--secs S] [--kver KVER] [--tiny] [--out DIR]" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] || kver=$("$here/testbed/default-kver.sh")
ko=$here/kmod/host/vtrace_host.ko
[ -f "$ko" ] || make -s -C "$here" modules
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] ||
	{ echo "bench: $ko is not built for $kver (make modules, or --kver)" >&2; exit 2; }
"$here/selftests/vtrace/build-helpers.sh" "$here/build/helpers"

echo "bench: probe, L1 kernel $kver, $runs runs of $count IA32_TSC writes per set-up; vtrace_host capacity $capacity"
echo "bench: logs in $out"
rc=0
KVER=$kver "$here/testbed/run-l1.sh" --out "$out" --timeout 1800 "$here/bench/l1-probe.sh" \
	"$count,$runs,$capacity,$rates,$secs" || rc=$?
[ "$rc" -eq 0 ] || echo "bench: run-l1 exit $rc (see $out)" >&2
[ -s "$out/results.txt" ] || { echo "bench: no results" >&2; exit 1; }

python3 - "$out/results.txt" <<'PY'
import sys, statistics
runs, graph, mem, stream, ladder = {}, None, None, [], []
for line in open(sys.argv[1]):
    kind, _, rest = line.strip().partition(': ')
    kv = dict(w.split('=', 1) for w in rest.split() if '=' in w)
    if kind == 'probe-run':
        runs.setdefault(kv['mode'], []).append(int(kv['ns']) / int(kv['count']))
    elif kind == 'probe-graph':
        graph = kv
    elif kind == 'probe-mem':
        mem = kv
    elif kind == 'probe-stream':
        stream.append(kv)
    elif kind == 'probe-rate':
        ladder.append(kv)
med = {m: statistics.median(v) for m, v in runs.items()}
names = {'none': 'no recorder', 'ftrace': 'ftrace event (trace-cmd -e)', 'vtrace': 'vtrace_host',
         'event': 'vtrace_host + trace-cmd -e'}
print()
print('%-30s %5s %12s %14s %10s' % ('set-up', 'runs', 'ns/write', 'added ns/write', 'x ftrace'))
base = med.get('none')
added = {m: med[m] - base for m in med} if base is not None else {}
def ratio(m):
    # a ratio of added costs means something only when both are above zero
    if m == 'none' or added.get(m, 0) <= 0 or added.get('ftrace', 0) <= 0:
        return '-'
    return '%.2fx' % (added[m] / added['ftrace'])
for m in ('none', 'ftrace', 'vtrace', 'event'):
    if m not in med:
        continue
    print('%-30s %5d %12.0f %14.0f %10s' % (names[m], len(runs[m]), med[m], added[m], ratio(m)))
print('per run (ns/write): ' + '; '.join('%s %s' % (m, ' '.join('%.0f' % x for x in runs[m]))
                                         for m in ('none', 'ftrace', 'vtrace', 'event')
                                         if m in runs))
for kv in stream:
    w, n, ns = int(kv['writes']), int(kv['count']), int(kv['ns'])
    print('event recorded by trace-cmd, run %s: %d writes, %s events in host.dat, %s overrun,'
          ' %s pages with events dropped, timed part %.0f writes/s' %
          (kv['run'], w, kv['events'], kv['overrun'], kv.get('lost_pages', '?'),
           n * 1e9 / ns if ns else 0))
if graph:
    print('vth_probe alone (function_graph, %s calls): median %s ns, mean %s ns' %
          (graph['calls'], graph['median_ns'], graph['mean_ns']))
if mem:
    print('memory: capacity %s records, vmalloc %s bytes (%s bytes per record), %s kept, %s dropped' %
          (mem['capacity'], mem['vmalloc_bytes'], mem['bytes_per_record'], mem['kept'], mem['dropped']))
best = None
for kv in ladder:
    w, e, n, ns = int(kv['writes']), int(kv['events']), int(kv['count']), int(kv['ns'])
    got = n * 1e9 / ns if ns else 0
    whole = e >= w and kv['lost'] == '0'
    print('rate ladder: asked %6s writes/s, wrote %6.0f/s for %.1f s: %d writes, %d events in'
          ' host.dat, %s lost: %s' % (kv['rate'], got, ns / 1e9, w, e, kv['lost'],
                                      'none missing' if whole else 'INCOMPLETE'))
    if whole and (best is None or got > best):
        best = got
if ladder:
    print('highest write rate with every write in host.dat: %s' %
          ('%.0f writes/s' % best if best else 'none of the rates tried'))
if 'vtrace' in added and 'ftrace' in added:
    r = ratio('vtrace')
    print('ratio vtrace_host/ftrace event: added cost per write %s' %
          (r if r != '-' else 'not measurable (an added cost at or below zero: run-to-run noise is larger)'))
PY
