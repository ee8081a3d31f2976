# SPDX-License-Identifier: GPL-2.0
# Sourced by testbed/lib.sh and testbed/l2-watch.sh: talking to an L2 QEMU's
# human monitor.

# l2_monitor SOCKET COMMAND: one human-monitor command to an L2's QEMU
# (l2_start --monitor: /run/vtrace-NAME.mon); prints QEMU's answer, what
# came before its next "(qemu) " prompt (at most 10 s).  Fixed sleeps of
# 1.5 s a command, before, made the host suite's pauses take 12 s.
l2_monitor() {
	python3 - "$1" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
end = time.monotonic() + 10
def upto_prompt():
    got = b""
    while not got.endswith(b"(qemu) ") and time.monotonic() < end:
        s.settimeout(max(end - time.monotonic(), 0.01))
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        if not b:
            break
        got += b
    return got.decode(errors="replace")
upto_prompt()	# the banner
s.sendall(sys.argv[2].encode() + b"\n")
print(upto_prompt().removesuffix("(qemu) "))
PY
}
