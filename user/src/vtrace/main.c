// SPDX-License-Identifier: GPL-2.0
/* main.c: the vtrace command, dispatching to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "vtrace-local.h"
#include "vtrace-util.h"

static const char usage_text[] =
"usage: vtrace COMMAND [ARGS]\n"
"\n"
"  agent        drive a guest's vtrace_guest through its vtrace.ctl port (agent mode)\n"
"  dat          write a guest capture as a trace-cmd trace.dat, and the host's with its GUEST\n"
"  libvirt-pid  print a running libvirt domain's QEMU pid, or keep it in a guest's dump folder\n"
"  qemu-args    print the QEMU options that give a guest its vtrace ports\n"
"  record       record the host and its guests into one capture folder (vtrace-merge DIR)\n"
"\n"
"vtrace COMMAND --help shows a command's options.\n";

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "agent",	vtrace_cmd_agent },
	{ "dat",	vtrace_cmd_dat },
	{ "libvirt-pid", vtrace_cmd_libvirt_pid },
	{ "qemu-args",	vtrace_cmd_qemu_args },
	{ "record",	vtrace_cmd_record },
};

int main(int argc, char **argv)
{
	size_t i;

	vtrace_set_progname("vtrace");
	setvbuf(stderr, NULL, _IOLBF, 0);	/* whole lines, as vtrace-merge's */
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "vtrace: unknown command '%s'\n\n%s", argv[1], usage_text);
	return 2;
}
