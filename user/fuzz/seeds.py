#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# seeds.py: seed corpora for the fuzz targets, cut from real captures.
#
#   fuzz/seeds.py OUT CAPTURE_DIR... [--offsets FILE...] [--merge CAPTURE_DIR=FILE...]
#
# For each capture (a dump folder with ctl and cpu0) it writes, under OUT:
#   proto/NAME.ctl       the control stream with kallsyms, cmdlines and
#                        printk_formats cut to a few lines (headers fixed up)
#   proto/NAME.msgK      single messages of it (META_INFO, EOS, STARTED, ...)
#   dump/NAME            fuzz-dump's layout: u32 ctl length, ctl, the first
#                        two and the last page of cpu0
#   meta/NAME.KIND...    fuzz-meta's layout: one META_FILE body per seed, and
#                        one seed with all of them
#   offsets/NAME         the offsets files given (cut to 40 records)
#   merge/NAME.0, .3ff   fuzz-merge's layout: u32 flags (0, or 0x3ff: all but
#                        bit 10), u32 lengths of ctl, tsc_offsets
#                        and cpu0, then ctl, tsc_offsets (FILE, cut to 40
#                        records, the capture's QEMU pid made 131), cpu0 and
#                        cpu1 as for dump/NAME
# Every file stays under 64 KiB (the targets' -max_len).
import os
import struct
import sys

HDR = struct.Struct('<IHHIIQ')
MF = struct.Struct('<IIQQ')
META_FILE, META_INFO = 34, 33
SEP = b'\n\x01vtrace-meta\x01\n'
CUT = {5: 8, 6: 12, 7: 12}	# kind: lines kept (cmdlines, kallsyms, printk_formats)
MAX = 65536


def messages(ctl):
    off = 0
    while off + HDR.size <= len(ctl):
        magic, ver, typ, flags, length, seq = HDR.unpack_from(ctl, off)
        yield typ, ver, seq, ctl[off + HDR.size:off + HDR.size + length]
        off += HDR.size + length


def cut(typ, payload):
    """A META_FILE with its text cut to a few lines; other messages as they are."""
    if typ != META_FILE:
        return payload
    kind, name_len, data_len, res = MF.unpack_from(payload)
    name = payload[MF.size:MF.size + name_len]
    data = payload[MF.size + name_len:]
    if kind in CUT:
        data = b''.join(data.splitlines(True)[:CUT[kind]])
    return MF.pack(kind, name_len, len(data), res) + name + data


def write(path, data):
    if len(data) > MAX:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)


def pages(d, cpu):
    """The first two and the last page of DIR/cpuK"""
    path = os.path.join(d, f'cpu{cpu}')
    data = open(path, 'rb').read() if os.path.exists(path) else b''
    return data[:8192] + (data[-4096:] if len(data) > 12288 else b'')


def small_ctl(d):
    """DIR/ctl with its long META_FILEs cut: the stream, its messages, its META_FILE bodies"""
    ctl = open(os.path.join(d, 'ctl'), 'rb').read()
    msgs, files = [], []
    for typ, ver, seq, payload in messages(ctl):
        payload = cut(typ, payload)
        msgs.append(HDR.pack(0x43525456, ver, typ, 0, len(payload), seq) + payload)
        if typ == META_FILE:
            kind, name_len = MF.unpack_from(payload)[:2]
            fname = payload[MF.size:MF.size + name_len].rstrip(b'\0')
            files.append(bytes([kind]) + fname + b'\0' + payload[MF.size + name_len:])
    return b''.join(msgs), msgs, files


def capture(out, d):
    name = os.path.basename(os.path.normpath(d))
    small, msgs, files = small_ctl(d)
    write(f'{out}/proto/{name}.ctl', small)
    seen = set()
    for k, m in enumerate(msgs):
        typ = HDR.unpack_from(m)[2]
        if typ not in seen or typ == META_FILE and len(seen) < 40:
            seen.add(typ)
            write(f'{out}/proto/{name}.msg{k}', m)
    write(f'{out}/dump/{name}', struct.pack('<I', len(small)) + small + pages(d, 0))
    for k, f in enumerate(files):
        write(f'{out}/meta/{name}.{k}', f)
    write(f'{out}/meta/{name}.all', SEP.join(files))


def cut_offsets(path):
    return b''.join(open(path, 'rb').read().splitlines(True)[:41])


def offsets(out, path):
    name = os.path.basename(os.path.dirname(os.path.abspath(path)))
    write(f'{out}/offsets/{name}', cut_offsets(path))


def as_pid_131(d, offs):
    """fuzz-merge's guest is pid=131: the capture's QEMU pid in the records becomes 131"""
    path = os.path.join(d, 'qemu.pid')
    pid = open(path, 'rb').read().strip() if os.path.exists(path) else b'131'
    lines = offs.splitlines(True)
    for k, line in enumerate(lines):
        f = line.split(b' ')
        if not line.startswith(b'#') and len(f) > 2 and f[2] == pid:
            f[2] = b'131'
            lines[k] = b' '.join(f)
    return b''.join(lines)


def merge(out, spec):
    """CAPTURE_DIR=OFFSETS_FILE: the guest and the offsets of its host"""
    d, path = spec.split('=', 1)
    name = os.path.basename(os.path.normpath(d))
    small, offs = small_ctl(d)[0], as_pid_131(d, cut_offsets(path))
    cpu0 = pages(d, 0)
    for flags in (0, 0x3ff):
        write(f'{out}/merge/{name}.{flags:x}',
              struct.pack('<IIII', flags, len(small), len(offs), len(cpu0)) +
              small + offs + cpu0 + pages(d, 1))


def main():
    args = sys.argv[1:]
    if len(args) < 1:
        sys.exit(__doc__ or 'usage: seeds.py OUT CAPTURE_DIR... [--offsets FILE...]')
    out, mode = args.pop(0), 'capture'
    for a in args:
        if a in ('--offsets', '--merge'):
            mode = a[2:]
        elif mode == 'capture':
            capture(out, a)
        elif mode == 'offsets':
            offsets(out, a)
        else:
            merge(out, a)


main()
