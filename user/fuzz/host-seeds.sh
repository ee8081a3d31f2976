#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# host-seeds.sh: fuzz-host's seeds, host trace.dat files of every layout the tools read.
#
#   fuzz/host-seeds.sh OUT	(needs trace-cmd; run from anywhere)
#
# Writes OUT/NAME in fuzz-host's layout (u32 LE length of host.dat, host.dat,
# tsc_offsets; fuzz-host.c), every file under 64 KiB:
#   real-l2.*       the real L2 capture's host.dat (v7, trace-cmd restore of the
#                   bed's pages) with its tsc_offsets, and its variants:
#                   v6 (convert, clock as trace-cmd record writes it), zstd/zlib
#                   (convert --compression any), and dat-edit.py's cpustat,
#                   instance, subbuf, clock local and OFFSET option edits
#   ev.*, snap.*    tests/gen.py's unstable scenario with vtrace_host:tsc_offset
#                   events (writes; snapshots with since and tsc_khz), v7 and v6
#   lost.*          the same with 1000 events lost on host cpu 1
#   zdmg.*          real-l2's compressed file damaged in its CPU data: a zstd frame,
#                   a chunk header, a chunk count, a page inside a chunk; each also
#                   with the skip-bad-pages bit (.skip)
#   offsets.*       a tsc_offsets file alone (no host.dat)
set -e
out=$(realpath -m "$1")
tests=$(cd "$(dirname "$0")/../tests" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
cd "$tests"

# pack NAME DAT|- [OFFSETS]: one seed
pack() {
	python3 - "$out/$1" "$2" "${3:-}" <<'PY'
import struct, sys
out, dat, offs = sys.argv[1:4]
d = open(dat, 'rb').read() if dat != '-' else b''
o = b''.join(open(offs, 'rb').read().splitlines(True)[:41]) if offs else b''
data = struct.pack('<I', len(d)) + d + o
if len(data) > 65536:
    sys.exit(f'{out}: {len(data)} bytes, over 64 KiB')
open(out, 'wb').write(data)
PY
}

# make_dat DIR [[FIXTURE=]SYSTEM/EVENT...]: DIR/host.dat from DIR/host/cpu* (test-merge.sh's)
make_dat() {
	local d=$1 tr=$1/tracefs e
	shift
	mkdir -p "$tr/events"
	cp fixtures/debian-6.1/header_page fixtures/debian-6.1/header_event "$tr/events/"
	for e in ftrace/print sched/sched_switch kvm/kvm_entry "$@"; do
		mkdir -p "$tr/events/${e#*=}"
		cp "fixtures/debian-6.1/${e%%=*}.format" "$tr/events/${e#*=}/format"
	done
	for c in 0 1 2 3; do echo "$((1000 + c)) task-$c"; done > "$tr/saved_cmdlines"
	echo "local global counter uptime perf mono mono_raw boot [x86-tsc]" > "$tr/trace_clock"
	head -20 fixtures/debian-6.1/printk_formats > "$tr/printk_formats"
	head -40 fixtures/debian-6.1/kallsyms > "$d/kallsyms"
	trace-cmd restore -c -t "$tr" -k "$d/kallsyms" -o "$d/head.dat" > /dev/null 2>&1
	trace-cmd restore -i "$d/head.dat" -o "$d/host.dat" "$d"/host/cpu* > /dev/null 2>&1
	./dat-edit.py clock "$d/host.dat" x86-tsc	# restore writes "local"
}

# variants NAME DAT OFFSETS: v7 as it is, v6, compressed
variants() {
	pack "$1.v7" "$2" "$3"
	trace-cmd convert -i "$2" -o "$tmp/$1.v6.dat" --file-version 6 --compression none \
		> /dev/null 2>&1
	./dat-edit.py v6clock "$tmp/$1.v6.dat" x86-tsc
	pack "$1.v6" "$tmp/$1.v6.dat" "$3"
	trace-cmd convert -i "$2" -o "$tmp/$1.z.dat" --file-version 7 --compression any \
		> /dev/null 2>&1
	pack "$1.compressed" "$tmp/$1.z.dat" "$3"
}

R=fixtures/real-l2
variants real-l2 $R/host.dat $R/tsc_offsets
for edit in "cpustat 0:5:0:0:100 1:0:120:3" "instance foo" "subbuf 8192" "clock local" \
	    "offset 1000000000"; do
	cp $R/host.dat "$tmp/e.dat"
	./dat-edit.py ${edit%% *} "$tmp/e.dat" ${edit#* } > /dev/null
	pack "real-l2.${edit%% *}" "$tmp/e.dat"
done

python3 gen.py make "$tmp/ev" unstable --events 60 --offset-events > /dev/null
make_dat "$tmp/ev" vtrace_host/tsc_offset
variants ev "$tmp/ev/host.dat"
python3 gen.py make "$tmp/snap" unstable --events 60 --offset-events-from -0.25 \
	--offset-snapshots > /dev/null
make_dat "$tmp/snap" vtrace_host/tsc_offset-snap=vtrace_host/tsc_offset
variants snap "$tmp/snap/host.dat"
python3 gen.py make "$tmp/lost" unstable --events 60 --offset-events --lose-at 0.5 > /dev/null
make_dat "$tmp/lost" vtrace_host/tsc_offset
pack lost.v7 "$tmp/lost/host.dat"

# damage DAT NAME CPU OFFSET-IN-DATA BYTES(hex): a copy of DAT with BYTES at that CPU's
# compressed data (its chunk count at 0, the first chunk's header at 4), packed twice
damage() {
	python3 - "$1" "$out/zdmg.$2" "$3" "$4" "$5" <<'PY'
import struct, subprocess, sys
dat, out, cpu, at, hexb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
b = bytearray(open(dat, 'rb').read())
first = subprocess.run(['./dat-edit.py', 'chunks', dat, str(cpu)], capture_output=True,
                       text=True, check=True).stdout.split()
base = int(first[0]) - 4
patch = bytes.fromhex(hexb)
b[base + at:base + at + len(patch)] = patch
for suffix, flag in (('', 0), ('.skip', 1 << 31)):
    open(out + suffix, 'wb').write(struct.pack('<I', len(b) | flag) + b)
PY
}
trace-cmd convert -i $R/host.dat -o "$tmp/rz.dat" --file-version 7 --compression zstd \
	> /dev/null 2>&1
damage "$tmp/rz.dat" frame 0 12 00000000
damage "$tmp/rz.dat" chunk-header 1 4 ffffff00
damage "$tmp/rz.dat" chunk-count 0 0 ffff0000
cp $R/host.dat "$tmp/bad.dat"
printf '\x88\x13\x00\x00' | dd of="$tmp/bad.dat" bs=1 seek=$((32768 + 4096 + 8)) conv=notrunc \
	2> /dev/null
trace-cmd convert -i "$tmp/bad.dat" -o "$tmp/rzbad.dat" --file-version 7 --compression zstd \
	> /dev/null 2>&1
damage "$tmp/rzbad.dat" page 1 0 ""

pack offsets.real-l2 - $R/tsc_offsets
pack offsets.ev - "$tmp/ev/tsc_offsets"
