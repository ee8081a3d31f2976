#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the test-only fault injector vtrace_failinj.ko for one kernel, out of the source tree.
#   build-failinj.sh KVER OUTDIR      -> OUTDIR/vtrace_failinj.ko (exit 1 if it cannot be built)
exec "$(dirname "$0")/build-testmod.sh" failinj "$@"
