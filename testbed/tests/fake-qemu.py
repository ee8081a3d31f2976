#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for an L2 QEMU, for testbed/tests/test-bed.sh: it plays one
failure of the nested bed per start, so that the watchdogs can be tested
without a VM.

Reads -pidfile P and the -serial file:X options (the first is the console,
the second the heartbeat port).  FAKE_QEMU_PLAN is a comma-separated list,
one behaviour per start (counted in P's folder, .fake-starts):
  ok          boot, "L2 up", heartbeats, "L2 script exit 0", exit 0
  silent      write the pid file, print nothing, wait
  reset-boot  print kernel lines, exit 0 before "L2 up"
  panic-boot  print a kernel panic, exit 0 before "L2 up"
  reset-up    "L2 up", one heartbeat, exit 0 without "L2 script exit"
  hang-idle   "L2 up", one heartbeat, then nothing; its "CPU 0/KVM" thread sleeps
  hang-busy   the same, its "CPU 0/KVM" thread spins; its heartbeat has the
              layout lines of testbed/init-l2.sh, and on -monitor unix:PATH
              it answers "info registers -a", "cpu N" and "x /Ngx ADDR" as
              a guest spinning in __pv_queued_spin_lock_slowpath+0x7e
              (text at FAKE_TEXT), stacks from FAKE_STACK (words, comma-
              separated hex)
  slow        "L2 up", heartbeats for FAKE_QEMU_SECS (default 8) s, exit 0
  silent-busy its "CPU 0/KVM" thread spins, nothing printed for FAKE_QEMU_SECS
              (default 5) s, then as ok
  lockup-boot an RCU stall and soft lockups in the boot (the lost wake-ups'),
              one line a second, never "L2 up"
  oops-boot   the same with an Oops whose stack names vtrace_guest
"""
import ctypes
import os
import signal
import socket
import sys
import threading
import time

args = sys.argv[1:]
pidfile = args[args.index("-pidfile") + 1]
serials = [args[i + 1][5:] for i, a in enumerate(args[:-1]) if a == "-serial"]
console = open(serials[0], "a", buffering=1)
heart = open(serials[1], "a", buffering=1) if len(serials) > 1 else None
monitors = [a[5:].split(",")[0] for a in args if a.startswith("unix:")]

counter = os.path.join(os.path.dirname(pidfile), ".fake-starts")
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
plan = os.environ.get("FAKE_QEMU_PLAN", "ok").split(",")
mode = plan[min(n, len(plan) - 1)]


def term(sig, frame):
    print(f"qemu-system-x86_64: terminating on signal {sig} from pid 1",
          file=sys.stderr, flush=True)
    os._exit(0)


signal.signal(signal.SIGTERM, term)
open(pidfile, "w").write(f"{os.getpid()}\n")


def vcpu(busy):
    libc = ctypes.CDLL(None)
    libc.prctl(15, b"CPU 0/KVM", 0, 0, 0)  # PR_SET_NAME: this thread
    while True:
        if not busy:
            time.sleep(1)


def beat():
    if heart:
        heart.write(f"{time.monotonic():.2f}\n")


if mode == "silent":
    time.sleep(3600)
if mode == "silent-busy":
    threading.Thread(target=vcpu, args=(True,), daemon=True).start()
    time.sleep(float(os.environ.get("FAKE_QEMU_SECS", "5")))
console.write("[    0.000000] Linux version 6.1.0-fake\n")
if mode == "reset-boot":
    sys.exit(0)
if mode in ("lockup-boot", "oops-boot"):
    if mode == "lockup-boot":
        console.write("[    5.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n")
        console.write("[    5.100000] rcu: rcu_preempt kthread timer wakeup didn't happen for 5271 jiffies!\n")
    else:
        console.write("[    5.000000] Oops: general protection fault, probably for non-canonical address\n")
        console.write("[    5.100000]  vtg_drain+0x55/0x80 [vtrace_guest]\n")
    for i in range(3600):
        time.sleep(1)
        console.write(f"[ {30 + i:5d}.000000] watchdog: BUG: soft lockup - CPU#1 stuck for {26 + i}s! [swapper/0:1]\n")
if mode == "panic-boot":
    console.write("[    1.000000] Kernel panic - not syncing: fake\n")
    sys.exit(0)
console.write("vtrace-testbed: L2 up, running /tests/fake.sh\n")
beat()
if mode == "reset-up":
    sys.exit(0)
def monitor(path):
    """a human monitor with two spinning vCPUs"""
    text = int(os.environ.get("FAKE_TEXT", "ffffffffa8400000"), 16)
    stack = [int(w, 16) for w in os.environ.get("FAKE_STACK", "1").split(",")]
    rip = text + 0x5a45e
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    while True:
        c, _ = srv.accept()
        f = c.makefile("rw", buffering=1, newline="")
        f.write("QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) ")
        for line in f:
            line = line.strip()
            f.write(line + "\x1b[K\r\n")
            if line == "info registers -a":
                for n in range(2):
                    f.write("\r\nCPU#%d\r\nRAX=0000000000000001 RBX=ffff888003c1e000\r\n"
                            "RSI=0000000000000001 RDI=ffff888003c1e000 RBP=ffffc90000083e60 "
                            "RSP=ffffc900000%d3e00\r\nRIP=%016x RFL=00000002 [-------] "
                            "CPL=0 II=0 A20=1 SMM=0 HLT=0\r\n" % (n, n, rip))
            elif line.startswith("x /"):
                addr = int(line.split()[-1], 16)
                for i in range(0, len(stack), 2):
                    f.write("%016x: %s\r\n" % (addr + 8 * i, " ".join(
                        "0x%016x" % w for w in stack[i:i + 2])))
            f.write("(qemu) ")
        c.close()


if mode.startswith("hang-"):
    if mode == "hang-busy" and heart:
        heart.write("kernel %s\ntext %s\nmodule vtrace_guest ffffffffc0a00000 65536\n" % (
            os.uname().release, os.environ.get("FAKE_TEXT", "ffffffffa8400000")))
    if mode == "hang-busy" and monitors:
        threading.Thread(target=monitor, args=(monitors[0],), daemon=True).start()
    threading.Thread(target=vcpu, args=(mode == "hang-busy",), daemon=True).start()
    time.sleep(3600)
secs = float(os.environ.get("FAKE_QEMU_SECS", "8")) if mode == "slow" else 2
end = time.monotonic() + secs
while time.monotonic() < end:
    time.sleep(0.5)
    beat()
console.write("vtrace-testbed: L2 script exit 0\n")
sys.exit(0)
