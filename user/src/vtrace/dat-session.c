// SPDX-License-Identifier: GPL-2.0
/* dat-session.c: vtrace dat: a KernelShark session, a KVM combo plot per vCPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "dat-local.h"
#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"
#include "vtrace-proto.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

/* ---- a KernelShark 2.2 session: host and guests, a KVM combo plot per vCPU */

/*
 * KernelShark's session file (libkshark-configio.c, KsSession.cpp): the
 * streams in load order (host 0, guests 1..), each with its file's
 * absolute path and mtime (a session whose files changed is refused), its
 * filters, plugins and CPU plots; the dual marker (KernelShark 2.2 crashes
 * on a session without one); a combo plot per guest CPU: the guest CPU
 * (CPU | GUEST draw) over its vCPU thread on the host (TASK | HOST draw),
 * which the kvm_combo plugin draws from the host's kvm_entry/kvm_exit.
 */
enum {
	KS_TASK_DRAW	= 1 << 0,
	KS_CPU_DRAW	= 1 << 1,
	KS_HOST_DRAW	= 1 << 2,
	KS_GUEST_DRAW	= 1 << 3,
};

static int put_ks_stream(FILE *f, int sd, const char *file, bool kvm, int cpus)
{
	char abs[PATH_MAX];
	struct stat st;

	if (!realpath(file, abs) || stat(abs, &st)) {
		vtrace_set_error("%s: %s", file, strerror(errno));
		return -1;
	}
	fprintf(f, "%s  {\n   \"type\": \"kshark.config.stream\",\n   \"stream id\": %d,\n"
		"   \"data\": { \"type\": \"kshark.config.data\", \"file\": ", sd ? ",\n" : "",
		sd);
	vtrace_json_string(f, abs);
	fprintf(f, ", \"name\": \"top buffer\", \"time\": %lld },\n", (long long)st.st_mtime);
	fprintf(f, "   \"filters\": { \"type\": \"kshark.config.filter\", \"filter mask\": 7 },\n"
		"   \"plugins\": { \"type\": \"kshark.config.plugins\", \"registered\":"
		" [ [ \"sched_events\", true ], [ \"missed_events\", true ]%s ] },\n"
		"   \"CPUPlots\": [", kvm ? ", [ \"kvm_combo\", true ]" : "");
	for (int c = 0; c < cpus; c++)
		fprintf(f, "%s %d", c ? "," : "", c);
	fprintf(f, " ],\n   \"TaskPlots\": [ ]\n  }");
	return 0;
}

int dat_write_session(struct dat *gs, int nr, const char *path)
{
	char file[PATH_MAX];
	FILE *f = fopen(path, "w");
	int ret = -1, n = 0;

	if (!f) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n \"type\": \"kshark.config.session\",\n \"data streams\": [\n");
	snprintf(file, sizeof(file), "%s/host.dat", gs[0].out);
	if (put_ks_stream(f, 0, file, gs[0].host_kvm, gs[0].host_cpus))
		goto out;
	for (int i = 0; i < nr; i++) {
		snprintf(file, sizeof(file), "%s/%s.dat", gs[i].out, gs[i].name);
		if (put_ks_stream(f, i + 1, file, false, gs[i].info->nr_cpus))
			goto out;
	}
	fprintf(f, "\n ],\n \"Markers\": { \"type\": \"kshark.config.markers\", \"markA\":"
		" { \"isSet\": false }, \"markB\": { \"isSet\": false }, \"Active\": \"A\" },\n"
		" \"Splitter\": [ 600, 300 ],\n \"ComboPlots\": [");
	for (int i = 0; gs[0].host_kvm && i < nr; i++)
		for (unsigned int c = 0; c < gs[i].info->nr_cpus; c++)
			if (gs[i].vcpu_tid[c])
				fprintf(f, "%s\n  [ [ %d, %d, %u ], [ 0, %d, %d ] ]", n++ ? "," : "",
					i + 1, KS_CPU_DRAW | KS_GUEST_DRAW, c,
					KS_TASK_DRAW | KS_HOST_DRAW, gs[i].vcpu_tid[c]);
	fprintf(f, "\n ]\n}\n");
	ret = 0;
out:
	if (fclose(f) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	if (!ret && gs[0].host_kvm)
		printf("%s: kernelshark -s %s: host and guest%s with the KVM combo plot of %d"
		       " vCPU%s\n", path, path, nr > 1 ? "s" : "", n, n == 1 ? "" : "s");
	else if (!ret)
		printf("%s: kernelshark -s %s: host and guest%s (no KVM combo plots: the host"
		       " trace has no kvm:kvm_entry/kvm:kvm_exit)\n", path, path, nr > 1 ? "s" : "");
	return ret;
}
