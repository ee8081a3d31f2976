#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Time-bounded fuzzer of vtrace_guest's control port: valid, mutated, reordered, truncated messages and noise.
"""
Usage: guest_ctl_fuzz.py SOCKET OUTFILE SECONDS [SEED]

Connects to QEMU's server socket for vtrace.ctl and, for SECONDS, sends
rounds of inputs chosen at random:
  valid      a well-formed command (HELLO, STATUS_REQ, SET_EVENTS from a list
             of good and bad specifications, SET_BUFFER_SIZE 1..8192 KiB,
             START, STOP), with a growing seq
  mutated    a valid command with bytes flipped, set or inserted, the
             length, type, flags, version or seq field changed, cut short
             or extended
  reordered  a burst of valid commands with their seqs shuffled, or one
             message split in pieces sent with pauses
  noise      random bytes (sometimes with the magic inside)
Every 5 s a health check: after a pause longer than the guest's
truncated-message timeout, HELLO (seq 1) and STATUS_REQ must get HELLO,
STATUS and ACK within 20 s.  Everything received is appended to OUTFILE.
At the end: STOP, then SET_BUFFER_SIZE 9000 KiB (a size the fuzzer never
asks for: the guest script's signal that the fuzzing is over).  Prints statistics and "ok N name" lines; exit status 1 on failure.
"""
import random
import struct
import sys
import time

from ctl_client import (ACK, EOS, ERROR, HDR, HELLO, MAGIC, SET_BUFFER_SIZE, SET_EVENTS, START,
                        STARTED, STATUS, STATUS_REQ, STOP, Guest)

# the end signal: a buffer size the fuzzer never asks for (valid sizes are
# 1..8192 KiB; set_event is no signal: ":" or "sched:" enable every event)
DONE_KB = 9000
CLOSE_SEQ = 1 << 40
# (no ":" or "sched:": enabling every event patched thousands of call sites
# and stalled the nested test bed's guest for a minute, Documentation/fuzzing.rst)
SPECS = [b"sched:sched_switch", b"sched:sched_switch sched:sched_wakeup", b"irq:*",
         b"", b"!sched:*", b"nosuch:event", b"nosuch:", b"timer:hrtimer_start\n",
         b"sched:sched_wakeup\nirq:irq_handler_entry", b"x" * 300]


def msg(typ, payload=b"", seq=0, flags=0, version=1):
    return HDR.pack(MAGIC, version, typ, flags, len(payload), seq) + payload


class Fuzzer:
    def __init__(self, g, rnd):
        self.g, self.r, self.seq = g, rnd, 1
        self.sent = {"valid": 0, "mutated": 0, "reordered": 0, "noise": 0}
        self.bytes = 0

    def next_seq(self):
        self.seq += 1
        return self.seq

    def valid(self):
        r = self.r
        typ = r.choice([HELLO, STATUS_REQ, STATUS_REQ, SET_EVENTS, SET_EVENTS, SET_BUFFER_SIZE,
                        START, STOP])
        seq = self.next_seq()
        if typ == HELLO:
            self.seq = seq = 1
            return msg(HELLO, struct.pack("<HHIQ", 1, r.choice([1, 1, 2, 9]), 0, 0), seq)
        if typ == SET_EVENTS:
            return msg(SET_EVENTS, r.choice(SPECS), seq)
        if typ == SET_BUFFER_SIZE:
            return msg(SET_BUFFER_SIZE, struct.pack("<II", r.randint(1, 8192), 0), seq)
        return msg(typ, b"", seq)

    def mutate(self, m):
        r, b = self.r, bytearray(m)
        for _ in range(r.randint(1, 4)):
            op = r.randrange(9)
            if op == 0 and b:
                i = r.randrange(len(b))
                b[i] ^= 1 << r.randrange(8)
            elif op == 1 and b:
                b[r.randrange(len(b))] = r.randrange(256)
            elif op == 2:
                i = r.randint(0, len(b))
                b[i:i] = bytes(r.randrange(256) for _ in range(r.randint(1, 16)))
            elif op == 3 and len(b) >= 16:
                struct.pack_into("<I", b, 12, r.choice([0, 1, 7, 24, 4096, 65535, 65536,
                                                        65537, r.getrandbits(32)]))
            elif op == 4 and len(b) >= 8:
                struct.pack_into("<H", b, 6, r.choice([0, 2, 3, 33, 36, 99, r.getrandbits(16)]))
            elif op == 5 and len(b) >= 12:
                struct.pack_into("<I", b, 8, 1 << r.randrange(32))
            elif op == 6 and len(b) >= 6:
                struct.pack_into("<H", b, 4, r.choice([0, 2, 0xffff]))
            elif op == 7 and len(b) >= 24:
                struct.pack_into("<Q", b, 16, r.choice([0, 1, self.seq - 1, 1 << 63,
                                                        r.getrandbits(64)]))
            elif op == 8:
                b = b[:r.randint(0, len(b))] if r.random() < 0.5 else b + b[:r.randint(0, 64)]
        return bytes(b)

    def noise(self):
        r = self.r
        data = bytearray(r.getrandbits(8) for _ in range(r.choice([1, 8, 24, 100, 1000, 4096])))
        if r.random() < 0.5 and len(data) >= 4:
            i = r.randrange(len(data) - 3)
            struct.pack_into("<I", data, i, MAGIC)
        return bytes(data)

    def reordered(self):
        r = self.r
        if r.random() < 0.5:
            ms = [self.valid() for _ in range(r.randint(2, 6))]
            r.shuffle(ms)
            self.send(b"".join(ms), "reordered")
            return
        m = self.valid()
        cuts = sorted(r.sample(range(1, max(2, len(m))), min(3, max(1, len(m) - 1))))
        prev = 0
        for c in cuts + [len(m)]:
            self.send(m[prev:c], "reordered")
            prev = c
            time.sleep(r.choice([0, 0.01, 0.05, 0.3]))

    def send(self, data, kind):
        self.g.send(data)
        self.sent[kind] += 1
        self.bytes += len(data)

    def round(self):
        k = self.r.random()
        if k < 0.3:
            self.send(self.valid(), "valid")
        elif k < 0.7:
            self.send(self.mutate(self.valid()), "mutated")
        elif k < 0.85:
            self.reordered()
        else:
            self.send(self.noise(), "noise")


