#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages listed in scripts/packages.txt (or in the
# lists given, e.g. scripts/packages-matrix.txt for make check-matrix) that
# are missing.
#
#   scripts/install-deps.sh [LIST...]
set -eu

[ $# -gt 0 ] || set -- "$(dirname "$0")/packages.txt"
missing=()
for list in "$@"; do
	while read -r pkg; do
		case "$pkg" in ''|'#'*) continue ;; esac
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$pkg")
	done < "$list"
done

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "vtrace: missing Debian packages: ${missing[*]}" >&2
	echo "vtrace: run as root, or first: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "vtrace: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
