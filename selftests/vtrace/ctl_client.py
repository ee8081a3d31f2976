# SPDX-License-Identifier: GPL-2.0
# A host-side client of vtrace_guest's control port (QEMU's socket for vtrace.ctl), for the fuzzers.
"""
The message header and type numbers of include/uapi/linux/vtrace.h, and
Guest: a connection to QEMU's server socket of the guest's vtrace.ctl port
that frames what it receives into (type, seq, payload) messages.
"""
import socket
import struct
import time

MAGIC = 0x43525456
HDR = struct.Struct("<IHHIIQ")
HELLO, ACK, ERROR = 1, 2, 3
START, STOP, SET_EVENTS, SET_BUFFER_SIZE, STATUS_REQ = 16, 17, 18, 19, 20
STATUS, STARTED, EOS = 32, 35, 36


class Guest:
    def __init__(self, path, out):
        """Connect to the socket at path; everything received is appended to the file out."""
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.out = open(out, "ab")
        self.buf = b""
        self.msgs = []
        self.received = {}
        self.seq = 0

    def msg(self, typ, payload=b"", flags=0, version=1, seq=None, length=None):
        """A message and its seq (the next one unless given); length overrides the header's."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        ln = len(payload) if length is None else length
        return HDR.pack(MAGIC, version, typ, flags, ln, seq) + payload, seq

    def send(self, data, timeout=60):
        # blocking (poll() leaves a short timeout): a busy guest reads late
        self.s.settimeout(timeout)
        self.s.sendall(data)

    def poll(self, timeout):
        """Receive for up to timeout seconds; whole messages go to self.msgs."""
        self.s.settimeout(timeout)
        try:
            d = self.s.recv(1 << 20)
        except socket.timeout:
            return
        self.out.write(d)
        self.buf += d
        while len(self.buf) >= HDR.size:
            magic, _, typ, _, ln, seq = HDR.unpack_from(self.buf)
            if magic != MAGIC:
                self.buf = self.buf[1:]
                continue
            if len(self.buf) < HDR.size + ln:
                break
            self.msgs.append((typ, seq, self.buf[HDR.size:HDR.size + ln]))
            self.received[typ] = self.received.get(typ, 0) + 1
            self.buf = self.buf[HDR.size + ln:]

    def drain(self):
        """Take what has arrived, keep only the last 64 messages."""
        self.poll(0.001)
        del self.msgs[:-64]

    def wait_for(self, match, timeout):
        """First received message for which match(type, seq, payload), removed."""
        end = time.time() + timeout
        while True:
            for i, m in enumerate(self.msgs):
                if match(*m):
                    return self.msgs.pop(i)
            if time.time() >= end:
                return None
            self.poll(min(0.2, max(0.01, end - time.time())))
