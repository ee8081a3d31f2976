# SPDX-License-Identifier: GPL-2.0
# Run a test-bed job again when the bed itself failed it: sourced by run_vm_tests.sh and bench/check.sh.
#
# bed_retry MAX OUT LOG CMD...
#   Runs CMD (a command or a shell function) with its output in LOG, at most
#   MAX times.  CMD writes its results under OUT (emptied before each
#   attempt).  When an attempt fails and testbed/bed-glitch.sh finds the
#   nested bed's own failure in OUT, OUT is kept as OUT.glitchN (LOG as
#   OUT.glitchN/run.log), the failure and the finding are printed as KTAP
#   diagnostics ("# ...") and CMD runs again.  A failure with no such finding
#   ends it at once.  Returns CMD's last exit status; BED_RETRY_TRIES is the
#   number of attempts made.
bed_retry() {
	local max=$1 out=$2 log=$3 try rc glitch
	local bed
	bed=$(dirname "${BASH_SOURCE[0]}")
	shift 3
	for ((try = 1; ; try++)); do
		BED_RETRY_TRIES=$try
		rm -rf "$out"
		mkdir -p "$out"
		"$@" > "$log" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] && [ "$try" -lt "$max" ] &&
			glitch=$("$bed/bed-glitch.sh" "$out") || return "$rc"
		grep -ah '^not ok ' "$log" "$out/l1-script.out" 2>/dev/null |
			sed "s/^/# attempt $try: /"
		rm -rf "$out.glitch$try"
		mv "$out" "$out.glitch$try"
		mv "$log" "$out.glitch$try/run.log"
		sed 's/^/# bed glitch: /' <<< "$glitch"
		echo "# $(basename "$out"): the test bed failed, not vtrace (Documentation/testbed.rst); attempt $try's logs in $out.glitch$try, running it once more"
	done
}
