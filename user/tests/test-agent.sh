#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-agent.sh: "vtrace agent" with several guests (fake-guest.py stands in for
# vtrace_guest's control port; the real one is tested in the VM suites).
V=${VTRACE_BINDIR:-..}/vtrace
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/ktap.sh"

for g in 1 2 3; do
	python3 fake-guest.py "$T/s$g" "$T/log$g" &
done
for i in $(seq 50); do
	[ -e "$T/s1.ready" ] && [ -e "$T/s2.ready" ] && [ -e "$T/s3.ready" ] && break
	sleep 0.1
done
"$V" agent -s "$T/s1" -o "$T/d1" -s "$T/s2" -o "$T/d2" -s "$T/s3" -o "$T/d3" -t 10 \
	events "sched:*" start status stop > "$T/out" 2>&1
ok $? agent_three_guests_exit_0 "$(head -c 400 "$T/out")"
wait

# every guest got HELLO(1) SET_EVENTS(18) START(16) STATUS_REQ(20) STOP(17), in order
r=0
for g in 1 2 3; do
	[ "$(cut -d' ' -f1 "$T/log$g" | tr '\n' ' ')" = "1 18 16 20 17 " ] || r=1
done
ok $r agent_every_guest_got_every_command "$(cat "$T"/log* | tr '\n' '|')"

# each command reached all guests before any reply was awaited: the three
# START arrivals lie within the time one round trip takes
r=0
s=$(grep '^16 ' "$T"/log* | sed 's/.*t=//' | sort -n)
first=$(head -1 <<< "$s") last=$(tail -1 <<< "$s")
[ $((last - first)) -lt 200000000 ] || r=1
ok $r agent_start_reaches_all_guests_at_once "spread $(( (last - first) / 1000 )) us"

# replies are kept per guest, each DIR/ctl a valid stream of its own guest
r=0
for g in 1 2 3; do
	[ -s "$T/d$g/ctl" ] && [ "$(grep -c "^== $T/d$g$" "$T/out")" -ge 4 ] || r=1
done
ok $r agent_replies_kept_per_guest "$(grep -c '^==' "$T/out") '== DIR' lines"

"$V" agent -s "$T/s1" -s "$T/s2" -o "$T/d1" start > "$T/out" 2>&1
[ $? -eq 2 ] && grep -q "one --out DIR per --socket" "$T/out"
ok $? agent_unpaired_socket_is_a_usage_error
