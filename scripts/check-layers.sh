#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The files of a module call each other only downward: derive which file
# calls which from the sources (a call or a use of a non-static function
# another file defines, comments left out) and fail on a circle.
#
#   scripts/check-layers.sh [DIR...]   default: kmod/guest
#   scripts/check-layers.sh --shared DIR
#                                      print "FILE FUNCTION" for each function
#                                      one file defines and another calls
#                                      (scripts/check-kdoc.sh: they need kernel-doc)
#
# Prints each file's callees, then KTAP: one test per directory.
set -u
cd "$(dirname "$0")/.."
shared=
if [ "${1:-}" = --shared ]; then
	shared=1
	shift
fi
[ $# -gt 0 ] || set -- kmod/guest

strip_comments() {	# strip_comments FILE: the source without comments and strings
	awk '
	{
		line = $0; out = ""
		while (length(line)) {
			if (incomment) {
				i = index(line, "*/")
				if (!i) { line = ""; break }
				line = substr(line, i + 2); incomment = 0
				continue
			}
			if (match(line, /\/\*|\/\/|"/) == 0) { out = out line; break }
			out = out substr(line, 1, RSTART - 1)
			tok = substr(line, RSTART, RLENGTH)
			line = substr(line, RSTART + RLENGTH)
			if (tok == "//") break
			if (tok == "/*") { incomment = 1; continue }
			# a string: skip to its closing quote
			while (match(line, /\\.|"/)) {
				t = substr(line, RSTART, RLENGTH)
				line = substr(line, RSTART + RLENGTH)
				if (t == "\"") break
			}
			out = out "\"\""
		}
		print out
	}' "$1"
}

facts() {	# facts DIR: "def FILE NAME" and "use FILE NAME" lines, file names without .c
	local dir=$1 f
	for f in "$dir"/*.c; do
		case "$f" in *.mod.c) continue ;; esac
		strip_comments "$f" | awk -v file="$(basename "$f" .c)" '
		# a definition: at column 0, not static, not a prototype
		/^[A-Za-z_]/ && !/^(static|extern|typedef|struct [a-z_]+ \{|#)/ && !/;[ \t]*$/ &&
		    match($0, /[A-Za-z_][A-Za-z0-9_]*\(/) {
			print "def", file, substr($0, RSTART, RLENGTH - 1)
		}
		{
			s = $0
			while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) {
				print "use", file, substr(s, RSTART, RLENGTH)
				s = substr(s, RSTART + RLENGTH)
			}
		}'
	done
}

calls() {	# calls DIR: "caller owner name" for each use of a function defined in another file
	facts "$1" | awk '
	$1 == "def" { owner[$3] = $2; next }
	{ uses[NR] = $2 " " $3 }
	END {
		for (i in uses) {
			split(uses[i], u, " ")
			if ((u[2] in owner) && owner[u[2]] != u[1])
				print u[1], owner[u[2]], u[2]
		}
	}'
}

shared_functions() {	# shared_functions DIR: "FILE.c NAME" of each function another file uses
	calls "$1" | awk -v dir="$1" '{ print dir "/" $2 ".c " $3 }' | sort -u
}

graph() {	# graph DIR: "caller callee" per line, file names without .c
	calls "$1" | awk '{ print $1, $2 }' | sort -u
}

if [ -n "$shared" ]; then
	shared_functions "$1"
	exit 0
fi

n=0 pass=0 fail=0
echo "KTAP version 1"
echo "1..$#"
for dir in "$@"; do
	n=$((n + 1))
	edges=$(graph "$dir")
	awk '{ c[$1] = c[$1] " " $2 } END { for (f in c) print "# " f " ->" c[f] }' <<< "$edges" |
		sort
	# tsort lists each circle it finds on stderr
	loops=$(tsort <<< "$edges" 2>&1 >/dev/null)
	if [ -z "$loops" ]; then
		pass=$((pass + 1)); echo "ok $n $dir: no circle"
	else
		fail=$((fail + 1))
		sed 's/^/# /' <<< "$loops"
		echo "not ok $n $dir: files call each other in a circle"
	fi
done
echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
