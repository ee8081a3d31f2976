#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# dropped-check.py TEXT JSONL STATS [WANT]: the text output's "EVENTS DROPPED" lines
# against the same merge's JSON lines and --stats.
#
# TEXT, JSONL and STATS are vtrace-merge's text output, --format jsonl and --stats of
# the same inputs and options.  Checks that:
#  - each dropped line reads "MACHINE [CPU] CPU:K [N EVENTS DROPPED]" or
#    "MACHINE [CPU] CPU:K [EVENTS DROPPED]", K the CPU of its prefix, and stands right
#    before an event line of the same machine and CPU;
#  - the text's event lines are the JSON lines' events one for one (machine, CPU, host
#    time), and the events after dropped lines are exactly the events with
#    "missed_events": N the sum of the counts before it (-1 with an uncounted line);
#  - per machine and CPU, the counts add up to --stats' lost-page, whose "+" (pages
#    without a count) is there exactly where an uncounted line is.
# WANT, "MACHINE:CPU=N,...": the sums expected, N followed by a "+" per uncounted line,
# every other CPU none.  Prints "# ..." lines and "FAIL ..." on a difference (exit 1).
import json
import re
import sys

DROPPED = re.compile(r'^(\S+) +\[(\d{3})\] CPU:(\d+) \[(?:(\d+) )?EVENTS DROPPED\]$')
EVENT = re.compile(r'^(\S+) +\[(\d{3})\] .*?-\d+ +(\d+\.\d{9}|\d+): ')

fails = []
text = open(sys.argv[1]).read().splitlines()
evs = [e for e in map(json.loads, open(sys.argv[2])) if e.get('type') != 'self_check']
sums = {}       # (machine, cpu) -> [counted, uncounted lines]
events = []     # the text's events: (machine, cpu, time, counted, uncounted)
pending = None
for i, line in enumerate(text):
    m = DROPPED.match(line)
    if m:
        mach, cpu, k, n = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        if k != cpu:
            fails.append('line %d: CPU:%d under [%03d]: %s' % (i + 1, k, cpu, line))
        if pending and pending[:2] != (mach, cpu):
            fails.append('line %d: dropped lines of two CPUs in a row' % (i + 1))
        pending = pending or (mach, cpu, 0, 0)
        pending = (mach, cpu, pending[2] + int(n or 0), pending[3] + (n is None))
        s = sums.setdefault((mach, cpu), [0, 0])
        s[0] += int(n or 0)
        s[1] += n is None
        continue
    m = EVENT.match(line)
    if not m:
        fails.append('line %d: neither an event nor a dropped line: %s' % (i + 1, line))
        continue
    mach, cpu = m.group(1), int(m.group(2))
    if pending and pending[:2] != (mach, cpu):
        fails.append('line %d: after a dropped line of %s [%03d], an event of %s [%03d]' %
                     (i + 1, pending[0], pending[1], mach, cpu))
    events.append((mach, cpu, m.group(3)) + (pending[2:] if pending else (0, 0)))
    pending = None
if pending:
    fails.append('a dropped line at the end, before no event')
if len(events) != len(evs):
    fails.append('%d events in the text, %d JSON lines' % (len(events), len(evs)))
for i, (t, j) in enumerate(zip(events, evs)):
    # the text's time: host ns (SEC.NSEC), or the host TSC (--raw-tsc, no TSC rate)
    if ((t[0], t[1]) != (j['machine'], j['cpu']) or
            int(t[2].replace('.', '')) not in (j['host_ns'], j['host_tsc'])):
        fails.append('event %d: text %s [%03d] %s, JSON %s cpu %d %s' %
                     (i, t[0], t[1], t[2], j['machine'], j['cpu'], j['host_ns']))
        break
    want = -1 if t[4] else t[3]
    if j.get('missed_events', 0) != want:
        fails.append('event %d (%s [%03d] %s): dropped lines say %d (%d uncounted), JSON'
                     ' missed_events %s' % (i, t[0], t[1], t[2], t[3], t[4],
                                            j.get('missed_events')))
stats = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) > 6 and f[1].isdigit():
        stats[(f[0], int(f[1]))] = f[5]
for key, lost in sorted(stats.items()):
    counted, uncounted = sums.get(key, [0, 0])
    if lost != '%d%s' % (counted, '+' if uncounted else ''):
        fails.append('%s cpu %d: --stats lost-page %s, dropped lines %d%s' %
                     (key[0], key[1], lost, counted, ' and %d uncounted' % uncounted
                      if uncounted else ''))
for key in sums:
    if key not in stats:
        fails.append('%s cpu %d: dropped lines, no --stats line' % key)
got = ','.join('%s:%d=%d%s' % (k[0], k[1], v[0], '+' * v[1]) for k, v in sorted(sums.items()))
print('# dropped lines (MACHINE:CPU=COUNT, + per uncounted): %s' % (got or 'none'))
if len(sys.argv) > 4 and got != sys.argv[4]:
    fails.append('expected %s' % sys.argv[4])
for f in fails[:10]:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
