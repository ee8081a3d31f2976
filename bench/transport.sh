#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/transport.sh: guest CPU time and events lost moving a guest's trace out, per transport.
#
#   bench/transport.sh [--mb N] [--runs R] [--rate R] [--size B] [--sweep R1,R2,...]
#                      [--methods none,vtrace,splice,agent,net] [--kver KVER] [--tiny] [--out DIR]
#                      [--report] [--prof|--watch] [--wait SEC] [--expect-fail METHOD]
#                      [--rerun 0|1]
#
# Boots the test bed's L1 (testbed/run-l1.sh) and, in it, one L2 (2 vCPUs)
# that runs each method in turn on the same load (run r of every method,
# then run r + 1, the order of the methods rotated by one each run): bench_load writes fixed-size
# trace_marker events (--size, default 256 bytes) at --rate events/s on each
# CPU (default 2000) until --mb MB of marker payload (default 50) are written,
# --runs times (default 3), then once at each --sweep rate (per CPU, default
# 4000,8000,16000,32000,0; 0 = as fast as the load goes; 2 s of markers, at
# least 4x the ring buffer) for the highest rate without loss. Methods:
#   vtrace  vtrace_guest: its kthreads (vtrace-ctl, vtrace-cpuK) splice the
#           instance's pages into the virtio-serial ports
#   splice  bench_splice: a user-space splice loop trace_pipe_raw -> pipe ->
#           the same ports, one thread per CPU (the historical virtio-trace design)
#   agent   trace-cmd agent in L2 over vsock (vhost_vsock in L1), L1 runs
#           trace-cmd record -A @3
#   net     trace-cmd record -N in L2 over TCP on virtio-net (QEMU user
#           networking), to trace-cmd listen in L1
#   none    the load alone, nobody reading: the floor of the other rows
#           (not in --tiny unless asked for)
#   stuck   a recorder that never starts recording (its tracing_on stays 0):
#           the bench's own test that a stuck method fails fast (make check:
#           --tiny --methods stuck,vtrace,splice,agent,net --expect-fail stuck)
# Guest CPU = run time of the method's threads/processes in L2 (schedstat)
# from the start of the load to 2 s after its end, and of the guest's
# kworker/ksoftirqd threads over the same window (vsock and TCP send from
# there); lost = ring-buffer overruns + drops (+ pages a port refused, for
# vtrace). Over the same window L1 counts the guest's VM exits by reason
# (kvm_exit) and the CPU of QEMU's other threads and of vhost. Prints tables
# of medians and the ratios to vtrace, the spread of the runs (min / median /
# max of guest CPU, exits and L1's CPU per MB), the order of each run, and
# the ratios of guest CPU, exits and L1 CPU per MB to the agent and splice. --prof: also the function_graph
# profile of vtrace's and splice's threads (vtg-bench-prof: lines in the
# guest's console) and L1's exits by guest RIP with the guest's kallsyms
# (exits-M-J.hist, kallsyms.txt in --out); it perturbs the figures.  --watch:
# where vtrace loses events: its rings' fill and overruns and its drain
# threads' state and CPU every 0.1 s of each job ("vtg-bench-watch:" lines in
# results.txt, the samples around each overrun); it perturbs them less.
# Every wait of a job (a recorder's start, L1's "go", the load, a stop) is
# bounded by the job's bound: --wait SEC (default 120, --tiny 60) for
# trace-cmd's start-up (agent, net; 10 s for the others) plus 3x the job's
# nominal length (markers / rate). On expiry the method is reported failed
# with what it waited for ("bench: failed: ..."), its other jobs are
# skipped, the bench goes on with the next method and exits 1 at the end
# (--expect-fail METHOD: exits 0 only if METHOD failed and nothing else did).
# When the test bed fails the run part way (an L1 reset, testbed/bed-glitch.sh),
# the rows of the jobs that ended are kept (bench/l1-transport.sh writes each
# as its job ends), the bench names the first job lost, and runs that round
# and the later ones again in a new L1, once (--rerun 0: not), their rows
# joined to the others (results in OUT/rerun).
# Figures of a real run and the machine: Documentation/benchmarks.rst.
# Not a test: no pass/fail on the figures.
# --report prints the figures of the run already in --out (same --runs,
# --methods) without running it again.  Both draw OUT/transport.svg
# (bench/transport-plot.py): events lost against the rate held in the sweep,
# and guest CPU per MB, per method.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
mb=50 runs=3 rate=2000 size=256 sweep=4000,8000,16000,32000,0 methods=none,vtrace,splice,agent,net
kver=${KVER:-} out=$here/build/bench/transport bufkb=512 report= l1tmo=7200 prof=0 wait=120 mset= tiny=
rerun=1
xfail=
while [ $# -gt 0 ]; do
	case $1 in
	--mb)		mb=$2; shift 2 ;;
	--runs)		runs=$2; shift 2 ;;
	--rate)		rate=$2; shift 2 ;;
	--size)		size=$2; shift 2 ;;
	--sweep)	sweep=$2; shift 2 ;;
	--methods)	methods=$2 mset=1; shift 2 ;;
	--kver)		kver=$2; shift 2 ;;
	--out)		out=$2; shift 2 ;;
	--tiny)		mb=1 runs=1 rate=1000 sweep= bufkb=128 l1tmo=600 wait=60 tiny=1; shift ;;
	--report)	report=1; shift ;;
	--prof)		prof=1; shift ;;
	--watch)	prof=2; shift ;;
	--wait)		wait=$2; shift 2 ;;
	--expect-fail)	xfail=$2; shift 2 ;;
	--rerun)	rerun=$2; shift 2 ;;
	*)		echo "usage: $0 [--mb N] [--runs R] [--rate R] [--size B] [--sweep R,...] [--methods M,...] [--kver KVER] [--tiny] [--out DIR] [--report] [--prof|--watch] [--wait SEC] [--expect-fail METHOD] [--rerun 0|1]" >&2; exit 2 ;;
	esac
