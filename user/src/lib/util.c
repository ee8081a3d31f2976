// SPDX-License-Identifier: GPL-2.0
/* util.c: error messages, number parsing, whole-file reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtrace-util.h"

static char last_error[1024];
static bool quiet;
static const char *progname = "vtrace-merge";

void vtrace_set_progname(const char *name)
{
	progname = name;
}

void vtrace_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

const char *vtrace_last_error(void)
{
	return last_error[0] ? last_error : strerror(errno);
}

/* Returns the previous setting */
bool vtrace_set_quiet(bool q)
{
	bool old = quiet;

	quiet = q;
	return old;
}

void vtrace_warn(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fprintf(stderr, "%s: warning: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* pid=PID or offset=N after the folder */
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
	vtrace_set_error("--guest %s: unknown option \"%s\", expected pid=PID or offset=N", spec,
			 opt);
	return -1;
}

/*
 * --guest NAME=DIR[,pid=PID][,offset=N], for vtrace-merge and vtrace dat
 * alike.  Returns 0, or -1 with the error set; vtrace_guest_spec_free()
 * either way.
 */
int vtrace_guest_spec_parse(const char *spec, struct vtrace_guest_spec *g)
{
	const char *eq = strchr(spec, '=');
	const char *end, *o;
	char *opts, *save = NULL;
	int ret = 0;

	g->pid = -1;
	if (!eq || eq == spec) {
		vtrace_set_error("--guest %s: expected NAME=DIR[,pid=PID][,offset=N]", spec);
		return -1;
	}
	g->name = strndup(spec, eq - spec);
	/* the folder ends where the first option starts */
	end = eq + 1 + strlen(eq + 1);
	o = strstr(eq + 1, ",pid=");
	if (o)
		end = o;
	o = strstr(eq + 1, ",offset=");
	if (o && o < end)
		end = o;
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
	return ret;
}

void vtrace_guest_spec_free(struct vtrace_guest_spec *g)
{
	free(g->name);
	free(g->dir);
	g->name = g->dir = NULL;
}

/* Decimal only, the whole string, no sign */
int vtrace_parse_u64(const char *s, uint64_t *val)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*val = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	return 0;
}

int vtrace_parse_s64(const char *s, int64_t *val)
{
	char *end;

	if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	*val = strtoll(s, &end, 10);
	if (errno || *end || end == s || (*s == '-' && end == s + 1))
		return -1;
	return 0;
}

/* The whole file, NUL-terminated, at most @max bytes */
char *vtrace_read_file(const char *path, uint64_t max, uint64_t *len)
{
	struct stat st;
	char *buf = NULL;
	size_t done = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		goto error;
	}
	if ((uint64_t)st.st_size > max) {
		vtrace_set_error("%s: %llu bytes, expected at most %llu", path,
				 (unsigned long long)st.st_size, (unsigned long long)max);
		goto error;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		goto error;
	}
	while (done < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + done, st.st_size - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += r;
	}
	buf[done] = '\0';
	if (len)
		*len = done;
	close(fd);
	return buf;
error:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}
