#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Alignment checker: does every host hypercall fall between its two guest markers?

Reads vtrace-merge --format jsonl output.  Guest markers are print events
"vtrace-align c=CPU n=I before|after" (from e2e_align), host markers are
kvm_hypercall events with nr 0x7654, a0 = guest CPU, a1 = I, a2 = guest tag
(the guest's number: guest "gK" has tag K).

A sample is ordered when  before.host_tsc < hypercall.host_tsc < after.host_tsc.
Prints the ordered share, the distribution of the slack (hypercall - before),
and, for comparison, the same check with guest times converted the way a
start/end offset sample does it (the trace-cmd approach): each vCPU's offset
sampled when the recording starts and when it ends, the start offset applied
to the first half of the recording and the end offset to the second half.
That comparison is printed, not asserted on.

With --offset-events the offset history is the host's vtrace_host:tsc_offset
events in the same jsonl (vtrace-merge --event ...,tsc_offset): besides the
comparison, a "history:" line per guest says whether its VM's history in the
host trace is whole: at least one record per vCPU, every record's
prev_offset equal to the offset of its vCPU's record before it (a record
lost breaks the chain), and no creation record (prev_offset 0: the recording
began after the VM was created, the case a late recording must handle).

Exit status: 0 when every expected sample is present and ordered.
"""
import argparse
import bisect
import json
import re
import sys

HC_NR = 0x7654
MARK = re.compile(r"vtrace-align c=(\d+) n=(\d+) (before|after)")


def load(path, records=None):
    """Return (samples, host_range) from the merged jsonl; tsc_offset events go to @records."""
    samples = {}  # (guest, cpu, n) -> {"before": ev, "after": ev, "host": ev}
    lo, hi = None, None
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("type") == "self_check":  # the verdict, the last line
                continue
            fields = ev.get("fields", {})
            machine = ev["machine"]
            if machine == "host" and ev.get("event") == "tsc_offset" and records is not None:
                records.append(fields)
                continue
            if machine == "host":
                if ev.get("event") != "kvm_hypercall" or int(fields.get("nr", -1)) != HC_NR:
                    continue
                key = ("g%d" % int(fields["a2"]), int(fields["a0"]), int(fields["a1"]))
                samples.setdefault(key, {})["host"] = ev
                continue
            if ev.get("event") != "print":
                continue
            m = MARK.search(str(fields.get("buf", "")))
            if not m:
                continue
            key = (machine, int(m.group(1)), int(m.group(2)))
            samples.setdefault(key, {})[m.group(3)] = ev
            t = ev["host_tsc"]
            lo = t if lo is None else min(lo, t)
            hi = t if hi is None else max(hi, t)
    return samples, (lo, hi)


def load_offsets(path):
    """vCPU histories: (pid, vcpu_id) -> [(host_tsc, offset)] oldest first (signed offsets)."""
    hist = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            w = line.split()
            hist.setdefault((int(w[2]), int(w[4])), []).append((int(w[1]), int(w[7])))
    return hist


def events_history(records):
    """(pid, vcpu_id) -> [(host_tsc, offset)], and the records per (pid, vcpu_id), host_tsc order."""
    hist, recs = {}, {}
    for r in sorted(records, key=lambda r: r["host_tsc"]):
        key = (int(r["pid"]), int(r["vcpu_id"]))
        hist.setdefault(key, []).append((int(r["host_tsc"]), int(r["offset"])))
        recs.setdefault(key, []).append(r)
    return hist, recs


def history_report(label, recs, pid, cpus, created="before"):
    """One guest's history in the host trace: whole? (see the module docstring)

    created: "before" the recording (no creation record), "during" it (the
    guest's boot began, or the bed started it again, testbed/l2-watch.sh, once
    trace-cmd recorded: each vCPU's history then starts with its creation
    records, whole from the VM's start, and has none later) or "around" its
    start (made while trace-cmd enabled its events: either form).
    A vCPU made on a host with an unstable TSC writes two (offset 0 while
    KVM creates it, vcpu_idx -1, then its real offset: ci12's align_unstable),
    on a stable one one.
    """
    # a snapshot of the event's enable after a record of its vCPU repeats that
    # record (Documentation/vtrace_host.rst, "Reading the history"): not a link
    mine = {k[1]: [r for i, r in enumerate(v) if i == 0 or int(r["kind"]) != 1]
            for k, v in recs.items() if k[0] == pid}
    breaks = sum(1 for v in mine.values() for a, b in zip(v, v[1:])
                 if int(b["prev_offset"]) != int(a["offset"]))
    creation = sum(1 for v in mine.values() for r in v
                   if int(r["prev_offset"]) == 0 and int(r["kind"]) == 0)
    n = sum(len(v) for v in mine.values())
    def leading(v):		# the creation records at the start of one vCPU's chain
        n = 0
        while n < len(v) and int(v[n]["prev_offset"]) == 0 and int(v[n]["kind"]) == 0:
            n += 1
        return n
    lead = sum(leading(v) for v in mine.values())
    whole_from_start = all(leading(v) > 0 for v in mine.values()) and creation == lead
    ok = len(mine) == cpus and breaks == 0
    note = ""
    if created == "during":
        ok = ok and whole_from_start
        note = " (its VM made during the recording)"
    elif created == "around":
        ok = ok and (creation == 0 or whole_from_start)
        note = " (its VM made while trace-cmd started: %s)" % (
            "after the events were enabled" if creation else "before the events were enabled")
    else:
        ok = ok and creation == 0
    print("history: %s pid %d: %d records in the host trace, vCPUs %s, chain breaks %d, "
          "creation records %d%s: %s" % (label, pid, n, sorted(mine), breaks, creation, note,
                                         "ok" if ok else "FAIL"))
    return ok


def in_force(h, tsc):
    """the offset in force at host TSC @tsc: the last record at or before it
    (the first record's before any); @h oldest first"""
    i = bisect.bisect_right([t for t, _ in h], tsc)
    return h[max(i - 1, 0)][1]


def naive_check(samples, hist, rng, pids):
    """Re-time guest markers from two offset samples; count misordered samples.

    Like a tool that reads each vCPU's offset when the recording starts and
    when it ends and interpolates linearly in between (on the guest's own
    timestamps), as trace-cmd does between its time-sync samples.
    @pids maps a guest name ("g1") to its QEMU pid in the offsets file.
    """
    lo, hi = rng
    # each guest CPU's first and last marker (guest TSC), for the interpolation
    span = {}
    for (guest, cpu, _), s in samples.items():
        for k in ("before", "after"):
            if k in s:
                g = s[k]["guest_tsc"]
                a, b = span.get((guest, cpu), (g, g))
                span[(guest, cpu)] = (min(a, g), max(b, g))
    wrong = total = 0
    ends = {}  # (pid, cpu) -> the offsets in force at the start and at the end
    for (guest, cpu, n), s in samples.items():
        if not all(k in s for k in ("before", "host", "after")):
            continue
        key = (pids.get(guest), cpu)
        if key not in hist:
            continue
        if key not in ends:
            ends[key] = (in_force(hist[key], lo), in_force(hist[key], hi))
        start, end = ends[key]
        g0, g1 = span[(guest, cpu)]

        def naive(ev):
            g = ev["guest_tsc"]
            frac = (g - g0) / (g1 - g0) if g1 > g0 else 0.0
            return g - (start + (end - start) * frac)

        total += 1
        if not naive(s["before"]) < s["host"]["host_tsc"] < naive(s["after"]):
            wrong += 1
    return wrong, total


def report(label, samples, expected, khz, hist, rng, pids):
    """Print one guest's (or all guests') figures; True when all expected samples are ordered."""
    complete = ordered = 0
    slack = []
    missing = []
    for key, s in sorted(samples.items()):
        if not all(k in s for k in ("before", "host", "after")):
            missing.append(key)
            continue
        complete += 1
        b, h, e = s["before"]["host_tsc"], s["host"]["host_tsc"], s["after"]["host_tsc"]
        if b < h < e:
            ordered += 1
        slack.append(h - b)
    print("%s: samples expected %d, complete %d, ordered %d (%.1f%%)" %
          (label, expected, complete, ordered, 100.0 * ordered / max(complete, 1)))
    if missing:
        print("%s: incomplete samples: %d, first: %s" % (label, len(missing), missing[:5]))
    if slack:
        slack.sort()
        q = lambda p: slack[min(len(slack) - 1, int(p * len(slack)))]
        if khz:
            us = lambda c: c * 1000.0 / khz
            print("%s: slack (host hypercall - guest before marker), us: min %.1f p50 %.1f "
                  "p90 %.1f p99 %.1f max %.1f" % (label, us(slack[0]), us(q(0.5)), us(q(0.9)),
                                                  us(q(0.99)), us(slack[-1])))
        else:
            print("%s: slack (host hypercall - guest before marker), TSC cycles: min %d p50 %d "
                  "p90 %d p99 %d max %d" % (label, slack[0], q(0.5), q(0.9), q(0.99), slack[-1]))
        neg = sum(1 for x in slack if x <= 0)
        print("%s: samples with hypercall at or before its before-marker: %d" % (label, neg))
    if hist:
        wrong, total = naive_check(samples, hist, rng, pids)
        if total:
            print("%s: start/end offset samples, interpolated (trace-cmd style), same data: "
                  "%d of %d ordered (%.1f%%), %d wrong" %
                  (label, total - wrong, total, 100.0 * (total - wrong) / total, wrong))
    return complete == expected and ordered == complete


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--samples", type=int, required=True, help="samples per guest CPU")
    ap.add_argument("--guests", type=int, default=1)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--offsets", help="tsc_offsets file, for the start/end comparison")
    ap.add_argument("--offset-events", action="store_true",
                    help="the history is the jsonl's vtrace_host:tsc_offset events")
    ap.add_argument("--khz", type=int, default=0)
    ap.add_argument("--created-during", action="append", default=[], metavar="gN",
                    help="guest whose VM was made during the recording")
    ap.add_argument("--created-around", action="append", default=[], metavar="gN",
                    help="guest whose VM was made while trace-cmd started")
    ap.add_argument("--pid", action="append", default=[],
                    help="NAME=PID: the guest's QEMU pid in the offsets file")
    a = ap.parse_args()
    pids = dict((n, int(p)) for n, p in (x.split("=") for x in a.pid))

    records = [] if a.offset_events else None
    samples, rng = load(a.jsonl, records)
    hist = load_offsets(a.offsets) if a.offsets else None
    if a.offset_events:
        hist, recs = events_history(records)
    ok = True
    for g in range(1, a.guests + 1):
        mine = {k: v for k, v in samples.items() if k[0] == "g%d" % g}
        ok = report("g%d" % g, mine, a.samples * a.cpus, a.khz, hist, rng, pids) and ok
        if a.offset_events:
            # printed, asserted by the caller (its own KTAP result)
            name = "g%d" % g
            history_report(name, recs, pids.get(name, -1), a.cpus,
                           "during" if name in a.created_during else
                           "around" if name in a.created_around else "before")
    stray = [k for k in samples if k[0] not in ["g%d" % g for g in range(1, a.guests + 1)]]
    if stray:
        print("samples of unknown guests: %d, first: %s" % (len(stray), stray[:5]))
        ok = False
    print("RESULT: %s" % ("ok" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
