#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Check what vtrace_guest sent: ctl messages, per-CPU pages, numbered markers, EOS counters.
"""
Usage: guest_check.py DIR [--markers N] [--cpus K,K..] [--console LOG]
                          [--expect-lost] [--sessions N]
       guest_check.py DIR --accounting --sessions N --console LOG [--merge-stats FILE]

DIR holds the host ends of a guest's ports (ctl, cpu0, cpu1, ...).  The
checker walks every page of every cpuK file as the guest's
events/header_page describes it, finds the markers "vtg-mark cpu=K seq=N"
written by the guest_markers helper and checks that each CPU's markers
0..N-1 arrived exactly once, in order, in cpuK.  It checks that the EOS
counters (pages, bytes, events, fillers) equal what the files hold, and,
given the guest's console, that every META_FILE equals the guest's file
(lines "vtg-md5 NAME MD5" printed by the guest).  Prints "ok: ..." or
"FAIL: ..." lines; exit status 1 on any failure.

--accounting (guest_accounting.sh): for every session, every CPU, the
guest's status table after the stop ("vtg-status S: ..."), its ring's
per_cpu/cpuK/stats ("vtg-ring S ..."), what its generator wrote ("vtg-gen
S: ...") and the session's EOS must agree; the missed-events counts in the
page headers must equal the ring's overruns and sit exactly where markers
are missing; every marker written is delivered once, in order, or counted
lost; --merge-stats: vtrace-merge --stats of DIR reports the same totals.
"""
import argparse
import hashlib
import os
import re
import struct
import sys

MAGIC = 0x43525456
BUF_OFF = 16  # offset of print_entry.buf, from the guest's ftrace/print format

TYPES = {1: "HELLO", 2: "ACK", 3: "ERROR", 16: "START", 17: "STOP", 18: "SET_EVENTS",
         19: "SET_BUFFER_SIZE", 20: "STATUS_REQ", 32: "STATUS", 33: "META_INFO",
         34: "META_FILE", 35: "STARTED", 36: "EOS"}
HDR = struct.Struct("<IHHIIQ")
STATUS = struct.Struct("<IIIIQQ")
CPU_STATS = struct.Struct("<II8Q")
META_FILE = struct.Struct("<IIQQ")
FILLER = b"vtrace-flush-filler"
fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)


def ok(msg):
    print("ok: " + msg)


def parse_ctl(data, spans=None):
    """List of (type, seq, payload); counts bytes skipped to resync.  @spans gets
    the (start, end) byte range of each message."""
    msgs, off, skipped = [], 0, 0
    while off + HDR.size <= len(data):
        magic, ver, typ, flags, length, seq = HDR.unpack_from(data, off)
        if magic != MAGIC:
            off += 1
            skipped += 1
            continue
        if off + HDR.size + length > len(data):
            break
        msgs.append((typ, seq, data[off + HDR.size:off + HDR.size + length]))
        if spans is not None:
            spans.append((off, off + HDR.size + length))
        off += HDR.size + length
    return msgs, skipped


def cpu_stats(payload):
    state, nr_cpus, nr_ports, _, session, tsc = STATUS.unpack_from(payload, 0)
    stats = {}
    for i in range(nr_cpus):
        f = CPU_STATS.unpack_from(payload, STATUS.size + i * CPU_STATS.size)
        stats[f[0]] = dict(zip(("cpu", "flags", "pages_sent", "bytes_sent", "events_sent",
                                "fillers_sent", "pages_lost", "events_lost_port",
                                "events_lost_ring", "port_errors"), f))
    return stats


def meta_files(msgs):
    files = {}
    for typ, seq, p in msgs:
        if typ != 34:
            continue
        kind, name_len, data_len, _ = META_FILE.unpack_from(p, 0)
        name = p[META_FILE.size:META_FILE.size + name_len].rstrip(b"\0").decode()
        data = p[META_FILE.size + name_len:META_FILE.size + name_len + data_len]
        files[name] = data
    return files


