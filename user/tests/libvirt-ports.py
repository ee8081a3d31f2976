#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""libvirt-ports.py: the vtrace ports of a QEMU command line, one line each.

Reads a command line on stdin, shell-quoted (virsh domxml-to-native
qemu-argv) or, with --words, split at blanks (vtrace qemu-args), and prints, per virtserialport, sorted by port name:
  NAME BACKEND PATH [server=on,wait=off]
so that two command lines giving a guest the same ports print the same.
"""
import json
import shlex
import sys


def options(value):
    """QEMU's key=value,... option string (first bare word: 'type')."""
    out = {}
    for i, part in enumerate(value.split(',')):
        if '=' in part:
            k, v = part.split('=', 1)
            out[k] = v
        elif i == 0:
            out['type'] = part
    return out


def main():
    text = sys.stdin.read()
    words = text.split() if sys.argv[1:] == ['--words'] else shlex.split(text)
    chardevs, ports = {}, []
    for opt, value in zip(words, words[1:]):
        if opt == '-chardev':
            c = options(value)
            chardevs[c['id']] = c
        elif opt == '-device':
            d = json.loads(value) if value.startswith('{') else options(value)
            if d.get('driver', d.get('type')) == 'virtserialport':
                ports.append((d['name'], d['chardev']))
    for name, dev in sorted(ports):
        c = chardevs[dev]
        extra = ','.join('%s=%s' % (k, c[k]) for k in ('server', 'wait') if k in c)
        print(name, c['type'], c['path'], extra)


if __name__ == '__main__':
    main()
