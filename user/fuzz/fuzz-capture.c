// SPDX-License-Identifier: GPL-2.0
/* fuzz-capture.c: a capture folder's manifest (vtrace record), a QEMU command line's ports. */
/*
 * The input is the manifest up to its first NUL byte, then a QEMU command
 * line, its arguments separated by NUL bytes as /proc/PID/cmdline has them
 * (either may be empty).  A manifest vtrace_capture_read() accepts is used
 * as "vtrace-merge DIR" uses it: every guest's --guest spec, the paths of
 * its files, the vCPU thread of every vCPU id it names; the command line
 * goes through vtrace_qemu_ports_parse(), as "vtrace record" reads a
 * running QEMU's.
 */
#include "fuzz.h"
#include "vtrace-capture.h"

#define MAX_ARGS	256

static void use_capture(const struct vtrace_capture *c)
{
	char **specs = NULL;
	int n;

	fuzz_sink += c->version + c->tsc_khz + c->nr_guests;
	free(vtrace_capture_path(c, c->host ? c->host : "host.dat"));
	n = vtrace_capture_guests(c, &specs);
	for (int i = 0; i < n; i++) {
		fuzz_sink += strlen(specs[i]);
		free(specs[i]);
	}
	free(specs);
	for (int i = 0; i < c->nr_guests; i++) {
		const struct vtrace_capture_guest *g = &c->guests[i];

		free(vtrace_capture_guest_spec(c, i));
		for (int k = 0; k < g->nr_vcpus; k++)
			fuzz_sink += vtrace_capture_vcpu_tid(c, g->name, g->vcpus[k].id);
	}
}

static void use_cmdline(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS];
	struct vtrace_qemu_ports p;
	int argc = 0;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t at = 0; at < size && argc < MAX_ARGS; at += strlen(buf + at) + 1)
		argv[argc++] = buf + at;
	if (argc && !vtrace_qemu_ports_parse(argv, argc, "/", &p)) {
		fuzz_sink += p.nr_cpus + p.ctl_fd + p.ctl_is_file;
		vtrace_qemu_ports_free(&p);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t mlen = nul ? (size_t)(nul - data) : size;
	struct vtrace_capture *c;

	fuzz_write("manifest", data, mlen);
	c = vtrace_capture_read(fuzz_dir());
	if (c) {
		use_capture(c);
		vtrace_capture_free(c);
	}
	if (nul)
		use_cmdline(nul + 1, size - mlen - 1);
	return 0;
}
