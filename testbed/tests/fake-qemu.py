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
  hang-busy   the same, its "CPU 0/KVM" thread spins
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
import sys
import threading
import time

args = sys.argv[1:]
pidfile = args[args.index("-pidfile") + 1]
serials = [args[i + 1][5:] for i, a in enumerate(args[:-1]) if a == "-serial"]
console = open(serials[0], "a", buffering=1)
heart = open(serials[1], "a", buffering=1) if len(serials) > 1 else None

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
if mode.startswith("hang-"):
    threading.Thread(target=vcpu, args=(mode == "hang-busy",), daemon=True).start()
    time.sleep(3600)
secs = float(os.environ.get("FAKE_QEMU_SECS", "8")) if mode == "slow" else 2
end = time.monotonic() + secs
while time.monotonic() < end:
    time.sleep(0.5)
    beat()
console.write("vtrace-testbed: L2 script exit 0\n")
sys.exit(0)
