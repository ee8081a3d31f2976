# SPDX-License-Identifier: GPL-2.0
# Sourced by scripts/check.sh: python3, resolved once. A version manager's
# python3 is a shim that finds the interpreter at every call (pyenv's is a
# bash script: 0.3 s a call on a quiet machine here, 4 s at load 13), and
# make check calls python3 thousands of times: check-unit took 148 s against
# 45 s once a machine had pyenv (2026-12-02). build/python3/python3 links to
# the interpreter the shim chose and comes first in PATH; nothing else moves.
python3_path() {
	local py
	py=$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null) || return 0
	[ -n "$py" ] && [ "$(command -v python3)" != "$py" ] || return 0
	mkdir -p build/python3 && ln -sfn "$py" build/python3/python3 || return 0
	PATH=$PWD/build/python3:$PATH
	export PATH
}
python3_path
