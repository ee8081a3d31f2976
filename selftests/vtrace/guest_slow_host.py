#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# A host that reads vtrace.ctl slowly: it sets buffer_size_kb (the guest's cue), then reads RATE bytes a second.
"""
Usage: guest_slow_host.py SOCKET OUTFILE SECONDS [--rate B] [--cue KB] [--until FILE TEXT]

Connects to QEMU's socket of the guest's vtrace.ctl, says HELLO, sends
SET_BUFFER_SIZE KB (default 1536: the guest script waits for that value),
reads until its ACK, then reads slowly for SECONDS, or until FILE (the
guest's console log) contains TEXT, and closes.  --rate 32768 (the
default) reads 1 KiB every 31 ms: one 32 KiB chunk of the guest's a
second, just inside port_timeout_ms, so only a deadline for the whole
message ends a start; --rate 1 reads one byte a second.  Prints what it
got; exit status 1 if the guest did not answer the HELLO and
SET_BUFFER_SIZE.
"""
import argparse
import socket
import struct
import time

from ctl_client import ACK, ERROR, HELLO, SET_BUFFER_SIZE, Guest


def set_buffer_size(g, kb):
    """SET_BUFFER_SIZE kb until ACKed; an ERROR -EAGAIN (rate limit): again a second later."""
    for _ in range(20):
        m, s = g.msg(SET_BUFFER_SIZE, struct.pack("<II", kb, 0))
        g.send(m)
        ack = g.wait_for(lambda t, q, p: t in (ACK, ERROR) and
                         struct.unpack_from("<Q", p)[0] == s, 20)
        if ack is None or ack[0] == ACK:
            return ack
        time.sleep(1)
    return None


def seen(until):
    """The guest's console log holds the text (the guest's part is over)."""
    if not until:
        return False
    try:
        with open(until[0], "rb") as f:
            return until[1].encode() in f.read()
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("out")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--rate", type=int, default=32768)
    ap.add_argument("--cue", type=int, default=1536)
    ap.add_argument("--until", nargs=2)
    a = ap.parse_args()
    g = Guest(a.socket, a.out)
    m, _ = g.msg(HELLO, struct.pack("<HHIQ", 1, 1, 0, 0))
    g.send(m)
    hello = g.wait_for(lambda t, q, p: t == HELLO, 20)
    ack = set_buffer_size(g, a.cue)
    print("# slow host: HELLO %s, SET_BUFFER_SIZE %d ACK %s" % (hello is not None, a.cue,
                                                               ack is not None))
    size, pause = (1024, 0.031) if a.rate >= 1024 else (1, 1.0 / a.rate)
    n, start = 0, time.time()
    g.s.settimeout(0.01)
    while time.time() < start + a.seconds and not seen(a.until):
        try:
            d = g.s.recv(size)
            if not d:
                break
            g.out.write(d)
            n += len(d)
        except socket.timeout:
            pass
        time.sleep(pause)
    print("# slow host: read %d bytes in %.0f s at most %d bytes a second" %
          (n, time.time() - start, a.rate))
    g.s.close()
    return 0 if hello is not None and ack is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
