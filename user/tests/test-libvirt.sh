#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-libvirt.sh: "vtrace qemu-args --libvirt" checked by libvirt's own tools:
# virt-xml-validate accepts the domain with the channels, and libvirt's QEMU
# driver (virsh domxml-to-native, embedded: no daemon) turns them into the
# same ports as "vtrace qemu-args" (backend, path, port name); "vtrace agent
# --libvirt NAME [--connect URI]" finds the socket and libvirt's pid file of a
# domain.  A real domain run by libvirt: scripts/check-libvirt.sh.
V=${VTRACE_BINDIR:-..}/vtrace
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/ktap.sh"

domain() {	# domain NAME VCPUS QEMU-ARGS-OPTIONS...: a minimal domain with the channels
	local name=$1 cpus=$2
	shift 2
	echo "<domain type='kvm'><name>$name</name><memory unit='MiB'>512</memory>"
	echo "<vcpu>$cpus</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>"
	echo "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>"
	"$V" qemu-args --libvirt --cpus "$cpus" "$@"
	echo "</devices></domain>"
}

# file and socket control ports, an XML-special character in the path
case1=(--out "$T/g1")
case2=(--out "$T/a&b'<g2>" --agent --prefix vt)
domain g1 2 "${case1[@]}" > "$T/g1.xml"
domain g2 3 "${case2[@]}" > "$T/g2.xml"
grep -c '<channel ' "$T/g1.xml" | grep -qx 3
ok $? libvirt_xml_three_channels_for_two_vcpus "$(cat "$T/g1.xml")"
grep -qF "<source path='$T/a&amp;b&apos;&lt;g2&gt;/cpu2'/>" "$T/g2.xml"
ok $? libvirt_xml_path_escaped "$(grep cpu2 "$T/g2.xml")"

# vtrace agent --libvirt NAME: socket DIR/ctl.sock, libvirt's NAME.pid to DIR/qemu.pid, the pid
# file where the connection (--connect URI, as virsh -c) keeps it
mkdir -p "$T/lv/run/qemu" "$T/d1"
echo 4242 > "$T/lv/run/qemu/g1.pid"
python3 fake-guest.py "$T/d1/ctl.sock" "$T/log1" &
for i in $(seq 50); do [ -e "$T/d1/ctl.sock.ready" ] && break; sleep 0.1; done
"$V" agent --libvirt g1 --connect "qemu:///embed?root=$T/lv" --out "$T/d1" -t 10 status \
	> "$T/agent" 2>&1
rc=$?
wait
[ $rc -eq 0 ] && [ "$(cat "$T/d1/qemu.pid")" = 4242 ] &&
	[ "$(cut -d' ' -f1 "$T/log1" | tr '\n' ' ')" = "1 20 " ]
ok $? agent_libvirt_name_gives_socket_and_pid "rc $rc: $(head -c 300 "$T/agent") | $(cat "$T/log1")"
LIBVIRT_DEFAULT_URI=qemu:///embed?root=$T/lv "$V" agent --libvirt nosuch --out "$T/d2" status \
	> "$T/agent" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -qF "$T/lv/run/qemu/nosuch.pid: No such file or directory: is domain nosuch running (virsh list)?" "$T/agent"
ok $? agent_libvirt_domain_not_running "rc $rc: $(head -c 300 "$T/agent")"
# qemu:///session: libvirt's per-user runtime folder; qemu:///system: /run/libvirt/qemu
msg() {	# msg URI: the folder vtrace agent looked in for domain nosuch
	XDG_RUNTIME_DIR=$T/xdg "$V" agent -L nosuch -c "$1" -o "$T/d2" status 2>&1 |
		sed -n 's|^vtrace agent: \(.*\)/nosuch.pid: .*|\1|p'
}
[ "$(msg qemu:///session)" = "$T/xdg/libvirt/qemu/run" ] &&
	[ "$(msg qemu+unix:///system)" = /run/libvirt/qemu ]
ok $? agent_libvirt_connect_uri "session: $(msg qemu:///session) | system: $(msg qemu:///system)"
"$V" agent -L g1 -c qemu+ssh://h/system -o "$T/d2" status > "$T/agent" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -qF "expected qemu:///system, qemu:///session or qemu:///embed?root=/DIR" "$T/agent"
ok $? agent_libvirt_remote_uri_refused "rc $rc: $(head -c 300 "$T/agent")"

if ! command -v virt-xml-validate > /dev/null || ! command -v virsh > /dev/null; then
	skip libvirt_validate "no virt-xml-validate (apt-get install libvirt-clients)"
	skip libvirt_same_ports_file "no virsh"
	skip libvirt_same_ports_socket "no virsh"
	exit 0
fi
virt-xml-validate "$T/g1.xml" domain > "$T/v1" 2>&1 && virt-xml-validate "$T/g2.xml" domain > "$T/v2" 2>&1
ok $? libvirt_virt_xml_validate "$(cat "$T/v1" "$T/v2")"

# libvirt's embedded QEMU driver needs its state folder and the user it runs QEMU as
native() {	# native XML G: libvirt's QEMU command line for the domain, in T/argvG (errors T/errG)
	virsh -q -c "qemu:///embed?root=$T/libvirt" domxml-to-native qemu-argv "$1" \
		> "$T/argv$2" 2> "$T/err$2"
}
for g in 1 2; do
	if [ "$g" = 1 ]; then args=("${case1[@]}") cpus=2; else args=("${case2[@]}") cpus=3; fi
	native "$T/g$g.xml" $g
	rc=$?
	# a machine without /dev/kvm: libvirt refuses a kvm domain; the ports
	# do not depend on the accelerator, so the same domain under TCG
	if [ $rc -ne 0 ] && grep -q "does not support virt type 'kvm'" "$T/err$g"; then
		sed "s/<domain type='kvm'>/<domain type='qemu'>/" "$T/g$g.xml" > "$T/g$g-tcg.xml"
		native "$T/g$g-tcg.xml" $g
		rc=$?
		echo "# libvirt_same_ports_as_qemu_args_$g: no KVM here (libvirt: \"does not support virt type 'kvm'\"): the domain as type qemu"
	fi
	python3 libvirt-ports.py < "$T/argv$g" > "$T/lv$g" 2>> "$T/err$g"
	"$V" qemu-args --cpus "$cpus" "${args[@]}" | python3 libvirt-ports.py --words > "$T/qa$g"
	[ $rc -eq 0 ] && [ "$(wc -l < "$T/qa$g")" -eq $((cpus + 1)) ] && cmp -s "$T/lv$g" "$T/qa$g"
	ok $? "libvirt_same_ports_as_qemu_args_$g" \
		"rc $rc: $(head -c 300 "$T/err$g") | libvirt: $(tr '\n' '|' < "$T/lv$g") | vtrace: $(tr '\n' '|' < "$T/qa$g")"
done
