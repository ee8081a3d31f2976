#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kselftest: the smoke suite (selftests/vtrace/l1/smoke.sh) on this machine as the KVM host
exec "$(dirname "$0")/ksft_run.sh" smoke
