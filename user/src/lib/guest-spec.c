// SPDX-License-Identifier: GPL-2.0
/* guest-spec.c: --guest NAME=DIR[,pid=PID|,libvirt=DOMAIN[,connect=URI]][,offset=N], parsed. */
/*
 * vtrace-merge's and vtrace dat's --guest: a guest's dump folder and how
 * to find its VM (a pid, a libvirt domain, a constant offset).  A libvirt
 * domain's QEMU pid comes from libvirt.c, below this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtrace-util.h"

/* pid=PID, offset=N, libvirt=DOMAIN or connect=URI after the folder */
static int parse_guest_option(const char *spec, const char *opt, struct vtrace_guest_spec *g)
{
	uint64_t v;

	if (!strncmp(opt, "pid=", 4)) {
		if (vtrace_parse_u64(opt + 4, &v) || !v || v > 0x7fffffff) {
			vtrace_set_error("--guest %s: %s: expected a process id", spec, opt);
			return -1;
		}
		g->pid = v;
		return 0;
	}
	if (!strncmp(opt, "offset=", 7)) {
		if (vtrace_parse_s64(opt + 7, &g->offset)) {
			vtrace_set_error("--guest %s: %s: expected a signed decimal offset", spec,
					 opt);
			return -1;
		}
		g->has_offset = true;
		return 0;
	}
	if (!strncmp(opt, "libvirt=", 8) || !strncmp(opt, "connect=", 8)) {
		char **field = opt[0] == 'l' ? &g->domain : &g->uri;

		if (!opt[8] || (opt[0] == 'l' && strchr(opt + 8, '/'))) {
			vtrace_set_error("--guest %s: %s: expected a %s", spec, opt,
					 opt[0] == 'l' ? "libvirt domain name" : "connection URI");
			return -1;
		}
		free(*field);
		*field = strdup(opt + 8);
		return *field ? 0 : -1;
	}
	vtrace_set_error("--guest %s: unknown option \"%s\", expected pid=PID, libvirt=DOMAIN,"
			 " connect=URI or offset=N", spec, opt);
	return -1;
}

/* Where the folder ends: at the first ",pid=", ",offset=", ",libvirt=" or ",connect=" */
static const char *guest_dir_end(const char *dir)
{
	static const char *const opts[] = { ",pid=", ",offset=", ",libvirt=", ",connect=" };
	const char *end = dir + strlen(dir);

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const char *o = strstr(dir, opts[i]);

		if (o && o < end)
			end = o;
	}
	return end;
}

static int check_guest_options(const char *spec, const struct vtrace_guest_spec *g)
{
	if (g->domain && g->pid > 0) {
		vtrace_set_error("--guest %s: pid=PID or libvirt=DOMAIN, not both", spec);
		return -1;
	}
	if (g->uri && !g->domain) {
		vtrace_set_error("--guest %s: connect=URI is libvirt=DOMAIN's connection:"
				 " name the domain too", spec);
		return -1;
	}
	return 0;
}

/*
 * --guest NAME=DIR[,pid=PID|,libvirt=DOMAIN[,connect=URI]][,offset=N], for
 * vtrace-merge and vtrace dat alike.  Returns 0, or -1 with the error set;
 * vtrace_guest_spec_free() either way.
 */
int vtrace_guest_spec_parse(const char *spec, struct vtrace_guest_spec *g)
{
	const char *eq = strchr(spec, '=');
	const char *end;
	char *opts, *save = NULL;
	int ret = 0;

	g->pid = -1;
	if (!eq || eq == spec) {
		vtrace_set_error("--guest %s: expected NAME=DIR[,pid=PID|,libvirt=DOMAIN]"
				 "[,offset=N]", spec);
		return -1;
	}
	g->name = strndup(spec, eq - spec);
	end = guest_dir_end(eq + 1);
	g->dir = strndup(eq + 1, end - eq - 1);
	if (!g->name || !g->dir)
		return -1;
	if (!strcmp(g->name, "host") || strpbrk(g->name, " \t\"\\")) {
		vtrace_set_error("--guest %s: NAME must not be \"host\" or hold blanks or quotes",
				 spec);
		return -1;
	}
	if (!*end)
		return 0;
	opts = strdup(end + 1);
	if (!opts)
		return -1;
	for (char *t = strtok_r(opts, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save))
		ret = parse_guest_option(spec, t, g);
	free(opts);
	return ret ? ret : check_guest_options(spec, g);
}

/* No pid file: say what to do now and next time */
static void libvirt_not_running(const struct vtrace_guest_spec *g)
{
	char *path = vtrace_libvirt_pid_path(g->domain, g->uri);

	vtrace_set_error("guest %s: domain %s is not running (no %s) and %s has no qemu.pid:"
			 " give pid=PID (the recording's QEMU), or leave libvirt= out (the one VM"
			 " of the offsets that fits is taken); while a domain runs, \"vtrace"
			 " libvirt-pid %s%s%s --out %s\" keeps its pid there", g->name, g->domain,
			 path ?: "pid file", g->dir, g->domain, g->uri ? " --connect " : "",
			 g->uri ?: "", g->dir);
	free(path);
}

/*
 * libvirt=DOMAIN: the pid kept in the dump folder wins (written while the
 * recording ran, by "vtrace agent --libvirt" or "vtrace libvirt-pid"): the
 * merge often runs after the domain stopped, or restarted as another QEMU.
 * Without it, the domain's QEMU now, if it runs.
 */
static int libvirt_guest_pid(const struct vtrace_guest_spec *g, int dump_pid)
{
	int pid = vtrace_libvirt_pid(g->domain, g->uri);

	if (pid < 0) {
		if (dump_pid > 0 && errno != EINVAL)
			return dump_pid;	/* stopped since, or not ours to see */
		if (errno == ENOENT)
			libvirt_not_running(g);
		return -1;
	}
	if (dump_pid > 0 && pid != dump_pid)
		vtrace_warn("guest %s: domain %s runs as pid %d now; %s/qemu.pid, kept with the"
			    " recording, says %d: using %d", g->name, g->domain, pid, g->dir,
			    dump_pid, dump_pid);
	return dump_pid > 0 ? dump_pid : pid;
}

/**
 * vtrace_guest_spec_pid - the guest's QEMU pid, as its --guest says
 * @g:		the parsed --guest
 * @dump_pid:	the pid in its dump folder (DIR/qemu.pid), or <= 0
 *
 * pid=PID, else for libvirt=DOMAIN the kept pid or the running domain's,
 * else the kept pid.  Returns the pid, 0 when none is known (the caller
 * may guess), -1 with the error set.
 */
int vtrace_guest_spec_pid(const struct vtrace_guest_spec *g, int dump_pid)
{
	if (g->pid > 0)
		return g->pid;
	if (g->domain)
		return libvirt_guest_pid(g, dump_pid);
	return dump_pid > 0 ? dump_pid : 0;
}

void vtrace_guest_spec_free(struct vtrace_guest_spec *g)
{
	free(g->name);
	free(g->dir);
	free(g->domain);
	free(g->uri);
	g->name = g->dir = g->domain = g->uri = NULL;
}