done
# --tiny: no baseline run (none), unless asked for
[ -z "$tiny" ] || [ -n "$mset" ] || methods=vtrace,splice,agent,net
njobs=$(( runs + $(wc -w <<< "${sweep//,/ }") ))

# --report: only the figures of the run in --out, from its results.txt
if [ -z "$report" ]; then
	[ -n "$kver" ] || kver=$("$here/testbed/default-kver.sh")
	ko=$here/kmod/guest/vtrace_guest.ko
	[ -f "$ko" ] || make -s -C "$here" modules
	# the L2 QEMU options come from "vtrace qemu-args"
	[ -x "$here/user/vtrace" ] || make -s -C "$here" user
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] ||
		{ echo "bench: $ko is not built for $kver (make modules, or --kver)" >&2; exit 2; }
	command -v trace-cmd > /dev/null || { echo "bench: trace-cmd not installed" >&2; exit 2; }

	# per CPU (2 vCPUs): enough markers for --mb MB of payload in all
	count=$(( mb * 1000000 / size / 2 ))
	# a sweep run: at least 4x what the ring buffer of one CPU holds
	scount=$(( bufkb * 1024 * 4 / (size + 16) ))

	# the L2 image: the tree's helpers, L2 scripts and guest module, built here
	# (not testbed/build-l2.sh's file, which other test runs may rebuild meanwhile)
	mkdir -p "$here/build/bench"
	initrd=$here/build/bench/initramfs-l2-$kver.cpio.gz
	"$here/selftests/vtrace/build-helpers.sh" "$here/build/helpers"
	extra=("$ko=lib/vtrace/vtrace_guest.ko")
	for f in "$here"/selftests/vtrace/l2/*.sh; do extra+=("$f=tests/$(basename "$f")"); done
	for f in "$here"/build/helpers/*; do extra+=("$f=bin/$(basename "$f")"); done
	"$here/testbed/mkinitramfs.sh" "$kver" l2 "$initrd" "${extra[@]}" > /dev/null

	arg="methods=${methods//,/:},size=$size,rate=$rate,count=$count,runs=$runs,sweep=${sweep//,/:},scount=$scount,bufkb=$bufkb,prof=$prof,wait=$wait"
	echo "bench: transport, L1/L2 kernel $kver, 2 vCPUs, $mb MB of ${size}-byte markers at $rate/s per CPU, $runs runs; sweep ${sweep:-none}/s per CPU (2 s each, at least $scount markers); ring buffer $bufkb KiB per CPU"
	echo "bench: logs in $out"
	rc=0
	# (an earlier run's watchdog findings in the same folder are not this one's)
	rm -f "$out/l2-boot-watchdog.txt"
	KVER=$kver "$here/testbed/run-l1.sh" --out "$out" --timeout "$l1tmo" "$here/bench/l1-transport.sh" "$arg" || rc=$?
	[ "$rc" -eq 0 ] || echo "bench: run-l1 exit $rc (see $out)" >&2
	# the bed lost the run part way (l1-transport.sh writes each row as its
	# job ends): say which rows came, and run the rounds from the first
	# incomplete one again, once, without the methods that already failed.
	# An L2 that reset ends its L1 script normally (default20, 2026-12-03:
	# run-l1 exit 0, 2 rows of 40, no re-run): its watchdog's finding counts
	if { [ "$rc" -ne 0 ] || [ -s "$out/l2-boot-watchdog.txt" ]; } && [ "$rerun" -gt 0 ] &&
	   glitch=$("$here/testbed/bed-glitch.sh" "$out"); then
		# (none at all when L1 did not boot: then every round)
		touch "$out/results.txt"
		echo "bench: the bed failed: $(head -1 <<< "$glitch")"
		if miss=$(python3 "$here/bench/transport-rows.py" missing "$out/results.txt" "$njobs" "$methods"); then
			set -- $miss
			echo "bench: re-running rounds $1 to $njobs of methods ${2//,/ } (logs in $out/rerun)"
			rm -rf "$out/rerun"
			mkdir -p "$out/rerun"
			rc=0
			KVER=$kver "$here/testbed/run-l1.sh" --out "$out/rerun" --timeout "$l1tmo" \
				"$here/bench/l1-transport.sh" "${arg/methods=${methods//,/:}/methods=${2//,/:}},from=$1" || rc=$?
			[ "$rc" -eq 0 ] || echo "bench: re-run: run-l1 exit $rc (see $out/rerun)" >&2
			python3 "$here/bench/transport-rows.py" join "$out/results.txt" "$out/rerun/results.txt" "$1"
		fi
	fi
fi
[ -s "$out/results.txt" ] || { echo "bench: no results" >&2; exit 1; }
# the picture: the sweep's losses against the rate held, guest CPU per MB
python3 "$here/bench/transport-plot.py" "$out/results.txt" "$runs" "$methods" "$out/transport.svg" &&
	echo "bench: picture in $out/transport.svg"

python3 - "$out/results.txt" "$runs" "$methods" "$xfail" "$njobs" "$out" <<'PY'
import sys, statistics
def med(v):
    return statistics.median(v) if v else 0
path, runs, methods, xfail = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(','), sys.argv[4]
njobs, out = int(sys.argv[5]), sys.argv[6]
rows, files, ports, jports, exits, fails, orders, idle = {}, {}, {}, {}, {}, [], [], []
for line in open(path):
    line = line.strip()
    kind, _, rest = line.partition(': ')
    kv = dict(w.split('=', 1) for w in rest.split() if '=' in w)
    if kind == 'vtg-bench':
        rows.setdefault(kv['method'], []).append(kv)
    elif kind == 'vtg-bench-file':
        k = (kv['method'], kv['job'])
        files[k] = files.get(k, 0) + int(kv['bytes'])
    elif kind == 'vtg-bench-exits':
        exits[(kv['method'], kv['job'])] = kv
    elif kind == 'vtg-bench-port':
        ports[kv['method']] = ports.get(kv['method'], 0) + int(kv['bytes'])
        jports[(kv['method'], kv['job'])] = int(kv['bytes'])
    elif kind == 'vtg-bench-order':
        orders.append(rest)
    elif kind == 'vtg-bench-idle':
        idle.append(kv)
    elif kind == 'vtg-bench-fail':
        fails.append((kv['method'], kv['job'], rest.split(' ', 2)[2]))
names = {'vtrace': 'vtrace_guest (kthreads)', 'splice': 'user splice loop',
         'agent': 'trace-cmd agent/vsock', 'net': 'trace-cmd -N/TCP', 'none': '(load alone)'}
summary, broken = {}, []
# jobs with neither a row nor a failure: the bed lost them (and the re-run,
# when it ran, did not bring them back); a method's jobs after its first
# failure are not run.  One line per set of jobs lost.
gone = {}
for m in methods:
    got = {int(kv['job']) for kv in rows.get(m, [])}
    failed = sorted(int(j) for mm, j, _ in fails if mm == m)
    last = failed[0] - 1 if failed else njobs
    lost = tuple(k for k in range(1, last + 1) if k not in got)
    if lost and got:
        gone.setdefault((lost, len([k for k in got if k <= runs])), []).append(m)
for (lost, main), ms in gone.items():
    broken.append('%s: no row for job %s of %d (main runs: %d of %d, sweep steps: %d of %d): the bed '
                  'lost them (%s/l2-boot-watchdog.txt, %s/rerun/); the figures above are of the '
                  'jobs that came: run the bench again' % (
                      ', '.join(ms), ','.join(map(str, lost)), njobs, main, runs,
                      njobs - runs - len([k for k in lost if k > runs]), njobs - runs, out, out))
for m in methods:
    r = rows.get(m, [])
    main, sw = r[:runs], r[runs:]
    if not main:
        if not any(f[0] == m for f in fails):
            broken.append('%s: no run' % m)
        continue
    for kv in r:
        if m in ('agent', 'net'):
            kv['moved'] = str(files.get((m, kv['job']), 0))
        if int(kv['written']) == 0 or (int(kv['moved']) == 0 and m != 'none'):
            broken.append('%s job %s: %s markers written, %s bytes moved' % (
                m, kv['job'], kv['written'], kv['moved']))
    mbs = [int(k['written']) * int(k['size']) / 1e6 for k in main]
    cpu = [int(k['cpu_ns']) / 1e6 / x for k, x in zip(main, mbs) if x]
    cpu_out = [int(k['cpu_ns']) / 1e6 / (int(k['moved']) / 1e6) for k in main if int(k['moved'])]
    lost = [int(k['lost']) for k in main]
    moved = [int(k['moved']) / 1e6 for k in main]
    rate = [int(k['written']) / (int(k['usec']) / 1e6) for k in main if int(k['usec'])]
    best, clean = None, True  # highest achieved rate of the sweep steps before the first loss
    steps = []
    for k in sw:
        got = int(k['written']) / (int(k['usec']) / 1e6) if int(k['usec']) else 0
        steps.append('%s:%.0f/%s' % (k['rate'], got, k['lost']))
        if clean and (int(k['lost']) != 0 or int(k['written']) != 2 * int(k['count'])):
            clean = False
        if clean:
            best = max(best or 0, got)
    drain = [int(k.get('drain_ns', 0)) / 1e6 / x for k, x in zip(main, mbs) if x]
    ctl = [(int(k['cpu_ns']) - int(k.get('drain_ns', 0))) / 1e6 / x for k, x in zip(main, mbs) if x]
    def per_mb(vals):
        return med([v / x for v, x in zip(vals, mbs) if x])
    secs = [(int(k['usec']) / 1e6 + 2) for k in main]  # the window: the load, then 2 s
    ex = [exits.get((m, k['job'])) for k in main]
    host = None
    if all(ex):
        svm = {'96': 'INTR', '100': 'VINTR', '114': 'CPUID', '120': 'HLT', '123': 'IOIO', '124': 'MSR',
               '129': 'VMMCALL', '1024': 'NPF', '119': 'PAUSE', '97': 'NMI'}
        rs = sorted({k for e in ex for k in e if k.startswith('x') and k[1:].isdigit()},
                    key=lambda k: -int(ex[0].get(k, 0)))
        host = dict(exits=per_mb([int(e['exits']) for e in ex]),
                    npf=per_mb([int(e.get('x1024', 0)) for e in ex]),
                    kinds=' '.join('%s %.0f' % (svm.get(k[1:], k[1:]), per_mb([int(e.get(k, 0)) for e in ex]))
                                   for k in rs),
                    qemu=per_mb([int(e['l1_qemu_ns']) / 1e6 for e in ex]),
                    vhost=per_mb([int(e['l1_vhost_ns']) / 1e6 for e in ex]))
    wake = med([int(k.get('drain_switches', 0)) / t for k, t in zip(main, secs)])
    kwork = per_mb([int(k.get('kworker_ns', 0)) / 1e6 for k in main])
    guest = per_mb([(int(k['cpu_ns']) + int(k.get('kworker_ns', 0))) / 1e6 for k in main])
    # per run, for the spread: guest CPU (threads + kworkers), exits and L1's cost per MB
    # the steal: the guest's kernel (no PARAVIRT_TIME_ACCOUNTING) charges it to the
    # thread on the vCPU; its share of the vCPUs' time, and the guest CPU less that
    # share (an estimate: the steal spread evenly over the busy time of the window)
    share = [int(k['steal_ns']) / (int(k['busy_ns']) + int(k['steal_ns']))
             if int(k.get('busy_ns', 0)) + int(k.get('steal_ns', 0)) else None for k in main]
    runs_guest = [((int(k['cpu_ns']) + int(k.get('kworker_ns', 0))) / 1e6 / x, f)
                  for k, x, f in zip(main, mbs, share) if x]
    spread = dict(cpu=cpu, guest=[g for g, _ in runs_guest],
                  less_steal=[g * (1 - f) for g, f in runs_guest if f is not None])
    if host:
        spread['exits'] = [int(e['exits']) / x for e, x in zip(ex, mbs) if x]
        spread['l1'] = [(int(e['l1_qemu_ns']) + int(e['l1_vhost_ns'])) / 1e6 / x for e, x in zip(ex, mbs) if x]
        host['l1'] = med(spread['l1'])
    summary[m] = dict(spread=spread, host=host, wake=wake, kwork=kwork, guest=guest,mb=med(mbs), cpu=med(cpu), cpu_out=med(cpu_out),
                      runs=' '.join('%.0f' % c for c in cpu), lost_runs=' '.join(str(x) for x in lost),
                      gone=' '.join(k.get('kworker_gone', '-') for k in main),
                      steal=' '.join('%.0f' % (int(k['steal_ns']) / 1e6) if 'steal_ns' in k else '-' for k in main),
                      share=' '.join('%.0f%%' % (100 * f) if f is not None else '-' for f in share), drain=med(drain), ctl=med(ctl), lost=med(lost), moved=med(moved),
                      rate=med(rate), best=best, clean=clean and bool(sw), sweep=' '.join(steps))
print()
print('%-24s %6s %9s %7s %10s %9s %11s %8s %16s' % ('method', 'MB', 'moved MB', 'ev/s', 'CPU ms/MB', 'x vtrace',
                                                    'ms/MB out', 'lost', 'max ev/s 0-loss'))
ref = summary.get('vtrace')
base = summary.pop('none', None)
for m, s in summary.items():
    ratio = s['cpu'] / ref['cpu'] if ref and ref['cpu'] else float('nan')
    print('%-24s %6.1f %9.1f %7.0f %10.2f %8.2fx %11.2f %8d %16s' % (
        names.get(m, m), s['mb'], s['moved'], s['rate'], s['cpu'], ratio, s['cpu_out'], s['lost'],
        ('>=' if s['clean'] else '') + '%.0f' % s['best'] if s['best'] else '-'))
print('CPU ms/MB: guest CPU per MB of markers written (medians of %d runs); ms/MB out: per MB that' % runs)
print('left the guest; lost: events lost (median)')
print()
print('%-24s %9s %10s %10s %9s %9s %11s %12s' % ('method', 'wakeups/s', 'kworker', 'guest', 'exits/MB',
                                                  'NPF/MB', 'L1 QEMU', 'L1 vhost'))
for m, s in list(summary.items()) + ([('none', base)] if base else []):
    h = s['host']
    print('%-24s %9.1f %10.2f %10.2f %9s %9s %11s %12s' % (
        names.get(m, m), s['wake'], s['kwork'], s['guest'], '%.0f' % h['exits'] if h else '-',
        '%.0f' % h['npf'] if h else '-',
        '%.2f' % h['qemu'] if h else '-', '%.2f' % h['vhost'] if h else '-'))
print('wakeups/s: context switches of the method\'s threads per second of the window; kworker:')
print('CPU ms/MB of the guest\'s kworker and ksoftirqd threads (vsock sends from there); guest:')
print('the method\'s threads plus those; exits/MB: L1\'s kvm_exit events of the guest\'s vCPUs per')
print('MB, NPF/MB: of those, nested page faults, i.e. the MMIO writes that notify a virtio device')
print('(one per kick that was not suppressed); L1 QEMU, L1 vhost: L1 CPU ms/MB of QEMU\'s threads')
print('other than the vCPUs, and of the vhost kthreads. All over the same window, medians; (load')
print('alone): method none, the load with nobody reading, the floor of every other row.')
for m, s in list(summary.items()) + ([('none', base)] if base else []):
    if s['host']:
        print('exits/MB %-8s %s' % (m, s['host']['kinds']))
for m, s in summary.items():
    print('per run %-8s CPU ms/MB %s; lost %s; kworkers ended in the window %s; steal ms %s (%s of the vCPUs\' time)' % (
        m, s['runs'], s['lost_runs'], s['gone'], s['steal'], s['share']))
print()
print('spread over the runs, min / median / max per MB of markers: guest = the method\'s threads')
print('+ kworkers (ms), exits = L1\'s kvm_exit of the guest, L1 = QEMU\'s non-vCPU threads + vhost (ms)')
def mmm(v):
    return '%8.1f /%8.1f /%8.1f' % (min(v), med(v), max(v)) if v else '%28s' % '-'
print('%-8s %4s %28s %28s %28s' % ('method', 'runs', 'guest ms/MB', 'exits/MB', 'L1 ms/MB'))
for m, s in list(summary.items()) + ([('none', base)] if base else []):
    sp = s['spread']
    print('%-8s %4d %28s %28s %28s' % (m, len(sp['guest']), mmm(sp['guest']), mmm(sp.get('exits', [])),
                                        mmm(sp.get('l1', []))))
for o in orders:
    print('order ' + o)
print()
# the same medians as ratios to the agent and to the splice loop (< 1: cheaper than it)
def rat(a, b):
    return '%6.2fx' % (a / b) if a is not None and b else '%7s' % '-'
def fig(s, k):
    return s['guest'] if k == 'guest' else (s['host'][k] if s['host'] else None)
for refm in ('agent', 'splice'):
    r = summary.get(refm)
    if not r:
        continue
    print('ratio to %-6s   guest CPU/MB  exits/MB  L1 ms/MB   (medians; < 1: less than %s)' % (refm, refm))
    for m, s in summary.items():
        if m != refm:
            print('  %-15s %12s %9s %9s' % (m, rat(fig(s, 'guest'), fig(r, 'guest')),
                                             rat(fig(s, 'exits'), fig(r, 'exits')), rat(fig(s, 'l1'), fig(r, 'l1'))))
# the guest CPU less the steal's share, where every run has the figures
ls = {m: s['spread']['less_steal'] for m, s in summary.items()
      if s['spread']['less_steal'] and len(s['spread']['less_steal']) == len(s['spread']['guest'])}
if ls:
    print('guest CPU/MB less the steal\'s share of each run (an estimate: the guest charges L1\'s steal')
    print('to the thread on the vCPU; here spread evenly over the busy time), min / median / max:')
    for m, v in ls.items():
        print('  %-15s %s' % (m, mmm(v)))
    for refm in ('agent', 'splice'):
        if refm in ls:
            print('  ratio to %-6s %s' % (refm, ', '.join('%s %s' % (m, rat(med(v), med(ls[refm])).strip())
                                                          for m, v in ls.items() if m != refm)))
for kv in idle:
    print('vtrace_guest idle (enabled, no marker) %s s: vtrace-ctl scheduled in %s times, drain threads %s' % (
        kv['s'], kv['ctl_switches'], kv['drain_switches']))
print()
print('sweep: one run per rate (per CPU; 0 = as fast as the load goes), each 2 s of markers at')
print('least 4x the ring buffer; shown as requested rate:achieved ev/s (both CPUs)/events lost.')
print('max ev/s 0-loss: the highest achieved rate before the first step that lost events')
print('(">=": no step lost any, the load generator or the sweep was the limit)')
for m, s in summary.items():
    print('sweep %-8s %s' % (m, s['sweep'] or '-'))
for m in ('vtrace', 'splice'):
    if m in summary and m in ports:
        print('data ports %-6s L1 received %.3f MB (in L1\'s tmpfs), the guest moved %.3f MB (all its jobs%s)' % (
            m, ports[m] / 1e6, (sum(int(k['moved']) for k in rows.get(m, [])) +
                                (sum(int(k.get('moved', 0)) for k in idle) if m == 'vtrace' else 0)) / 1e6,
            ', and the idle phase' if m == 'vtrace' and idle else ''))
# each job's bytes, bound to it by the guest's job-end mark: L1's against what
# the guest gave the ports in that job (vtrace: and in its idle phase)
for m in ('vtrace', 'splice'):
    if m not in summary or not any(k[0] == m for k in jports):
        continue
    off = []
    for kv in rows.get(m, []):
        want = int(kv['moved']) + sum(int(i.get('moved', 0)) for i in idle
                                      if m == 'vtrace' and i.get('job') == kv['job'])
        got = jports.get((m, kv['job']))
        if got != want:
            off.append('job %s: L1 %s, guest %d' % (kv['job'], got, want))
    print('data ports %-6s per job: L1 received what the guest moved in %d of %d jobs%s' % (
        m, len(rows.get(m, [])) - len(off), len(rows.get(m, [])), ('; ' + '; '.join(off)) if off else ''))
if ref and ref['drain']:
    print('vtrace_guest: drain threads (vtrace-cpuK) %.2f CPU ms/MB, control thread (vtrace-ctl) %.2f' % (
        ref['drain'], ref['ctl']))
if ref:
    for m, s in summary.items():
        if m != 'vtrace':
            print('ratio %s/vtrace: CPU per MB %.2fx, guest CPU per MB %.2fx, exits per MB %s, events lost %d vs %d, max ev/s 0-loss %s vs %s' % (
                m, s['cpu'] / ref['cpu'] if ref['cpu'] else float('nan'),
                s['guest'] / ref['guest'] if ref['guest'] else float('nan'),
                '%.2fx' % (s['host']['exits'] / ref['host']['exits'])
                if s['host'] and ref['host'] and ref['host']['exits'] else '-', s['lost'], ref['lost'],
                ('>=' if s['clean'] else '') + '%.0f' % s['best'] if s['best'] else '-',
                ('>=' if ref['clean'] else '') + '%.0f' % ref['best'] if ref['best'] else '-'))
for b in broken:
    print('bench: broken: ' + b)
# a method that waited its whole bound: what for (the guest's words)
for m, j, what in fails:
    print('bench: failed: %s job %s: %s%s' % (m, j, what, ' (expected)' if m == xfail else ''))
if xfail and not any(f[0] == xfail for f in fails):
    print('bench: broken: method %s was expected to fail and did not' % xfail)
    broken.append(xfail)
sys.exit(1 if broken or any(f[0] != xfail for f in fails) else 0)
PY
