// SPDX-License-Identifier: GPL-2.0
/* libvirt.c: a libvirt domain's QEMU pid, from the pid file libvirt keeps while it runs. */
/*
 * libvirt writes the pid of a running domain's QEMU to NAME.pid in its
 * state folder and removes the file when the domain stops.  The folder
 * depends on the connection (as virsh -c URI names it):
 *
 *   qemu:///system             /run/libvirt/qemu/NAME.pid
 *   qemu:///session            $XDG_RUNTIME_DIR/libvirt/qemu/run/NAME.pid
 *   qemu:///embed?root=DIR     DIR/run/qemu/NAME.pid (virt-qemu-run --root DIR)
 *
 * Default: $LIBVIRT_DEFAULT_URI, else system for root and session for
 * others, as virsh does.  Remote connections are refused: the pid is of no
 * use on another machine.  "vtrace agent --libvirt", "vtrace libvirt-pid"
 * and --guest NAME=DIR,libvirt=DOMAIN of vtrace-merge and vtrace dat all
 * come here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtrace-util.h"

/* The folder of libvirt's pid files for connection @uri, malloc'ed */
static char *libvirt_state_dir(const char *uri)
{
	const char *path = NULL, *base;
	char *dir;

	if (!uri)
		uri = getenv("LIBVIRT_DEFAULT_URI");
	if (!uri || !*uri)
		uri = geteuid() ? "qemu:///session" : "qemu:///system";
	if (!strncmp(uri, "qemu:///", 8))
		path = uri + 7;
	else if (!strncmp(uri, "qemu+unix:///", 13))
		path = uri + 12;
	if (path && !strcmp(path, "/system"))
		return strdup("/run/libvirt/qemu");
	if (path && !strcmp(path, "/session")) {
		/* libvirt's virGetUserRuntimeDirectory(): GLib's runtime dir */
		base = getenv("XDG_RUNTIME_DIR");
		if (base && *base)
			return asprintf(&dir, "%s/libvirt/qemu/run", base) < 0 ? NULL : dir;
		base = getenv("XDG_CACHE_HOME");
		if (base && *base)
			return asprintf(&dir, "%s/libvirt/qemu/run", base) < 0 ? NULL : dir;
		return asprintf(&dir, "%s/.cache/libvirt/qemu/run", getenv("HOME") ?: "") < 0 ?
			NULL : dir;
	}
	if (path && !strncmp(path, "/embed?root=", 12) && path[12] == '/')
		return asprintf(&dir, "%s/run/qemu", path + 12) < 0 ? NULL : dir;
	vtrace_set_error("libvirt connection %s: expected qemu:///system, qemu:///session or"
			 " qemu:///embed?root=/DIR (a domain on this machine)", uri);
	errno = EINVAL;
	return NULL;
}

/**
 * vtrace_libvirt_pid_path - where libvirt keeps domain @domain's pid file
 * @domain:	the domain's name
 * @uri:	its connection (as virsh -c URI), NULL for libvirt's default
 *
 * Returns the path, malloc'ed, or NULL with the error set (errno EINVAL for
 * a connection not on this machine).
 */
char *vtrace_libvirt_pid_path(const char *domain, const char *uri)
{
	char *run = libvirt_state_dir(uri), *path;

	if (!run)
		return NULL;
	if (asprintf(&path, "%s/%s.pid", run, domain) < 0)
		path = NULL;
	free(run);
	return path;
}

/**
 * vtrace_libvirt_pid - the QEMU pid of running libvirt domain @domain
 * @domain:	the domain's name
 * @uri:	its connection (as virsh -c URI), NULL for libvirt's default
 *
 * Returns the pid, or -1 with the error set: errno ENOENT when the domain
 * does not run (no pid file), EINVAL for a connection not on this machine
 * or a pid file without a pid.
 */
int vtrace_libvirt_pid(const char *domain, const char *uri)
{
	char *path, *text = NULL;
	uint64_t pid;
	int err, ret = -1;

	path = vtrace_libvirt_pid_path(domain, uri);
	if (!path)
		return -1;
	text = vtrace_read_file(path, 64, NULL);
	if (!text) {
		err = errno;
		vtrace_set_error("%s: %s: is domain %s running (virsh%s%s list)?", path,
				 strerror(err), domain, uri ? " -c " : "", uri ?: "");
		errno = err;
		goto out;
	}
	text[strcspn(text, "\n")] = '\0';
	if (vtrace_parse_u64(text, &pid) || !pid || pid > INT_MAX) {
		vtrace_set_error("%s: expected a process id, got \"%.20s\"", path, text);
		errno = EINVAL;
		goto out;
	}
	ret = pid;
out:
	free(text);
	free(path);
	return ret;
}

