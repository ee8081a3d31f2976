#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/transport.sh's rows after the test bed lost part of a run: which to run again, and the join.

  transport-rows.py missing RESULTS NJOBS METHODS
      Prints "K M1,M2,..." when round K (job K of each method) is the first
      with a row missing, neither a "vtg-bench:" row nor a "vtg-bench-fail:"
      line, M the methods that had not failed before it; and, on stderr, the
      rows that came and what is missing.  Exit 1 when nothing is missing.
  transport-rows.py join RESULTS RERUN K
      Rewrites RESULTS without its lines of rounds K and later (an
      incomplete round), then RERUN's lines, their jobs and rounds (which
      the guest numbered from 1) shifted to K and later.
"""
import re
import sys


def num(line, key):
    m = re.search(r'\b%s=(\d+)' % key, line)
    return int(m.group(1)) if m else None


def missing(path, njobs, methods):
    got, failed = set(), {}
    for line in open(path):
        kind, _, rest = line.strip().partition(': ')
        kv = dict(w.split('=', 1) for w in rest.split() if '=' in w)
        if kind == 'vtg-bench':
            got.add((kv['method'], int(kv['job'])))
        elif kind == 'vtg-bench-fail':
            failed.setdefault(kv['method'], int(kv['job']))
    for k in range(1, njobs + 1):
        want = [m for m in methods if failed.get(m, njobs + 1) >= k]
        lost = [m for m in want if (m, k) not in got and failed.get(m) != k]
        if lost:
            print("bench: rows of the bed's run: %d of %d (the rounds before %d whole); "
                  'lost: job %d of %s, and the later jobs'
                  % (len(got), njobs * len(methods), k, k, ' '.join(lost)), file=sys.stderr)
            print(k, ','.join(m for m in want if failed.get(m) != k))
            return 0
    return 1


def join(path, rerun, k):
    keep = []
    for line in open(path):
        n = num(line, 'job')
        if n is None:
            n = num(line, 'run')
        if n is None or n < k:
            keep.append(line)
    try:
        new = open(rerun).readlines()
    except OSError:
        new = []
    for line in new:
        for key in ('job', 'run'):
            line = re.sub(r'\b(%s=)(\d+)' % key,
                          lambda m: m.group(1) + str(int(m.group(2)) + k - 1
                                                     if int(m.group(2)) else 0), line)
        keep.append(line)
    with open(path, 'w') as f:
        f.writelines(keep)
    print('bench: rounds %d and later from the re-run: %d lines' % (k, len(new)))
    return 0


if __name__ == '__main__':
    a = sys.argv
    if len(a) == 5 and a[1] == 'missing':
        sys.exit(missing(a[2], int(a[3]), a[4].split(',')))
    if len(a) == 5 and a[1] == 'join':
        sys.exit(join(a[2], a[3], int(a[4])))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
