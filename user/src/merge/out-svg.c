// SPDX-License-Identifier: GPL-2.0
/* out-svg.c: --format svg: a self-contained SVG timeline of every CPU's tasks. */
#include <stdlib.h>

#include "out-sched.h"
#include "vtrace-util.h"

struct drawn *svg_open(FILE *out, const struct merge_opts *opts)
{
	(void)out;
	(void)opts;
	vtrace_set_error("--format svg: not implemented yet");
	return NULL;
}
