# SPDX-License-Identifier: GPL-2.0
# exit-loop.awk: what a spinning L2 guest's vCPU threads exit for
#
#   awk -v mem=MIB -f exit-loop.awk TRACE
#
# TRACE: tracefs text of L1's kvm:kvm_exit events of one guest's vCPU
# threads over a short sample (testbed/l2-watch.sh, for "l2 stuck busy");
# MIB: the guest's RAM (QEMU's -m).  Prints one line: the number of exits,
# the most common exit (reason and RIP) with its share, and for a nested
# page fault its error code and guest-physical address.  When nine exits in
# ten or more (of at least 100) are one nested page fault taken in the
# guest's own page-table walk (error code bit 33) at an address outside the
# guest's RAM, it adds "a nested page fault loop": the CPU walking the
# guest's page tables reached a table the guest does not have (no guest
# can run on such tables: its root or a top entry points outside its RAM),
# and KVM, finding no fault to fix or emulate there, lets it fault again
# (Documentation/testbed.rst, "Known quirks of the nesting").
/ kvm_exit: / {
	reason = rip = info1 = info2 = ""
	for (i = 1; i < NF; i++) {
		if ($i == "reason") reason = $(i + 1)
		else if ($i == "rip") rip = $(i + 1)
		else if ($i == "info1") info1 = $(i + 1)
		else if ($i == "info2") info2 = $(i + 1)
	}
	if (reason == "")
		next
	n++
	k = reason " at rip " rip
	c[k]++
	if (c[k] > top) {
		top = c[k]; key = k; r = reason; i1 = info1; i2 = info2
	}
}

function hex(s,    v, d, j) {	# a 0x... string, exactly up to 2^53
	sub(/^0x/, "", s)
	v = 0
	for (j = 1; j <= length(s); j++) {
		d = index("0123456789abcdef", tolower(substr(s, j, 1))) - 1
		v = v * 16 + d
	}
	return v
}

END {
	if (!n) {
		print "no kvm_exit of its vCPU threads in the sample"
		exit
	}
	line = sprintf("%d exits in the sample, %d (%d%%) %s", n, top, top * 100 / n, key)
	if (r == "npf" || r == "EXIT_NPF") {
		walk = int(hex(i1) / 2 ^ 33) % 2
		out = hex(i2) >= mem * 1048576
		line = line sprintf(" error code %s gpa %s (%s the guest's %d MiB of RAM%s)", i1, i2,
				    out ? "outside" : "inside", mem, walk ? ", in its page-table walk" : "")
		if (n >= 100 && top * 10 >= n * 9 && walk && out)
			line = line ": a nested page fault loop"
	}
	print line
}