def health(g):
    """HELLO and STATUS_REQ are answered.  A message still being received
    when the guest was busy can swallow the first try as its payload (the
    guest's truncation timeout runs from the last byte it saw): up to three
    tries, each after a pause longer than that timeout."""
    for _ in range(3):
        time.sleep(1.5)
        g.drain()
        g.msgs.clear()
        g.send(msg(HELLO, struct.pack("<HHIQ", 1, 1, 0, 0), 1) + msg(STATUS_REQ, b"", 2))
        h = g.wait_for(lambda t, q, p: t == HELLO, 10)
        st = g.wait_for(lambda t, q, p: t == STATUS, 10)
        ack = g.wait_for(lambda t, q, p: t == ACK and struct.unpack_from("<Q", p)[0] == 2, 10)
        if h is not None and st is not None and ack is not None:
            return True
    return False


def error_of(payload):
    seq, etype, _, err = struct.unpack_from("<QHHi", payload)
    return err


def command(g, typ, payload, seq):
    """After a health check: one command, its ACK or ERROR (seq and type must match)."""
    g.send(msg(typ, payload, seq))
    return g.wait_for(lambda t, q, p: t in (ACK, ERROR) and
                      struct.unpack_from("<QH", p) == (seq, typ), 60)


def main():
    sock, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else int(time.time())
    g = Guest(sock, out)
    f = Fuzzer(g, random.Random(seed))
    print("# seed %d, %d s" % (seed, seconds))
    n, fails, checks = 0, 0, 0
    start = last = time.time()
    while time.time() - start < seconds:
        f.round()
        if f.r.random() < 0.2:
            g.drain()
        if time.time() - last >= 5:
            checks += 1
            if not health(g):
                fails += 1
                print("# health check %d failed after %.0f s" % (checks, time.time() - start))
            f.seq = 2
            last = time.time()
    ok = health(g)
    checks += 1
    fails += not ok
    # a session a fuzzed START left running refuses SET_EVENTS (EBUSY): stop
    # it; a fuzzed START still in the guest's queue can start one more
    # (seqs far above the fuzzed ones: a stale fuzzed command still queued
    # in the guest is then refused as out of order instead of running)
    for attempt in range(3):
        command(g, STOP, b"", CLOSE_SEQ + 2 * attempt)
        done = command(g, SET_BUFFER_SIZE, struct.pack("<II", DONE_KB, 0),
                       CLOSE_SEQ + 2 * attempt + 1)
        if done and done[0] == ACK:
            break
        print("# closing SET_BUFFER_SIZE refused (%s), again" %
              (error_of(done[2]) if done else "no reply"))
        health(g)
    rx = g.received
    print("# sent %s, %d bytes in %.0f s; received HELLO %d, ACK %d, ERROR %d, STATUS %d, "
          "STARTED %d, EOS %d" % (" ".join("%s %d" % kv for kv in f.sent.items()), f.bytes,
                                  time.time() - start, rx.get(HELLO, 0), rx.get(ACK, 0),
                                  rx.get(ERROR, 0), rx.get(STATUS, 0), rx.get(STARTED, 0),
                                  rx.get(EOS, 0)))
    print("# %d health checks, %d failed" % (checks, fails))
    n += 1
    print("%sok %d ctl_fuzz_health_checks_answered" % ("not " if fails else "", n))
    n += 1
    print("%sok %d ctl_fuzz_errors_replied" % ("" if rx.get(ERROR, 0) > 0 else "not ", n))
    n += 1
    print("%sok %d ctl_fuzz_done_acknowledged" % ("" if done and done[0] == ACK else "not ", n))
    return 1 if fails or not rx.get(ERROR, 0) or not (done and done[0] == ACK) else 0


if __name__ == "__main__":
    sys.exit(main())