/**
 * vtrace_libvirt_keep_pid - write running domain @domain's QEMU pid to @dir/qemu.pid
 * @domain:	the domain's name
 * @uri:	its connection, NULL for libvirt's default
 * @dir:	a guest's dump folder (created if needed)
 *
 * vtrace-merge and vtrace dat read the pid there, after the domain ended
 * too.  Returns the pid, or -1 with the error set.
 */
int vtrace_libvirt_keep_pid(const char *domain, const char *uri, const char *dir)
{
	char path[PATH_MAX];
	int pid = vtrace_libvirt_pid(domain, uri);
	bool written;
	FILE *f;

	if (pid < 0)
		return -1;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		vtrace_set_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/qemu.pid", dir);
	f = fopen(path, "w");
	if (!f) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	written = fprintf(f, "%d\n", pid) > 0;
	if (fclose(f) || !written) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	return pid;
}

/*
 * The file of the <channel> whose target is named @port in @xml: libvirt
 * passes a channel's file to QEMU as an fd (path=/dev/fdset/N), the
 * domain's status XML keeps its path.  NULL when not there.
 */
static char *channel_path(const char *xml, const char *port)
{
	char want[256];
	const char *ch, *end, *name, *src;

	snprintf(want, sizeof(want), "name='%s'", port);
	for (ch = strstr(xml, "<channel"); ch; ch = strstr(end, "<channel")) {
		end = strstr(ch, "</channel>");
		if (!end)
			return NULL;
		name = strstr(ch, want);
		src = strstr(ch, "<source path='");
		if (!name || name > end || !src || src > end)
			continue;
		src += 14;
		return strndup(src, strcspn(src, "'"));
	}
	return NULL;
}

/**
 * vtrace_libvirt_channel_path - the host file of running domain @domain's channel @port
 * @domain:	the domain's name
 * @uri:	its connection, NULL for libvirt's default
 * @port:	the channel's target name (vtrace.cpu0)
 *
 * From the status XML libvirt keeps beside the pid file while the domain
 * runs.  Returns the path, malloc'ed, or NULL with the error set.
 */
char *vtrace_libvirt_channel_path(const char *domain, const char *uri, const char *port)
{
	char *run = libvirt_state_dir(uri), *path = NULL, *xml = NULL, *file = NULL;

	if (!run || asprintf(&path, "%s/%s.xml", run, domain) < 0) {
		path = NULL;
		goto out;
	}
	xml = vtrace_read_file(path, 16 << 20, NULL);
	if (xml)
		file = channel_path(xml, port);
	if (xml && !file)
		vtrace_set_error("%s: no <channel> of a file named %s", path, port);
out:
	free(xml);
	free(path);
	free(run);
	return file;
}

/**
 * vtrace_libvirt_uri_of_home - the connection of the libvirt domain whose QEMU has $HOME @home
 * @home:	$HOME in a running QEMU's environment
 *
 * libvirt runs a domain's QEMU with $HOME set to the domain's private
 * folder, named after the connection:
 *
 *   /var/lib/libvirt/qemu/domain-N-NAME          qemu:///system
 *   ROOT/lib/qemu/domain-N-NAME                  qemu:///embed?root=ROOT
 *   ~/.config/libvirt/qemu/lib/domain-N-NAME     qemu:///session
 *
 * Returns the URI, malloc'ed, or NULL: not a folder of libvirt's.
 */
char *vtrace_libvirt_uri_of_home(const char *home)
{
	const char *dom = strstr(home, "/domain-");
	char *uri = NULL;
	size_t len;

	if (!dom || strchr(dom + 1, '/') || home[0] != '/')
		return NULL;
	len = dom - home;
	if (len == 21 && !strncmp(home, "/var/lib/libvirt/qemu", 21))
		return strdup("qemu:///system");
	if (len > 17 && !strncmp(dom - 17, "/libvirt/qemu/lib", 17))
		return strdup("qemu:///session");
	if (len > 9 && !strncmp(dom - 9, "/lib/qemu", 9) &&
	    asprintf(&uri, "qemu:///embed?root=%.*s", (int)(len - 9), home) < 0)
		return NULL;
	return uri;
}
