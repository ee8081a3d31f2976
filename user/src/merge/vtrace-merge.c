// SPDX-License-Identifier: GPL-2.0
/* vtrace-merge.c: the program's main(); the command line is main.c's vtrace_merge_main(). */
#include "merge-local.h"

int main(int argc, char **argv)
{
	return vtrace_merge_main(argc, argv);
}
