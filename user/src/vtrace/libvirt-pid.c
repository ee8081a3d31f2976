// SPDX-License-Identifier: GPL-2.0
/* libvirt-pid.c: "vtrace libvirt-pid", a running libvirt domain's QEMU pid, kept for the merge. */
/*
 * libvirt removes a domain's pid file when the domain stops, and the merge
 * usually runs later: this keeps the pid in the guest's dump folder
 * (DIR/qemu.pid), where vtrace-merge and vtrace dat look first.  A domain
 * driven in agent mode needs none of it ("vtrace agent --libvirt" keeps the
 * pid itself); a domain whose control port is a file does.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "vtrace-util.h"
#include "vtrace-local.h"

static const char libvirt_pid_usage[] =
"usage: vtrace libvirt-pid DOMAIN [--connect URI] [--out DIR]\n"
"\n"
"Print the QEMU pid of running libvirt domain DOMAIN; with --out, keep it in\n"
"DIR/qemu.pid too (DIR created if needed), where vtrace-merge and vtrace dat\n"
"find it after the domain stopped.  Run it while the domain runs.\n"
"\n"
"  -c, --connect URI   the domain's connection, as virsh -c URI: qemu:///system,\n"
"                      qemu:///session or qemu:///embed?root=DIR (default\n"
"                      $LIBVIRT_DEFAULT_URI, else system for root, else session)\n"
"  -o, --out DIR       the guest's dump folder\n";

int vtrace_cmd_libvirt_pid(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "connect",	required_argument,	NULL, 'c' },
		{ "out",	required_argument,	NULL, 'o' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	const char *uri = NULL, *dir = NULL;
	int c, pid;

	while ((c = getopt_long(argc, argv, "c:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': uri = optarg; break;
		case 'o': dir = optarg; break;
		case 'h': fputs(libvirt_pid_usage, stdout); return 0;
		default: fputs(libvirt_pid_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(libvirt_pid_usage, stderr);
		return 2;
	}
	if (dir)
		pid = vtrace_libvirt_keep_pid(argv[optind], uri, dir);
	else
		pid = vtrace_libvirt_pid(argv[optind], uri);
	if (pid < 0) {
		fprintf(stderr, "vtrace libvirt-pid: %s\n", vtrace_last_error());
		return 1;
	}
	printf("%d\n", pid);
	return 0;
}
