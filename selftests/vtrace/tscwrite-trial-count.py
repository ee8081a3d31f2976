#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the TSC-write trials (l1/tscwrite_trial.sh) of one or more L1 runs.

  tscwrite-trial-count.py OUT...   (results folders of run-l1.sh)

Per mode (A, B: as each console names it): trials started, trials g1 did not
finish (its guest reset or stalled, or L1 died) with a Wilson 95 % interval,
Fisher's exact p of A against B, and per trial the mean of g1's VM exits a
second (KVM's debugfs, sampled by L1 every second) before its TSC write and
in the write's window (write, 500 marker pairs, 2 s), its local timer
interrupts in the 2 s after the write, and vtrace_guest's debug counters.
"""
import glob
import math
import os
import re
import statistics
import sys

TRIAL = re.compile(r"^trial (\d+) mode (\w) (\w+) ?(.*)")


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def fisher(a, b, c, d):
    """Two-sided Fisher exact p of [[a, b], [c, d]]."""
    n1, n2, k = a + b, c + d, a + c
    n = n1 + n2

    def pr(x):
        return math.comb(n1, x) * math.comb(n2, k - x) / math.comb(n, k)
    p0 = pr(a)
    lo, hi = max(0, k - n2), min(k, n1)
    return min(1.0, sum(pr(x) for x in range(lo, hi + 1) if pr(x) <= p0 * (1 + 1e-9)))


def console_trials(path):
    """{trial: {mode, phases: {phase: rest}}} from one guest's console"""
    trials = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = TRIAL.match(line.strip())
            if m:
                t = trials.setdefault(int(m[1]), {"mode": m[2], "ph": {}})
                t["ph"][m[3]] = m[4]
    return trials


def exit_rates(path):
    """{trial: {phase: [(uptime, exits)]}} from exits.log, for g1"""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 8 or w[3] == "-" or "trial" not in w:
                continue
            i = w.index("trial")
            out.setdefault(int(w[i + 1]), {}).setdefault(w[i + 4], []).append(
                (float(w[0]), int(w[3])))
    return out


def rate(samples):
    if len(samples) < 2 or samples[-1][0] <= samples[0][0]:
        return None
    return (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])


def window(ph, a, b):
    """exits a second from the first sample of phase a to the first of b"""
    if a in ph and b in ph:
        return rate([ph[a][0], ph[b][0]])
    return None


def run(out, stats):
    l1_died = False
    for log in ("run.log", "l1-script.out"):
        p = os.path.join(out, log)
        if os.path.exists(p) and "L1 ended while running the script" in open(p).read():
            l1_died = True
    rates = exit_rates(os.path.join(out, "exits.log"))
    cons = sorted(glob.glob(os.path.join(out, "b*-g1", "console.log")),
                  key=lambda p: int(re.search(r"/b(\d+)-g1/", p)[1]))
    for ci, con in enumerate(cons):
        boot = re.search(r"/(b\d+)-g1/", con)[1]
        qlog = open(os.path.join(os.path.dirname(con), "qemu.log"), errors="replace").read()
        for pos, (n, t) in enumerate(sorted(console_trials(con).items())):
            ok = "done" in t["ph"]
            why = ""
            if not ok:
                if l1_died and ci == len(cons) - 1:
                    why = "L1 died"
                else:
                    why = "; ".join(l.strip() for l in qlog.splitlines()
                                    if re.search(r"l2 (guest reset|stalled|stuck)|watchdog", l))
                    why = why or "g1 ended (%s)" % qlog.strip().splitlines()[-1:]
            r = rates.get(n, {})
            stats.setdefault(t["mode"], []).append(n)
            m = re.match(r"(\d+) in ([\d.]+) s(.*)", t["ph"].get("loc2", ""))
            if m:
                stats.setdefault(t["mode"] + "-loc", []).append(int(m[1]) / float(m[2]))
                for k, v in re.findall(r"(dbg_\w+) (\d+)", m[3]):
                    stats.setdefault(t["mode"] + "-" + k, []).append(int(v))
            for a, b, k in (("start", "write", "-before"), ("write", "loc2", "-write")):
                if window(r, a, b):
                    stats.setdefault(t["mode"] + k, []).append(window(r, a, b))
            print("%-28s %-4s trial %3d (#%d in boot) mode %s %-4s exits/s before %7s write %7s | %s%s"
                  % (os.path.basename(out.rstrip("/")), boot, n, pos + 1, t["mode"],
                     "ok" if ok else "FAIL",
                     "%.0f" % window(r, "start", "write") if window(r, "start", "write") else "-",
                     "%.0f" % window(r, "write", "loc2") if window(r, "write", "loc2") else "-",
                     t["ph"].get("loc2", "-"), "  <- " + why if why else ""))
            if not ok:
                stats.setdefault(t["mode"] + "-fail", []).append(n)


def main():
    stats = {}
    for out in sys.argv[1:]:
        run(out, stats)
    f = {m: len(stats.get(m + "-fail", [])) for m in "AB"}
    n = {m: len(stats.get(m, [])) for m in "AB"}
    for m in "AB":
        lo, hi = wilson(f[m], n[m])
        print("mode %s: %d of %d trials failed (%.1f %%, Wilson 95 %%: %.1f-%.1f %%)"
              % (m, f[m], n[m], 100 * f[m] / n[m] if n[m] else 0, 100 * lo, 100 * hi))
    for m in "AB":
        med = {k: statistics.median(stats[m + k]) if stats.get(m + k) else float("nan")
               for k in ("-before", "-write", "-loc")}
        print("mode %s: median g1 VM exits/s %.0f before the write, %.0f after it; local timer"
              " interrupts/s after it (2 vCPUs) %.0f; in all trials: %s"
              % (m, med["-before"], med["-write"], med["-loc"],
                 ", ".join("%s %d" % (k, sum(stats.get(m + "-" + k, [])))
                           for k in ("dbg_busy_on", "dbg_ring_wakes", "dbg_drains"))))
    print("Fisher exact, two-sided: p = %.3f"
          % fisher(f["A"], n["A"] - f["A"], f["B"], n["B"] - f["B"]))


if __name__ == "__main__":
    main()
