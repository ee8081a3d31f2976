#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""dat-edit.py: edit what a trace-cmd v7 trace.dat says about its time stamps.

    dat-edit.py clock FILE            print the trace clock of the top buffer
    dat-edit.py clock FILE CLOCK      rewrite it (in place)
    dat-edit.py offset FILE N         add an OFFSET option of N ns (libtracecmd adds N to
                                      every time stamp it returns, unless asked for raw ones)
    dat-edit.py cpustat FILE CPU:ENTRIES:OVERRUN:DROPPED[:READ] ...
                                      add trace-cmd record's statistics of each CPU at its
                                      stop (CPUSTAT options, trace-cmd report --stat); READ:
                                      its "read events" (default 0)
    dat-edit.py instance FILE NAME    a BUFFER option of an instance NAME with no CPU data
                                      (trace-cmd record -B NAME)
    dat-edit.py subbuf FILE BYTES     the top instance's BUFFER option says sub-buffers of
                                      BYTES (trace-cmd 3.2+ record --subbuf-size)
    dat-edit.py v6clock FILE CLOCK [2.x]
                                      a v6 file (trace-cmd convert --file-version 6 writes
                                      none) gets a trace clock as trace-cmd record writes it:
                                      a TRACECLOCK option and the trace_clock text after the
                                      CPU data table (in its padding: no page moves; convert
                                      writes a clock there, but no option says so).  The
                                      option holds the text (record 3.x); with "2.x" it is
                                      empty, as trace-cmd 2.8/2.9 record wrote it (3.1's
                                      reader then parses bytes past the option: its
                                      --raw-ts output may vary from run to run)
    dat-edit.py chunks FILE CPU       print where each compressed chunk of CPU's data is:
                                      "OFFSET COMPRESSED UNCOMPRESSED" a line (the chunk's
                                      8-byte header at OFFSET), in a compressed file

