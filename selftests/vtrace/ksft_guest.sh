#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kselftest: the guest suite (selftests/vtrace/l1/guest.sh) on this machine as the KVM host
exec "$(dirname "$0")/ksft_run.sh" guest