def walk_page(page, print_id):
    """Yield (is_data, payload) for every event of one ring-buffer page."""
    ts, commit = struct.unpack_from("<QQ", page, 0)
    length = commit & 0x3fffffff
    data, off = page[16:16 + min(length, len(page) - 16)], 0
    while off + 4 <= len(data):
        h, = struct.unpack_from("<I", data, off)
        tl = h & 0x1f
        if tl == 29 and not h >> 5:
            break
        if tl in (30, 31):
            off += 8
            continue
        if tl in (0, 29):
            ln, = struct.unpack_from("<I", data, off + 4)
            elen, body = ln + 4, data[off + 8:off + ln + 4]
        else:
            elen, body = tl * 4 + 4, data[off + 4:off + tl * 4 + 4]
        if tl != 29:
            yield body
        off += elen


def page_missed(page):
    """The missed-events mark of a page header: (flag set, stored count or None)."""
    commit, = struct.unpack_from("<Q", page, 8)
    # the kernel adds RB_MISSED_EVENTS, an int (1 << 31), to the 64-bit
    # commit: sign-extended, it sets bits 32-63 as well
    size = commit & 0x3fffffff
    if not (commit >> 31) & 1:
        return False, None
    if not (commit >> 30) & 1 or 16 + size + 8 > len(page):
        return True, None
    return True, struct.unpack_from("<Q", page, 16 + size)[0]