trace-cmd restore (3.1) writes "local" whatever the tracing folder's
trace_clock says; the unit tests and fixtures/real-l2/host.dat hold pages
recorded with x86-tsc and say so with this.  Only the BUFFER option of the
last options section is rewritten (restore's layout): the file grows or
shrinks at its end, no offset before it moves.
"""
import struct
import sys

MAGIC = b'\x17\x08Dtracing'


def cstr(b, at):
    end = b.index(b'\0', at)
    return b[at:end].decode(), end + 1


def sections(b):
    """(section offset, data offset, size) of every options section, in chain order"""
    if not b.startswith(MAGIC):
        sys.exit('%s: not a trace.dat' % sys.argv[1])
    ver, at = cstr(b, len(MAGIC))
    if ver != '7':
        sys.exit('%s: file version %s, only 7 is handled' % (sys.argv[1], ver))
    at += 2 + 4                         # endian, long size, page size
    _, at = cstr(b, at)                 # compression name
    _, at = cstr(b, at)                 # its version
    nxt = struct.unpack_from('<Q', b, at)[0]
    while nxt:
        sid, _, _, size = struct.unpack_from('<HHIQ', b, nxt)
        if sid != 0:
            sys.exit('%s: section at %d is not an options section' % (sys.argv[1], nxt))
        yield nxt, nxt + 16, size
        opt, nxt = nxt + 16, 0
        while True:
            oid, osize = struct.unpack_from('<HI', b, opt)
            if oid == 0:
                nxt = struct.unpack_from('<Q', b, opt + 6)[0]
                break
            opt += 6 + osize


def top_buffer(b):
    """(section, its data offset, option offset, clock offset, clock) of the "" BUFFER"""
    for sec, data, size in sections(b):
        opt = data
        while opt < data + size:
            oid, osize = struct.unpack_from('<HI', b, opt)
            if oid == 0:
                break
            if oid == 3:
                name, at = cstr(b, opt + 6 + 8)
                clock, _ = cstr(b, at)
                if name == '':
                    return sec, data, opt, at, clock
            opt += 6 + osize
    sys.exit('%s: no BUFFER option of the top instance' % sys.argv[1])


def add_option(path, b, oid, text):
    """an option before the DONE of the last section"""
    sec, data, size = list(sections(b))[-1]
    if data + size != len(b):
        sys.exit('%s: the last options section does not end the file' % path)
    opt = data
    while struct.unpack_from('<H', b, opt)[0] != 0:
        opt += 6 + struct.unpack_from('<I', b, opt + 2)[0]
    b[opt:opt] = struct.pack('<HI', oid, len(text)) + text
    struct.pack_into('<Q', b, sec + 8, size + 6 + len(text))


def add_offset(path, b, n):
    """a TRACECMD_OPTION_OFFSET (7): ASCII, as trace-cmd writes it"""
    add_option(path, b, 7, b'%d\0' % n)
    open(path, 'wb').write(b)


def add_cpustats(path, b, specs):
    """a TRACECMD_OPTION_CPUSTAT (2) per CPU: its per_cpu/cpuN/stats text, as trace-cmd record adds it"""
    for spec in specs:
        cpu, entries, overrun, dropped, read = (int(x) for x in (spec + ':0').split(':')[:5])
        text = ('\nCPU: %d\nentries: %d\noverrun: %d\ncommit overrun: 0\nbytes: 0\n'
                'oldest event ts: 0\nnow ts: 0\ndropped events: %d\nread events: %d\n'
                % (cpu, entries, overrun, dropped, read)).encode() + b'\0'
        add_option(path, b, 2, text)
    open(path, 'wb').write(b)


def set_clock(path, b, clock_arg):
    sec, data, opt, at, clock = top_buffer(b)
    if clock_arg is None:
        print(clock)
        return
    size = struct.unpack_from('<Q', b, sec + 8)[0]
    if data + size != len(b):
        sys.exit('%s: the BUFFER option is not in the last section' % path)
    new = clock_arg.encode()
    grow = len(new) - len(clock)
    b[at:at + len(clock)] = new
    osize = struct.unpack_from('<I', b, opt + 2)[0]
    struct.pack_into('<I', b, opt + 2, osize + grow)
    struct.pack_into('<Q', b, sec + 8, size + grow)
    open(path, 'wb').write(b)


def v6_clock(path, b, clock, old):
    if not b.startswith(MAGIC) or cstr(b, len(MAGIC))[0] != '6':
        sys.exit('%s: not a v6 trace.dat' % path)
    opts = b.index(b'options  \0')
    ncpu = struct.unpack_from('<I', b, opts - 4)[0]
    opt = opts + 10
    while struct.unpack_from('<H', b, opt)[0] != 0:
        opt += 6 + struct.unpack_from('<I', b, opt + 2)[0]
    if b[opt + 2:opt + 12] != b'flyrecord\0':
        sys.exit('%s: expected "flyrecord" after the options' % path)
    table = opt + 12
    end = table + 16 * ncpu
    first = min(o for o, n in (struct.unpack_from('<QQ', b, table + 16 * i)
                               for i in range(ncpu)) if n)
    text = ('local global counter uptime perf mono mono_raw boot [%s]\n' % clock).encode()
    # TRACECLOCK: the text, NUL-ended (3.x), or nothing (2.x); the text after the table too
    option = struct.pack('<HI', 4, 0) if old else \
        struct.pack('<HI', 4, len(text) + 1) + text + b'\0'
    data = struct.pack('<Q', len(text)) + text
    room = first - end - len(option)   # what was there (convert writes a clock no option names)
    if room < len(data):
        sys.exit('%s: no room for the trace clock before the first page' % path)
    b[end:first] = data + bytes(room - len(data))
    b[opt:opt] = option
    open(path, 'wb').write(b)


def chunks(b, cpu):
    _, _, _, at, clock = top_buffer(b)
    at += len(clock) + 1 + 4            # the page size
    n = struct.unpack_from('<I', b, at)[0]
    for i in range(n):
        c, off, _ = struct.unpack_from('<IQQ', b, at + 4 + 20 * i)
        if c == cpu:
            count = struct.unpack_from('<I', b, off)[0]
            off += 4
            for _ in range(count):
                zsize, usize = struct.unpack_from('<II', b, off)
                print(off, zsize, usize)
                off += 8 + zsize
            return
    sys.exit('%s: no CPU %d' % (sys.argv[1], cpu))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('clock', 'offset', 'v6clock', 'cpustat',
                                                'instance', 'subbuf', 'chunks'):
        sys.exit(__doc__)
    cmd, path = sys.argv[1:3]
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    b = bytearray(open(path, 'rb').read())
    if cmd == 'offset':
        add_offset(path, b, int(arg))
    elif cmd == 'cpustat':
        add_cpustats(path, b, sys.argv[3:])
    elif cmd == 'v6clock':
        if sys.argv[4:] not in ([], ['2.x']):
            sys.exit(__doc__)
        v6_clock(path, b, arg, sys.argv[4:] == ['2.x'])
    elif cmd == 'instance':
        add_option(path, b, 3, struct.pack('<Q', 0) + arg.encode() + b'\0x86-tsc\0' +
                   struct.pack('<II', 4096, 0))
        open(path, 'wb').write(b)
    elif cmd == 'chunks':
        chunks(b, int(arg))
    elif cmd == 'subbuf':
        sec, data, opt, at, clock = top_buffer(b)
        struct.pack_into('<I', b, at + len(clock) + 1, int(arg))
        open(path, 'wb').write(b)
    else:
        set_clock(path, b, arg)


main()
