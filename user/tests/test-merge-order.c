// SPDX-License-Identifier: GPL-2.0
/* test-merge-order.c: events at the same host TSC on several machines come out in command-line order. */
/*
 * gen.py's "ties" scenario gives every CPU of the host, g1 and g2 an event
 * at each of the same host TSCs.  The machines are opened here (their
 * structs get whatever addresses malloc gives), then their command-line
 * places are chosen against the address order: if the merge broke ties by
 * pointer, it would print them in the wrong order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/merge/merge-local.h"
#include "vtrace-util.h"
#include "ktap.h"

#define EVENTS	20

static struct merge_opts opts = {
	.format = MERGE_TEXT,
	.khz = 2500000,
	.to_ns = UINT64_MAX,
};

/* "name [cpu]" of each line of @text, in order, into @got (one per line) */
static int columns(char *text, char got[][16], int max)
{
	int n = 0;

	for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		char name[8];
		int cpu;

		if (sscanf(line, "%7s [%d]", name, &cpu) != 2)
			return -1;
		snprintf(got[n++], 16, "%s/%d", name, cpu);
	}
	return n;
}

/* Merge @ms (@order: their names in command-line order) and check every tie */
static void check_order(struct machine **ms, int nr, const char *test)
{
	static char got[3 * 2 * EVENTS + 1][16];
	char *text = NULL, want[16];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int n, bad = 0, first = -1;

	struct output *o;
	struct merge_pass pass;
	int ret;

	for (int i = 0; i < nr; i++)
		ms[i]->index = i;
	o = out ? output_open(out, &opts, 0, ms, nr, NULL) : NULL;
	if (o)
		pass = output_pass(o);
	ret = o ? merge_run(ms, nr, &opts, &pass, 1) : -1;
	output_close(o);
	if (ret) {
		ktap_check(0, test, "merge failed: %s", vtrace_last_error());
		return;
	}
	fclose(out);
	n = columns(text, got, 3 * 2 * EVENTS + 1);
	for (int i = 0; i < n; i++) {
		int k = i % (2 * nr);

		snprintf(want, sizeof(want), "%s/%d", ms[k / 2]->name, k % 2);
		if (strcmp(got[i], want)) {
			bad++;
			if (first < 0)
				first = i;
		}
	}
	ktap_check(n == 2 * nr * EVENTS && !bad, test,
		   "%d lines (expected %d), %d out of place, first at line %d: %s, expected %s/%d",
		   n, 2 * nr * EVENTS, bad, first + 1, first >= 0 ? got[first] : "-",
		   first >= 0 ? ms[(first % (2 * nr)) / 2]->name : "-", first % 2);
	free(text);
}

static struct machine *open_guest(const char *dir, const char *name,
				  struct vtrace_offsets *offsets)
{
	char spec[256];
	struct machine *m;

	snprintf(spec, sizeof(spec), "%s=%s/%s", name, dir, name);
	m = machine_open_guest(spec, &opts);
	if (m && (machine_bind_offsets(m, offsets, &opts) || machine_select(m, &opts))) {
		machine_close(m);
		m = NULL;
	}
	return m;
}

/* host, then the guest at the higher address, then the one at the lower */
static void test_ties(const char *dir, int reopen)
{
	char path[256];
	struct vtrace_offsets *offsets;
	struct machine *host, *g1, *g2, *ms[3];

	snprintf(path, sizeof(path), "%s/tsc_offsets", dir);
	offsets = vtrace_offsets_open(path);
	snprintf(path, sizeof(path), "%s/host", dir);
	host = machine_open_host(path, &opts);
	g1 = open_guest(dir, "g1", offsets);
	g2 = open_guest(dir, "g2", offsets);
	if (!offsets || !host || !g1 || !g2 || machine_select(host, &opts)) {
		ktap_check(0, reopen ? "ties_guests_against_address_order_reopened" :
			   "ties_guests_against_address_order", "open: %s", vtrace_last_error());
		goto out;
	}
	ms[0] = host;
	ms[1] = g1 > g2 ? g1 : g2;
	ms[2] = g1 > g2 ? g2 : g1;
	check_order(ms, 3, reopen ? "ties_guests_against_address_order_reopened" :
		    "ties_guests_against_address_order");
out:
	machine_close(g2);
	machine_close(g1);
	machine_close(host);
	vtrace_offsets_close(offsets);
}

int main(void)
{
	char dir[] = "/tmp/vtrace-test-order.XXXXXX", cmd[512];

	printf("KTAP version 1\n1..2\n");
	if (!mkdtemp(dir))
		return 1;
	snprintf(cmd, sizeof(cmd), "python3 gen.py make %s ties --events %d", dir, EVENTS);
	if (system(cmd)) {
		ktap_check(0, "ties_generated", "%s failed", cmd);
		return ktap_finish();
	}
	/* twice: a second opening reuses freed memory, so addresses may come in another order */
	test_ties(dir, 0);
	test_ties(dir, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return ktap_finish();
}
