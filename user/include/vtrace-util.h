/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-util.h: error reporting and small helpers shared by the tools. */
#ifndef _VTRACE_UTIL_H
#define _VTRACE_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Library functions that fail return -1 or NULL and leave a message that
 * names the file, the byte offset and what was expected; the front end
 * prints it with vtrace_last_error().
 */
void vtrace_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *vtrace_last_error(void);
void vtrace_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vtrace_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool vtrace_set_quiet(bool quiet);
/* The name vtrace_warn() starts its lines with (default "vtrace-merge") */
void vtrace_set_progname(const char *name);

/**
 * struct vtrace_guest_spec - a parsed --guest NAME=DIR[,pid=PID|,libvirt=DOMAIN[,connect=URI]][,offset=N]
 * @name:	NAME (allocated)
 * @dir:	DIR (allocated)
 * @pid:	PID, -1 when not given
 * @has_offset:	offset=N was given
 * @offset:	N
 * @domain:	libvirt=DOMAIN (allocated), or NULL
 * @uri:	connect=URI (allocated), or NULL for libvirt's default
 */
struct vtrace_guest_spec {
	char	*name;
	char	*dir;
	int	pid;
	bool	has_offset;
	int64_t	offset;
	char	*domain;
	char	*uri;
};

int vtrace_guest_spec_parse(const char *spec, struct vtrace_guest_spec *g);
int vtrace_guest_spec_pid(const struct vtrace_guest_spec *g, int dump_pid);
void vtrace_guest_spec_free(struct vtrace_guest_spec *g);

/* libvirt.c: a libvirt domain's QEMU pid (connection @uri as virsh -c, NULL: default) */
char *vtrace_libvirt_pid_path(const char *domain, const char *uri);
int vtrace_libvirt_pid(const char *domain, const char *uri);
int vtrace_libvirt_keep_pid(const char *domain, const char *uri, const char *dir);
char *vtrace_libvirt_channel_path(const char *domain, const char *uri, const char *port);
char *vtrace_libvirt_uri_of_home(const char *home);

void vtrace_json_chars(FILE *f, const char *str);
void vtrace_json_string(FILE *f, const char *str);
int vtrace_parse_u64(const char *s, uint64_t *val);
int vtrace_parse_s64(const char *s, int64_t *val);
char *vtrace_read_file(const char *path, uint64_t max, uint64_t *len);

#endif /* _VTRACE_UTIL_H */
