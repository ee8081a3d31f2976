#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Check the first session's metadata in a guest's ctl file: APIC ids of META_INFO, kallsyms addresses.
"""
Usage: guest_meta_check.py CTL --apic-ids 0,1 --kallsyms-zero --no-printk-formats

--apic-ids: the first META_INFO's per-CPU APIC ids, in CPU order.
--kallsyms-zero: the first kallsyms META_FILE has at least 1000 lines and
every address in it is 0 (the guest's kptr_restrict hid them).
--no-printk-formats: the first session's metadata (up to its kallsyms) has
no printk_formats file (the guest hides kernel addresses).
Prints "ok: ..." / "FAIL: ..."; exit status 1 on any failure.
"""
import argparse
import struct
import sys

from guest_check import META_FILE, parse_ctl

META_INFO_SIZE = 240
CPU_INFO = struct.Struct("<IIII")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ctl")
    ap.add_argument("--apic-ids")
    ap.add_argument("--kallsyms-zero", action="store_true")
    ap.add_argument("--no-printk-formats", action="store_true")
    a = ap.parse_args()
    msgs, _ = parse_ctl(open(a.ctl, "rb").read())
    fails = 0
    if a.apic_ids is not None:
        info = next((p for t, _, p in msgs if t == 33), None)
        if info is None:
            print("FAIL: no META_INFO")
            return 1
        nr = struct.unpack_from("<I", info, 24)[0]
        cpus = [CPU_INFO.unpack_from(info, META_INFO_SIZE + i * CPU_INFO.size) for i in range(nr)]
        got = [c[1] for c in cpus]
        want = [int(x) for x in a.apic_ids.split(",")]
        print("# META_INFO: " + ", ".join("cpu%d apic %d flags %#x" % (c[0], c[1], c[2])
                                         for c in cpus))
        if got != want:
            fails += 1
            print("FAIL: APIC ids %s, expected %s" % (got, want))
        else:
            print("ok: APIC ids %s" % got)
    if a.no_printk_formats:
        names = []
        for t, _, p in msgs:
            if t != 34:
                continue
            _, name_len, _, _ = META_FILE.unpack_from(p, 0)
            names.append(p[META_FILE.size:META_FILE.size + name_len].rstrip(b"\0").decode())
            if names[-1] == "kallsyms":
                break
        print("# first session's files: %s" % " ".join(names))
        if "kallsyms" not in names or "printk_formats" in names:
            fails += 1
            print("FAIL: printk_formats sent, or no kallsyms")
        else:
            print("ok: no printk_formats")
    if a.kallsyms_zero:
        data = None
        for t, _, p in msgs:
            if t != 34:
                continue
            _, name_len, data_len, _ = META_FILE.unpack_from(p, 0)
            if p[META_FILE.size:META_FILE.size + name_len].rstrip(b"\0") == b"kallsyms":
                data = p[META_FILE.size + name_len:META_FILE.size + name_len + data_len]
                break
        if data is None:
            print("FAIL: no kallsyms META_FILE")
            return 1
        lines = data.split(b"\n")[:-1]
        nonzero = [ln for ln in lines if int(ln.split(b" ", 1)[0], 16) != 0]
        print("# kallsyms: %d lines, %d bytes, %d with a non-zero address" %
              (len(lines), len(data), len(nonzero)))
        if len(lines) < 1000 or nonzero:
            fails += 1
            print("FAIL: kallsyms addresses not hidden (first: %s)" %
                  (nonzero[0][:60] if nonzero else b"too few lines"))
        else:
            print("ok: kallsyms: every address 0")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
