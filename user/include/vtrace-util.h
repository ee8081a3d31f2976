/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-util.h: error reporting and small helpers shared by the tools. */
#ifndef _VTRACE_UTIL_H
#define _VTRACE_UTIL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Library functions that fail return -1 or NULL and leave a message that
 * names the file, the byte offset and what was expected; the front end
 * prints it with vtrace_last_error().
 */
void vtrace_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *vtrace_last_error(void);
void vtrace_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool vtrace_set_quiet(bool quiet);
/* The name vtrace_warn() starts its lines with (default "vtrace-merge") */
void vtrace_set_progname(const char *name);

/**
 * struct vtrace_guest_spec - a parsed --guest NAME=DIR[,pid=PID][,offset=N]
 * @name:	NAME (allocated)
 * @dir:	DIR (allocated)
 * @pid:	PID, -1 when not given
 * @has_offset:	offset=N was given
 * @offset:	N
 */
struct vtrace_guest_spec {
	char	*name;
	char	*dir;
	int	pid;
	bool	has_offset;
	int64_t	offset;
};

int vtrace_guest_spec_parse(const char *spec, struct vtrace_guest_spec *g);
void vtrace_guest_spec_free(struct vtrace_guest_spec *g);

int vtrace_parse_u64(const char *s, uint64_t *val);
int vtrace_parse_s64(const char *s, int64_t *val);
char *vtrace_read_file(const char *path, uint64_t max, uint64_t *len);

#endif /* _VTRACE_UTIL_H */
