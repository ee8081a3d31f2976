# SPDX-License-Identifier: GPL-2.0
# console-rows.awk: the "vtg-bench" lines of a guest's console (bench/l1-transport.sh).
# The guest's kernel writes its messages to the same console, between any two
# bytes of a line: "...moved=1138688[   49.303278] hrtimer: interrupt took
# 34102805 ns" with the rest of the line (here nothing) after it (ci42), or
# "settl[   18.417199] vtrace_guest: ..." then "e 2, ...".  Such a line is
# joined with its rest, the message taken out; one whose rest never came is
# left out, not cut short (a row with a number cut in two would be wrong).
{ sub(/\r$/, "") }
held != "" { $0 = held $0; held = "" }
/^vtg-bench/ && match($0, /\[ *[0-9]+\.[0-9]+\] /) { held = substr($0, 1, RSTART - 1); next }
/^vtg-bench/
