// SPDX-License-Identifier: GPL-2.0
/* symbols.c: resolve kernel addresses through a vmlinux with elfutils (libdwfl). */
#include "merge-local.h"
#include "vtrace-util.h"

int symbols_attach(struct machine *m, const char *vmlinux)
{
	vtrace_set_error("--vmlinux %s for %s: not implemented yet", vmlinux, m->name);
	return -1;
}

void symbols_detach(struct machine *m)
{
	(void)m;
}