def check_pages(d, cpu, page_size, print_id, markers, eos, first=0, count=None):
    """@first: byte offset of the session's first page in cpuK; @count: its pages"""
    path = os.path.join(d, "cpu%d" % cpu)
    raw = open(path, "rb").read() if os.path.exists(path) else b""
    if count is not None:
        raw = raw[first:first + count * page_size]
    if len(raw) % page_size:
        fail("cpu%d: %d bytes, not whole pages" % (cpu, len(raw)))
    events = fillers = 0
    seqs, stray = [], 0
    for p in range(len(raw) // page_size):
        for body in walk_page(raw[p * page_size:(p + 1) * page_size], print_id):
            events += 1
            if len(body) < BUF_OFF or struct.unpack_from("<H", body, 0)[0] != print_id:
                continue
            text = body[BUF_OFF:].split(b"\0", 1)[0]
            if text.startswith(FILLER):
                fillers += 1
                continue
            m = re.match(rb"vtg-mark cpu=(\d+) seq=(\d+)", text)
            if m:
                if int(m.group(1)) != cpu:
                    stray += 1
                seqs.append(int(m.group(2)))
    pages = len(raw) // page_size
    print("# cpu%d: %d pages, %d events, %d fillers, %d markers" %
          (cpu, pages, events, fillers, len(seqs)))
    if stray:
        fail("cpu%d: %d markers of another CPU" % (cpu, stray))
    if markers is not None:
        want = list(range(markers)) if isinstance(markers, int) else markers
        if seqs == want:
            ok("cpu%d: %d markers %d..%d, each exactly once, in order" %
               (cpu, len(want), want[0], want[-1]))
        else:
            missing = sorted(set(want) - set(seqs))
            dup = len(seqs) - len(set(seqs))
            fail("cpu%d: %d markers, %d missing (first %s), %d duplicated, in order: %s" %
                 (cpu, len(seqs), len(missing), missing[:5], dup, seqs == sorted(seqs)))
    if eos is not None:
        st = eos.get(cpu)
        got = (pages, pages * page_size, events, fillers)
        want = (st["pages_sent"], st["bytes_sent"], st["events_sent"], st["fillers_sent"])
        if st["events_lost_ring"] or st["pages_lost"]:
            fail("cpu%d: EOS reports %d events overwritten in the ring, %d pages lost" %
                 (cpu, st["events_lost_ring"], st["pages_lost"]))
        if got == want:
            ok("cpu%d: EOS counters equal the file (pages %d events %d fillers %d)" %
               (cpu, pages, events, fillers))
        else:
            fail("cpu%d: EOS says pages/bytes/events/fillers %s, file has %s" % (cpu, want, got))
    return pages, events


def check_md5(files, console, session=None):
    """Lines "vtg-md5 NAME MD5" of the guest's console are of the first session (or
    of the whole stream), "vtg-md5 NAME@S MD5" of session S."""
    want = {}
    for line in open(console, errors="replace"):
        m = re.match(r"vtg-md5 ([^\s@]+)(?:@(\d+))? ([0-9a-f]{32})", line.strip())
        if m and int(m.group(2) or 1) == (session or 1):
            want[m.group(1)] = m.group(3)
    if not want:
        fail("no vtg-md5 lines in %s" % console)
    for name, md5 in sorted(want.items()):
        if name not in files:
            fail("META_FILE %s not sent" % name)
        elif hashlib.md5(files[name]).hexdigest() != md5:
            fail("META_FILE %s differs from the guest's file" % name)
    if want and all(n in files and hashlib.md5(files[n]).hexdigest() == m
                    for n, m in want.items()):
        ok("%d META_FILEs equal the guest's files byte for byte" % len(want))


STATUS_COLS = ("pages_sent", "bytes_sent", "events_sent", "fillers_sent", "pages_lost",
               "events_lost_port", "events_lost_ring", "port_errors")


def console_lines(console):
    """Per (tag, session): the guest's lines "TAG S[:] rest" of the accounting script."""
    out = {}
    for line in open(console, errors="replace"):
        m = re.match(r"(vtg-status|vtg-ring|vtg-gen) (\d+):? (.*)", line.rstrip("\r\n"))
        if m:
            out.setdefault((m.group(1), int(m.group(2))), []).append(m.group(3))
    return out


def kv(text):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def session_pages(d, cpu, page_size, print_id, first, count):
    """[(missed flag, missed count or None, [marker seq or 'filler' or None per event])]
    of the @count pages from byte @first of cpuK"""
    raw = open(os.path.join(d, "cpu%d" % cpu), "rb").read()
    raw = raw[first:first + count * page_size]
    pages = []
    for p in range(len(raw) // page_size):
        page = raw[p * page_size:(p + 1) * page_size]
        flag, missed = page_missed(page)
        evs = []
        for body in walk_page(page, print_id):
            text = b""
            if len(body) >= BUF_OFF and struct.unpack_from("<H", body, 0)[0] == print_id:
                text = body[BUF_OFF:].split(b"\0", 1)[0]
            m = re.match(rb"vtg-mark cpu=%d seq=(\d+)" % cpu, text)
            evs.append(int(m.group(1)) if m else "filler" if text.startswith(FILLER) else None)
        pages.append((flag, missed, evs))
    return pages


def account_cpu(tag, pages, gen, ring, eos):
    """One session, one CPU: markers, gaps and missed counts, EOS vs the ring's counters."""
    written, failed = gen["written"], gen["failed"]
    prev, missed_sum, stray, bad_gaps, fillers = -1, 0, 0, [], 0
    for flag, missed, evs in pages:
        if flag and missed is None:
            fail("%s: a page says events were lost but has no room for the count" % tag)
        gap = missed or 0
        missed_sum += gap
        for ev in evs:
            if ev == "filler":
                fillers += 1
                continue
            if ev is None:
                stray += 1
                continue
            if ev != prev + 1 + gap:
                bad_gaps.append((prev, ev, gap))
            prev, gap = ev, 0
    delivered = sum(1 for _, _, evs in pages for ev in evs if isinstance(ev, int))
    # refused writes (no overwrite) are the last ones: nothing was read meanwhile
    last_want = written + failed - 1 - (failed if ring["dropped"] else 0)
    marked = sum(1 for flag, _, _ in pages if flag)
    print("# %s: written %d, refused %d, delivered %d, page headers say %d lost (%d pages),"
          " EOS ring_lost %d, ring overrun %d dropped %d" %
          (tag, written, failed, delivered, missed_sum, marked, eos["events_lost_ring"],
           ring["overrun"], ring["dropped"]))
    if stray:
        fail("%s: %d events that are neither this CPU's markers nor fillers" % (tag, stray))
    if bad_gaps:
        fail("%s: %d marker gaps unlike the page headers' missed counts, first: after %d came %d,"
             " page says %d missed" % ((tag, len(bad_gaps)) + bad_gaps[0]))
    elif prev != last_want:
        fail("%s: last marker delivered %d, expected %d" % (tag, prev, last_want))
    else:
        ok("%s: every gap between markers equals its page's missed count; last marker %d" %
           (tag, prev))
    if missed_sum != ring["overrun"]:
        fail("%s: page headers count %d lost, the ring's overrun is %d" %
             (tag, missed_sum, ring["overrun"]))
    if eos["events_lost_ring"] != ring["overrun"] + ring["commit_overrun"] + ring["dropped"]:
        fail("%s: EOS ring_lost %d, the ring's overrun+commit overrun+dropped %d" %
             (tag, eos["events_lost_ring"],
              ring["overrun"] + ring["commit_overrun"] + ring["dropped"]))
    if ring["dropped"] != failed:
        fail("%s: the ring dropped %d events, the generator saw %d writes refused" %
             (tag, ring["dropped"], failed))
    if delivered + missed_sum + failed != written + failed:
        fail("%s: delivered %d + lost in pages %d + refused %d != %d written" %
             (tag, delivered, missed_sum, failed, written + failed))
    elif missed_sum == ring["overrun"] and ring["dropped"] == failed and \
            eos["events_lost_ring"] == ring["overrun"] + ring["commit_overrun"] + failed:
        ok("%s: delivered %d + lost %d = %d markers generated; pages, ring and EOS agree" %
           (tag, delivered, missed_sum + failed, written + failed))
    return missed_sum


def check_accounting(a, msgs, page_sizes, print_id):
    """@page_sizes: each session's META_INFO page_size (its sub-buffer size)"""
    lines = console_lines(a.console)
    eos_all = [cpu_stats(p) for t, _, p in msgs if t == 36]
    if len(eos_all) != a.sessions:
        fail("ctl: %d EOS, expected %d" % (len(eos_all), a.sessions))
        return
    totals = {}
    for s in range(1, a.sessions + 1):
        eos = eos_all[s - 1]
        status = {}
        for row in lines.get(("vtg-status", s), []):
            f = row.split()
            if len(f) == 11 and f[0].isdigit():
                status[int(f[0])] = dict(zip(STATUS_COLS, map(int, f[3:])))
        gens = {kv(x)["cpu"]: kv(x) for x in lines.get(("vtg-gen", s), [])}
        rings = {kv(x)["cpu"]: kv(x) for x in lines.get(("vtg-ring", s), [])}
        for cpu in sorted(gens):
            tag = "session %d cpu%d" % (s, cpu)
            st, e = status.get(cpu), eos[cpu]
            if st is None or cpu not in rings:
                fail("%s: no status or ring line from the guest" % tag)
                continue
            if any(st[k] != e[k] for k in STATUS_COLS):
                fail("%s: status %s, EOS %s" % (tag, [st[k] for k in STATUS_COLS],
                                                [e[k] for k in STATUS_COLS]))
            else:
                ok("%s: status after stop equals EOS (%s)" %
                   (tag, " ".join("%s %d" % (k, e[k]) for k in STATUS_COLS[2:7])))
            first = sum(x[cpu]["bytes_sent"] for x in eos_all[:s - 1])
            pages = session_pages(a.dir, cpu, page_sizes[s - 1], print_id, first,
                                  e["pages_sent"])
            nev = sum(len(evs) for _, _, evs in pages)
            nfill = sum(evs.count("filler") for _, _, evs in pages)
            if (len(pages), nev, nfill) != (e["pages_sent"], e["events_sent"], e["fillers_sent"]):
                fail("%s: file has pages/events/fillers %s, EOS %s" %
                     (tag, (len(pages), nev, nfill),
                      (e["pages_sent"], e["events_sent"], e["fillers_sent"])))
            missed = account_cpu(tag, pages, gens[cpu], rings[cpu], e)
            t = totals.setdefault(cpu, [0, 0, 0, 0])
            t[0] += nev
            t[1] += nfill
            t[2] += missed
            t[3] += e["events_lost_ring"] + e["events_lost_port"]
    if a.merge_stats:
        check_merge_stats(a.merge_stats, totals)


def check_merge_stats(path, totals):
    """vtrace-merge --stats of the whole capture: the same totals per CPU."""
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 8 and f[1].isdigit():
            rows[int(f[1])] = f
    for cpu, (nev, nfill, missed, lost_eos) in sorted(totals.items()):
        f = rows.get(cpu)
        if not f:
            fail("vtrace-merge --stats: no line for cpu%d" % cpu)
            continue
        got = (int(f[2]), int(f[4]), f[5], int(f[6]))
        want = (nev, nfill, str(missed), lost_eos)
        checks = [x for x in f[10:] if x.startswith(("MISMATCH", "no-EOS", "truncated"))]
        if got != want or checks:
            fail("vtrace-merge --stats cpu%d: read/fillers/lost-page/lost-eos %s %s, expected %s" %
                 (cpu, got, checks, want))
        else:
            ok("vtrace-merge --stats cpu%d: read %d, fillers %d, lost-page %s, lost-eos %d, as "
               "the pages and EOS say" % ((cpu,) + got))


def session_msgs(msgs, session):
    """The messages of the session of the N-th EOS, as indexes: from the META_INFO of
    the same session number (a start that failed after its META_INFO has no EOS)"""
    ends = [i for i, (t, _, _) in enumerate(msgs) if t == 36]
    if len(ends) < session:
        return []
    end = ends[session - 1]
    number = STATUS.unpack_from(msgs[end][2], 0)[4]
    infos = [i for i, (t, _, p) in enumerate(msgs[:end])
             if t == 33 and struct.unpack_from("<Q", p, 16)[0] == number]
    return list(range(infos[-1], end + 1)) if infos else []


def extract(a, data, spans, idx, eos_all, page_size):
    """--extract: one session as a dump folder of its own (ctl, cpuK, qemu.pid)"""
    os.makedirs(a.extract, exist_ok=True)
    with open(os.path.join(a.extract, "ctl"), "wb") as f:
        for i in idx:
            f.write(data[spans[i][0]:spans[i][1]])
    for cpu in eos_all[a.session - 1]:
        path = os.path.join(a.dir, "cpu%d" % cpu)
        raw = open(path, "rb").read() if os.path.exists(path) else b""
        first = sum(x[cpu]["bytes_sent"] for x in eos_all[:a.session - 1])
        with open(os.path.join(a.extract, "cpu%d" % cpu), "wb") as f:
            f.write(raw[first:first + eos_all[a.session - 1][cpu]["bytes_sent"]])
    pid = os.path.join(a.dir, "qemu.pid")
    if os.path.exists(pid):
        with open(os.path.join(a.extract, "qemu.pid"), "w") as f:
            f.write(open(pid).read())
    print("# session %d (pages of %d bytes) extracted to %s" % (a.session, page_size, a.extract))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--markers", type=int)
    ap.add_argument("--cpus")
    ap.add_argument("--console")
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--session", type=int,
                    help="check only the pages of the N-th EOS (1-based) of the ctl stream")
    ap.add_argument("--expect", action="append", default=[],
                    help="CPU:FIRST-LAST[+FIRST-LAST...]: the markers of that CPU")
    ap.add_argument("--ctl-only", action="store_true",
                    help="only check that ctl holds whole messages, STARTED/EOS pairs")
    ap.add_argument("--accounting", action="store_true",
                    help="check every session's losses (guest_accounting.sh), needs --console")
    ap.add_argument("--merge-stats", help="with --accounting: vtrace-merge --stats output")
    ap.add_argument("--seq-gaps", action="store_true",
                    help="ctl was a socket: messages sent while unconnected are missing")
    ap.add_argument("--extract", metavar="OUT",
                    help="with --session: write that session as a dump folder OUT")
    a = ap.parse_args()

    data, spans = open(os.path.join(a.dir, "ctl"), "rb").read(), []
    msgs, skipped = parse_ctl(data, spans)
    order = []
    for typ, _, _ in msgs:
        name = TYPES.get(typ, str(typ))
        if order and order[-1][0] == name:
            order[-1][1] += 1
        else:
            order.append([name, 1])
    print("# ctl: " + " ".join(n if c == 1 else "%s*%d" % (n, c) for n, c in order))
    if skipped:
        fail("ctl: %d bytes outside messages" % skipped)
    types = [t for t, _, _ in msgs]
    if a.ctl_only:
        pairs = [t for t in types if t in (35, 36)]
        if pairs != [35, 36] * a.sessions:
            fail("ctl: STARTED/EOS sequence %s, expected %d pairs" % (pairs[:8], a.sessions))
        else:
            ok("ctl: %d sessions, each STARTED then EOS, no stray bytes" % a.sessions)
        return 1 if fails else 0
    seqs = [s for _, s, _ in msgs]
    runs = []                       # one per module load: seq restarts at 1
    for q in seqs:
        if q == 1 or not runs:
            runs.append([])
        runs[-1].append(q)
    for r in runs:
        if a.seq_gaps and r != sorted(set(r)):
            fail("ctl: guest seq not increasing")
        elif not a.seq_gaps and r != list(range(1, len(r) + 1)):
            fail("ctl: guest seq not 1, 2, 3, ...")
    if types.count(35) != a.sessions or types.count(36) != a.sessions:
        fail("ctl: %d STARTED, %d EOS, expected %d" % (types.count(35), types.count(36),
                                                       a.sessions))
    elif types[0] != 1 or types.index(33) > types.index(35) or \
            types.index(36) < types.index(35):
        fail("ctl: order is not HELLO ... META_INFO ... STARTED ... EOS")
    else:
        ok("ctl: HELLO, META_INFO, META_FILEs, STARTED, EOS in order")
    idx = session_msgs(msgs, a.session) if a.session else range(len(msgs))
    files = meta_files([msgs[i] for i in idx])
    infos = [msgs[i][2] for i in idx if msgs[i][0] == 33]
    if not infos:
        fail("ctl: no META_INFO for session %s" % a.session)
        return 1
    page_size = struct.unpack_from("<I", infos[-1], 28)[0]
    print("# META_INFO page_size %d" % page_size)
    fmt = files.get("ftrace/print", b"").decode()
    m = re.search(r"ID: (\d+)", fmt)
    if not m:
        fail("no ftrace/print format in META_FILEs")
        return 1
    print_id = int(m.group(1))
    # where the text starts: 16, or 24 on PREEMPT_RT (a bigger trace_entry)
    global BUF_OFF
    m = re.search(r"field:char buf\[\];\s*offset:(\d+);", fmt)
    BUF_OFF = int(m.group(1)) if m else 16
    if a.extract and a.session:
        extract(a, data, spans, idx, [cpu_stats(p) for t, _, p in msgs if t == 36], page_size)
    if a.accounting:
        check_accounting(a, msgs, [struct.unpack_from("<I", p, 28)[0]
                                   for t, _, p in msgs if t == 33], print_id)
        print("# %s" % ("PASS" if not fails else "%d failures" % fails))
        return 1 if fails else 0
    eos_all = [cpu_stats(p) for t, _, p in msgs if t == 36]
    eos = eos_all[-1] if eos_all else None
    cpus = [int(c) for c in a.cpus.split(",")] if a.cpus else sorted(eos) if eos else [0]
    if a.session and len(eos_all) < a.session:
        fail("ctl: no EOS for session %d (%d EOS in the stream)" % (a.session, len(eos_all)))
    elif a.session:
        eos = eos_all[a.session - 1]
        expect = {}
        for e in a.expect:
            cpu, spec = e.split(":")
            expect[int(cpu)] = [n for r in spec.split("+")
                                for n in range(int(r.split("-")[0]), int(r.split("-")[1]) + 1)]
        for cpu in cpus:
            first = sum(x[cpu]["bytes_sent"] for x in eos_all[:a.session - 1])
            check_pages(a.dir, cpu, page_size, print_id, expect.get(cpu, a.markers), eos,
                        first, eos[cpu]["pages_sent"])
    else:
        for cpu in cpus:
            check_pages(a.dir, cpu, page_size, print_id, a.markers,
                        eos if a.sessions == 1 else None)
    if a.console:
        check_md5(files, a.console, a.session)
    print("# %s" % ("PASS" if not fails else "%d failures" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
