#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# dat-compare.py: do "vtrace-merge [--raw-tsc]" and "trace-cmd report -t -i host.dat -i
# NAME.dat" (on vtrace dat's files) print the same events in the same order?
#
#   dat-compare.py MERGE.txt REPORT.txt [TOLERANCE_NS]
#
# Events are compared as (time, machine, cpu, pid, event, info): host TSC
# (--raw-tsc against files without TSC2NSEC), or ns (seconds with 9
# decimals), where the times of the same event may differ by TOLERANCE_NS
# (default 0: vtrace dat's TSC2NSEC is within a few ns of vtrace-merge's
# seconds); both
# streams must be in time order, and equal once events of the same time
# stamp are sorted (their order is either tool's choice).  trace-cmd also
# shows the guest's page-flush fillers (print events "vtrace-flush-filler"),
# which vtrace-merge leaves out: they are counted and dropped.  After its
# "CPU:N [K EVENTS DROPPED]" line trace-cmd prints the next event without
# the file name: it is the same file's.  Exit 0 when
# equal; a "# ..." summary line either way.
import re
import sys

MERGE = re.compile(r'^(\S+)\s+\[(\d+)\]\s+(.*?)-(-?\d+)\s+([\d.]+):\s+(\S+):\s?(.*)$')
REPORT = re.compile(r'^\s*(?:(\S+?)\.dat:)?\s+(.*?)-(-?\d+)\s+\[(\d+)\]\s*([\d.]+):\s+(\S+):\s?(.*)$')
AMBIGUOUS = '[time ambiguous]'
DROPPED = re.compile(r'^\s*(\S+?)\.dat: CPU:\d+ \[(\d+) EVENTS DROPPED\]')


def ts_of(text):
    if '.' in text:     # "sec.nsec" when the file's clock is taken as ns
        sec, frac = text.split('.')
        return int(sec) * 10**9 + int(frac.ljust(9, '0'))
    return int(text)


def merge_events(path):
    out, bad = [], 0
    for line in open(path, errors='replace'):
        m = MERGE.match(line.rstrip('\n'))
        if not m:
            bad += 1
            continue
        mach, cpu, _, pid, ts, ev, info = m.groups()
        # vtrace-merge marks an event whose time two offset intervals give (the
        # same time in vtrace dat's file, where nothing can mark it)
        info = info.strip()
        if info.endswith(AMBIGUOUS):
            info = info[:-len(AMBIGUOUS)].rstrip()
        out.append((ts_of(ts), mach, int(cpu), int(pid), ev, info))
    return out, bad


def report_events(path):
    out, fillers, other, last = [], 0, 0, None
    for line in open(path, errors='replace'):
        d = DROPPED.match(line)
        if d:           # the event after it comes without the file name
            last = d.group(1)
        m = REPORT.match(line.rstrip('\n'))
        if not m:
            other += 1
            continue
        mach, _, pid, cpu, ts, ev, info = m.groups()
        mach = mach or last
        if 'vtrace-flush-filler' in info:
            fillers += 1
            continue
        out.append((ts_of(ts), mach, int(cpu), int(pid), ev, info.strip()))
    return out, fillers, other


def ordered(evs):
    return all(a[0] <= b[0] for a, b in zip(evs, evs[1:]))


def by_event(evs):
    """Sorted by what the event is, then time: the n-th of each event pairs up."""
    return sorted(evs, key=lambda e: (e[1:], e[0]))


def main():
    a, bad = merge_events(sys.argv[1])
    b, fillers, other = report_events(sys.argv[2])
    tol = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    sa, sb = by_event(a), by_event(b)
    diff = max((abs(x[0] - y[0]) for x, y in zip(sa, sb)), default=0)
    same = len(a) == len(b) and all(x[1:] == y[1:] for x, y in zip(sa, sb)) and diff <= tol
    print('# vtrace-merge %d events (%d other lines), trace-cmd %d events (%d fillers dropped,'
          ' %d other lines), in order: %s/%s, same events: %s, largest time difference: %d'
          ' (tolerance %d)' %
          (len(a), bad, len(b), fillers, other, ordered(a), ordered(b), same, diff, tol))
    if not same:
        for x, y in zip(sa, sb):
            if x[1:] != y[1:] or abs(x[0] - y[0]) > tol:
                print('# first difference: vtrace-merge %s | trace-cmd %s' % (x, y))
                break
    sys.exit(0 if same and ordered(a) and ordered(b) and a else 1)


main()
