#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/exit-rips.py: name the guest RIPs of L1's kvm_exit hist (bench/transport.sh --prof).

  bench/exit-rips.py OUT/kallsyms.txt OUT/exits-METHOD-JOB.hist...

Sums each hist (keys exit_reason,guest_rip) by SVM exit reason and guest
function (the nearest kallsyms text symbol below the RIP; "user" below the
kernel half) and prints the 25 largest of each file.
"""
import bisect
import collections
import re
import sys

SVM = {96: 'INTR', 97: 'NMI', 100: 'VINTR', 114: 'CPUID', 119: 'PAUSE', 120: 'HLT', 121: 'INVLPG',
       123: 'IOIO', 124: 'MSR', 129: 'VMMCALL', 1024: 'NPF'}


def main():
    syms = []
    for line in open(sys.argv[1]):
        p = line.split()
        if len(p) >= 3 and p[1] in 'tTwW':
            syms.append((int(p[0], 16), p[2] + (' ' + p[3] if len(p) > 3 else '')))
    syms.sort()
    addrs = [a for a, _ in syms]
    for path in sys.argv[2:]:
        agg, total = collections.Counter(), 0
        for line in open(path):
            m = re.search(r'exit_reason:\s+(\d+), guest_rip:\s+(\d+) \} hitcount:\s+(\d+)', line)
            if not m:
                continue
            reason, rip, n = int(m[1]), int(m[2]), int(m[3])
            if rip < 1 << 47:
                name = 'user'
            else:
                i = bisect.bisect_right(addrs, rip) - 1
                name = syms[i][1] if i >= 0 else hex(rip)
            agg[(SVM.get(reason, str(reason)), name)] += n
            total += n
        print('== %s: %d exits' % (path, total))
        for (reason, name), n in agg.most_common(25):
            print('%7d %-8s %s' % (n, reason, name))


if __name__ == '__main__':
    main()
