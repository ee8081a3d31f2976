#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The second half of l1/align.sh, run on this machine by run_vm_tests.sh
# once L1 has ended: the checks of the capture L1 left in VTRACE_OUT
# (align-analyse.sh).
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-analyse.sh"

ktap_header "$(align_analyse_plan align-two-guests)"
align_analyse align-two-guests
ktap_finish
