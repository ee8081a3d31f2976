// SPDX-License-Identifier: GPL-2.0
/* qemu.c: vtrace qemu-args: the QEMU options that give a guest its vtrace ports. */
/*
 * One virtio-serial device, a control port "PREFIX.ctl" and one data port
 * "PREFIX.cpuK" per vCPU.  The host ends of the data ports are files in
 * DIR (cpu0, cpu1, ...), written by QEMU itself; the control port is a file
 * too (DIR/ctl, file mode: the guest is driven through its debugfs) or a
 * unix socket QEMU listens on (DIR/ctl.sock, agent mode: driven by
 * "vtrace agent", which stores what the guest says in DIR/ctl).
 *
 * -pidfile DIR/qemu.pid lets vtrace-merge match the guest to its TSC offset
 * records; -name ...,debug-threads=on names the vCPU threads "CPU K/KVM"
 * so that host traces (and vtrace-merge --explain) can tell them apart.
 *
 * --libvirt prints the same ports as libvirt domain XML, <channel> elements
 * for the domain's <devices>: libvirt makes the virtio-serial controller,
 * names the threads and writes the pid to /run/libvirt/qemu/NAME.pid itself.
 */
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtrace-local.h"

static const char qemu_usage[] =
"usage: vtrace qemu-args --cpus N --out DIR [--agent] [--prefix P] [--name NAME] [--lines]\n"
"       vtrace qemu-args --libvirt --cpus N --out DIR [--agent] [--prefix P]\n"
"\n"
"Print the QEMU options that give a guest with N vCPUs its vtrace ports.\n"
"\n"
"  --cpus N        number of vCPUs (one data port each)\n"
"  --out DIR       folder of the host ends: DIR/ctl, DIR/cpuK, DIR/qemu.pid\n"
"  --agent         control port on a unix socket DIR/ctl.sock (for vtrace agent)\n"
"                  instead of the file DIR/ctl\n"
"  --prefix P      port name prefix (vtrace_guest's prefix= parameter, default vtrace)\n"
"  --name NAME     guest name for -name (default: vtrace)\n"
"  --lines         one option per line, ending in a backslash, for scripts\n"
"  --libvirt       the ports as libvirt domain XML: <channel> elements to put in\n"
"                  the domain's <devices> (virsh edit NAME)\n";

struct qemu_args {
	int		cpus;
	const char	*out;
	const char	*prefix;
	const char	*name;
	int		agent;
	int		lines;
	int		libvirt;
	int		printed;
};

static void emit(struct qemu_args *q, const char *opt, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One option and its value; options are separated by " " or " \\\n". */
static void emit(struct qemu_args *q, const char *opt, const char *fmt, ...)
{
	va_list ap;

	if (q->printed++)
		fputs(q->lines ? " \\\n" : " ", stdout);
	printf("%s ", opt);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static int qemu_parse(int argc, char **argv, struct qemu_args *q)
{
	static const struct option opts[] = {
		{ "cpus",	required_argument, NULL, 'c' },
		{ "out",	required_argument, NULL, 'o' },
		{ "agent",	no_argument,	   NULL, 'a' },
		{ "prefix",	required_argument, NULL, 'p' },
		{ "name",	required_argument, NULL, 'n' },
		{ "lines",	no_argument,	   NULL, 'l' },
		{ "libvirt",	no_argument,	   NULL, 'L' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			q->cpus = strtol(optarg, &end, 10);
			if (*end || q->cpus < 1 || q->cpus > 1024) {
				fprintf(stderr, "vtrace qemu-args: --cpus %s: expected 1..1024\n",
					optarg);
				return 2;
			}
			break;
		case 'o':	q->out = optarg; break;
		case 'a':	q->agent = 1; break;
		case 'p':	q->prefix = optarg; break;
		case 'n':	q->name = optarg; break;
		case 'l':	q->lines = 1; break;
		case 'L':	q->libvirt = 1; break;
		case 'h':	fputs(qemu_usage, stdout); exit(0);
		default:	fputs(qemu_usage, stderr); return 2;
		}
	}
	if (!q->cpus || !q->out) {
		fprintf(stderr, "vtrace qemu-args: --cpus and --out are required\n\n%s", qemu_usage);
		return 2;
	}
	/* QEMU splits option values at commas; a path with one would be cut */
	if (strpbrk(q->out, ", \t\n") || strpbrk(q->prefix, ", \t\n") || strpbrk(q->name, ", \t\n")) {
		fprintf(stderr, "vtrace qemu-args: --out, --prefix and --name may not contain commas "
			"or blanks (QEMU option syntax)\n");
		return 2;
	}
	return 0;
}

/* TEXT with the characters XML gives a meaning to as entities */
static void xml_text(const char *text)
{
	for (; *text; text++) {
		switch (*text) {
		case '&':	fputs("&amp;", stdout); break;
		case '<':	fputs("&lt;", stdout); break;
		case '>':	fputs("&gt;", stdout); break;
		case '\'':	fputs("&apos;", stdout); break;
		case '"':	fputs("&quot;", stdout); break;
		default:	putchar(*text);
		}
	}
}

/* One <channel>: a virtio-serial port named PREFIX.PORT, host end DIR/FILE */
static void libvirt_channel(struct qemu_args *q, const char *port, const char *file, int sock)
{
	printf("<channel type='%s'>\n  <source %spath='", sock ? "unix" : "file",
	       sock ? "mode='bind' " : "");
	xml_text(q->out);
	printf("/%s'/>\n  <target type='virtio' name='", file);
	xml_text(q->prefix);
	printf(".%s'/>\n</channel>\n", port);
}

static void libvirt_channels(struct qemu_args *q)
{
	char port[32];
	int k;

	printf("<!-- vtrace ports of a guest with %d vCPUs, for the domain's <devices> -->\n",
	       q->cpus);
	if (q->agent)
		libvirt_channel(q, "ctl", "ctl.sock", 1);
	else
		libvirt_channel(q, "ctl", "ctl", 0);
	for (k = 0; k < q->cpus; k++) {
		snprintf(port, sizeof(port), "cpu%d", k);
		libvirt_channel(q, port, port, 0);
	}
}

int vtrace_cmd_qemu_args(int argc, char **argv)
{
	struct qemu_args q = { .prefix = "vtrace", .name = "vtrace" };
	int ret, k;

	ret = qemu_parse(argc, argv, &q);
	if (ret)
		return ret;
	if (q.libvirt) {
		libvirt_channels(&q);
		return 0;
	}
	emit(&q, "-name", "%s,debug-threads=on", q.name);
	emit(&q, "-pidfile", "%s/qemu.pid", q.out);
	/* port 0 is reserved for a console: ctl + N data ports + 1 */
	emit(&q, "-device", "virtio-serial-pci,id=vtrace0,max_ports=%d", q.cpus + 2);
	if (q.agent)
		emit(&q, "-chardev", "socket,id=vtrace-ctl,path=%s/ctl.sock,server=on,wait=off",
		     q.out);
	else
		emit(&q, "-chardev", "file,id=vtrace-ctl,path=%s/ctl", q.out);
	emit(&q, "-device", "virtserialport,bus=vtrace0.0,chardev=vtrace-ctl,name=%s.ctl",
	     q.prefix);
	for (k = 0; k < q.cpus; k++) {
		emit(&q, "-chardev", "file,id=vtrace-cpu%d,path=%s/cpu%d", k, q.out, k);
		emit(&q, "-device", "virtserialport,bus=vtrace0.0,chardev=vtrace-cpu%d,name=%s.cpu%d",
		     k, q.prefix, k);
	}
	putchar('\n');
	return 0;
}
