// SPDX-License-Identifier: GPL-2.0
/* vtrace-merge.c: the program's main(); the command line is main.c's vtrace_merge_main(). */
#include "merge-local.h"

int main(int argc, char **argv)
{
	/*
	 * stderr by whole lines: the self-check's verdict is printed in parts,
	 * and unbuffered each part is a write of its own, which another writer
	 * of the same file (the output, a script's own messages) can split
	 */
	setvbuf(stderr, NULL, _IOLBF, 0);
	return vtrace_merge_main(argc, argv);
}
