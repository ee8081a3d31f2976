/* SPDX-License-Identifier: GPL-2.0 */
/* ktap.h: minimal KTAP output for the vtrace unit tests. */
#ifndef _VTRACE_TESTS_KTAP_H
#define _VTRACE_TESTS_KTAP_H

#include <stdarg.h>
#include <stdio.h>

static int ktap_nr, ktap_failed;

/* Print one result line; a failed check prints its reason as a diagnostic */
static inline int ktap_check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	ktap_nr++;
	if (!ok) {
		ktap_failed++;
		printf("# %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	printf("%sok %d %s\n", ok ? "" : "not ", ktap_nr, name);
	fflush(stdout);
	return ok;
}

static inline int ktap_finish(void)
{
	printf("# totals: pass:%d fail:%d\n", ktap_nr - ktap_failed, ktap_failed);
	return ktap_failed ? 1 : 0;
}

#endif
