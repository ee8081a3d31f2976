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

/* A line of @prefix and @fmt to stderr, unless quiet */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	if (quiet)
		return;
	fprintf(stderr, "%s: %s", progname, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void vtrace_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

/* A line that is no warning: what a tool chose by itself, and on what evidence */
void vtrace_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

/* @str inside a JSON string, unquoted: '"' and backslash escaped, control characters as \u00XX */
void vtrace_json_chars(FILE *f, const char *str)
{
	for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
}

/* @str as a JSON string, quoted (vtrace_json_chars()) */
void vtrace_json_string(FILE *f, const char *str)
{
	fputc('"', f);
	vtrace_json_chars(f, str);
	fputc('"', f);
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
