// SPDX-License-Identifier: GPL-2.0
/* capture.c: the manifest of a "vtrace record" capture folder: written last, read first. */
/*
 * A capture folder holds the host trace (host.dat), vtrace_host's files
 * (tsc_offsets, tsc_khz), one dump folder per guest, and DIR/manifest, a
 * text file of "key value" lines:
 *
 *   vtrace-capture 1              format version (first line)
 *   vtrace 0.1.0                  the vtrace that wrote it
 *   start 2026-12-04T09:12:01Z    recording started, stopped (UTC)
 *   stop 2026-12-04T09:12:21Z
 *   host host.dat                 the host trace, relative to the folder
 *   host-events vtrace_host sched:sched_switch ...
 *   offsets tsc_offsets           vtrace_host's tsc_offsets copy (optional)
 *   tsc-khz 2596131               host TSC frequency (0: unknown)
 *   guest g1                      a guest; the guest-* lines below are its own
 *   guest-dir g1
 *   guest-pid 956
 *   guest-events sched:sched_switch ...
 *   guest-vcpu 0 idx 0 tid 301    vcpu_id, QEMU's index, host thread id
 *   guest-lost 0
 *   guest-bytes 1048576
 *   guest-status complete         or "died: ..." / "failed: ..."
 *   status complete               or "partial: ..." (some guest did not complete)
 *   end                           last line: the manifest is whole
 *
 * vtrace record writes it last, to manifest.tmp, then renames it: a
 * folder with a manifest holds a whole recording.  Unknown keys are
 * skipped (a newer vtrace may add some); a newer format version is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtrace-capture.h"
#include "vtrace-util.h"

#define MANIFEST_MAX	(1 << 20)

void vtrace_capture_free(struct vtrace_capture *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nr_guests; i++) {
		struct vtrace_capture_guest *g = &c->guests[i];

		free(g->name);
		free(g->dir);
		free(g->events);
		free(g->status);
		free(g->vcpus);
	}
	free(c->guests);
	free(c->dir);
	free(c->vtrace);
	free(c->start);
	free(c->stop);
	free(c->host);
	free(c->host_events);
	free(c->offsets);
	free(c->status);
	free(c);
}

/* A file name inside the folder: no "/", not "." or ".." */
static int plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int set_str(char **field, const char *val)
{
	free(*field);
	*field = strdup(val);
	return *field ? 0 : -1;
}

static int parse_guest_vcpu(struct vtrace_capture_guest *g, const char *val)
{
	struct vtrace_capture_vcpu v, *n;
	unsigned int id;
	int idx, tid, end = 0;

	if (sscanf(val, "%u idx %d tid %d%n", &id, &idx, &tid, &end) != 3 || val[end] ||
	    idx < -1 || tid < 0)
		return -1;
	v = (struct vtrace_capture_vcpu){ .id = id, .idx = idx, .tid = tid };
	n = realloc(g->vcpus, (g->nr_vcpus + 1) * sizeof(*n));
	if (!n)
		return -1;
	g->vcpus = n;
	g->vcpus[g->nr_vcpus++] = v;
	return 0;
}

/* A guest-* key of guest @g; 1 for a key not known */
static int parse_guest_key(struct vtrace_capture_guest *g, const char *key, const char *val)
{
	uint64_t v;

	if (!strcmp(key, "guest-dir"))
		return plain_name(val) ? set_str(&g->dir, val) : -1;
	if (!strcmp(key, "guest-events"))
		return set_str(&g->events, val);
	if (!strcmp(key, "guest-status"))
		return set_str(&g->status, val);
	if (!strcmp(key, "guest-vcpu"))
		return parse_guest_vcpu(g, val);
	if (!strcmp(key, "guest-pid")) {
		if (vtrace_parse_u64(val, &v) || v > INT_MAX)
			return -1;
		g->pid = v;
		return 0;
	}
	if (!strcmp(key, "guest-lost"))
		return vtrace_parse_u64(val, &g->lost);
	if (!strcmp(key, "guest-bytes"))
		return vtrace_parse_u64(val, &g->bytes);
	return 1;
}

static int add_guest(struct vtrace_capture *c, const char *name)
{
	struct vtrace_capture_guest *n;

	if (!plain_name(name) || strchr(name, '=') || strchr(name, ','))
		return -1;
	for (int i = 0; i < c->nr_guests; i++)
		if (!strcmp(c->guests[i].name, name))
			return -1;
	n = realloc(c->guests, (c->nr_guests + 1) * sizeof(*n));
	if (!n)
		return -1;
	c->guests = n;
	memset(&n[c->nr_guests], 0, sizeof(*n));
	n[c->nr_guests].name = strdup(name);
	return n[c->nr_guests++].name ? 0 : -1;
}

/* One "key value" line; 1 for a key not known (skipped) */
static int parse_key(struct vtrace_capture *c, const char *key, const char *val)
{
	if (!strcmp(key, "guest"))
		return add_guest(c, val);
	if (!strncmp(key, "guest-", 6))
		return c->nr_guests ? parse_guest_key(&c->guests[c->nr_guests - 1], key, val) : -1;
	if (!strcmp(key, "vtrace"))
		return set_str(&c->vtrace, val);
	if (!strcmp(key, "start"))
		return set_str(&c->start, val);
	if (!strcmp(key, "stop"))
		return set_str(&c->stop, val);
	if (!strcmp(key, "host"))
		return plain_name(val) ? set_str(&c->host, val) : -1;
	if (!strcmp(key, "host-events"))
		return set_str(&c->host_events, val);
	if (!strcmp(key, "offsets"))
		return plain_name(val) ? set_str(&c->offsets, val) : -1;
	if (!strcmp(key, "tsc-khz"))
		return vtrace_parse_u64(val, &c->tsc_khz);
	if (!strcmp(key, "status"))
		return set_str(&c->status, val);
	return 1;
}

/* The first line: "vtrace-capture N", N a version this code reads */
static int parse_version(struct vtrace_capture *c, const char *path, const char *line)
{
	uint64_t v;

	if (strncmp(line, "vtrace-capture ", 15) || vtrace_parse_u64(line + 15, &v) || !v) {
		vtrace_set_error("%s: line 1: expected \"vtrace-capture %d\" (a manifest of vtrace"
				 " record), got \"%.40s\"", path, VTRACE_CAPTURE_VERSION, line);
		return -1;
	}
	if (v > VTRACE_CAPTURE_VERSION) {
		vtrace_set_error("%s: format version %llu, this vtrace reads up to %d: use a"
				 " newer vtrace", path, (unsigned long long)v,
				 VTRACE_CAPTURE_VERSION);
		return -1;
	}
	c->version = v;
	return 0;
}

static int parse_lines(struct vtrace_capture *c, const char *path, char *text)
{
	char *save = NULL, *line;
	int nr = 0, ended = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (++nr == 1) {
			if (parse_version(c, path, line))
				return -1;
			continue;
		}
		if (ended) {
			vtrace_set_error("%s: line %d: text after the \"end\" line", path, nr);
			return -1;
		}
		if (!strcmp(line, "end")) {
			ended = 1;
			continue;
		}
		if (!sp || sp == line || !sp[1]) {
			vtrace_set_error("%s: line %d: expected \"KEY VALUE\", got \"%.40s\"", path,
					 nr, line);
			return -1;
		}
		*sp = '\0';
		if (parse_key(c, line, sp + 1) < 0) {
			vtrace_set_error("%s: line %d: %s: bad value \"%.60s\"", path, nr, line,
					 sp + 1);
			return -1;
		}
	}
	if (!ended) {
		vtrace_set_error("%s: cut short (no \"end\" line): not a whole manifest; the"
				 " recording did not finish: record again", path);
		return -1;
	}
	return 0;
}

/* What a manifest must say, and the files it names that must be there */
static int check_capture(struct vtrace_capture *c, const char *path)
{
	char *p;
	int ret;

	if (!c->host || !c->status) {
		vtrace_set_error("%s: no \"%s\" line", path, c->host ? "status" : "host");
		return -1;
	}
	if (strcmp(c->status, "complete") && strncmp(c->status, "partial:", 8)) {
		vtrace_set_error("%s: status %s: the recording failed; nothing to merge", path,
				 c->status);
		return -1;
	}
	for (int i = 0; i < c->nr_guests; i++) {
		if (!c->guests[i].dir || !c->guests[i].status) {
			vtrace_set_error("%s: guest %s: no guest-%s line", path, c->guests[i].name,
					 c->guests[i].dir ? "status" : "dir");
			return -1;
		}
	}
	p = vtrace_capture_path(c, c->host);
	ret = p && access(p, R_OK) ? -1 : 0;
	if (ret)
		vtrace_set_error("%s: its host trace %s: %s", path, p ? p : c->host,
				 strerror(errno));
	free(p);
	return ret;
}

/**
 * vtrace_capture_read - read capture folder @dir's manifest
 * @dir:	a folder written by vtrace record
 *
 * Returns the capture, or NULL with the error set: no manifest (not a
 * capture, or one whose recording did not end), a manifest cut short or of
 * a newer format, a failed recording, a host trace that is not there.
 */
struct vtrace_capture *vtrace_capture_read(const char *dir)
{
	struct vtrace_capture *c = calloc(1, sizeof(*c));
	char *path = NULL, *text = NULL;

	if (!c || asprintf(&path, "%s/manifest", dir) < 0) {
		path = NULL;
		goto error;
	}
	c->dir = strdup(dir);
	if (access(path, F_OK) && errno == ENOENT) {
		vtrace_set_error("%s: no manifest: not a capture of vtrace record, or its"
				 " recording did not end (vtrace record writes the manifest last)",
				 dir);
		goto error;
	}
	text = vtrace_read_file(path, MANIFEST_MAX, NULL);
	if (!text)
		goto error;
	if (!c->dir || parse_lines(c, path, text) || check_capture(c, path))
		goto error;
	free(text);
	free(path);
	return c;
error:
	free(text);
	free(path);
	vtrace_capture_free(c);
	return NULL;
}

/* Whether @path is a folder with a manifest (a capture, whole or not) */
int vtrace_capture_is_dir(const char *path)
{
	struct stat st;
	char *m;
	int ret;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return 0;
	if (asprintf(&m, "%s/manifest", path) < 0)
		return 0;
	ret = access(m, F_OK) == 0;
	free(m);
	return ret;
}

/* @rel inside the capture folder, malloc'ed */
char *vtrace_capture_path(const struct vtrace_capture *c, const char *rel)
{
	char *p;

	return asprintf(&p, "%s/%s", c->dir, rel) < 0 ? NULL : p;
}

/* Guest @i as vtrace-merge's --guest NAME=DIR[,pid=PID], malloc'ed */
char *vtrace_capture_guest_spec(const struct vtrace_capture *c, int i)
{
	const struct vtrace_capture_guest *g = &c->guests[i];
	char *s;
	int ret;

	if (g->pid)
		ret = asprintf(&s, "%s=%s/%s,pid=%d", g->name, c->dir, g->dir, g->pid);
	else
		ret = asprintf(&s, "%s=%s/%s", g->name, c->dir, g->dir);
	return ret < 0 ? NULL : s;
}

static void write_guest(FILE *f, const struct vtrace_capture_guest *g)
{
	fprintf(f, "guest %s\nguest-dir %s\nguest-pid %d\n", g->name, g->dir, g->pid);
	if (g->events)
		fprintf(f, "guest-events %s\n", g->events);
	for (int k = 0; k < g->nr_vcpus; k++)
		fprintf(f, "guest-vcpu %u idx %d tid %d\n", g->vcpus[k].id, g->vcpus[k].idx,
			g->vcpus[k].tid);
	fprintf(f, "guest-lost %llu\nguest-bytes %llu\nguest-status %s\n",
		(unsigned long long)g->lost, (unsigned long long)g->bytes, g->status);
}

/* A value must be one line */
static const char *one_line(const char *s)
{
	return s && *s && !strchr(s, '\n') ? s : "-";
}

/**
 * vtrace_capture_write - write @c's manifest into its folder, whole or not at all
 * @c:	the capture
 *
 * Written to DIR/manifest.tmp, flushed to the disk, then renamed to
 * DIR/manifest.  Returns 0, or -1 with the error set (a full disk says so).
 */
int vtrace_capture_write(const struct vtrace_capture *c)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	FILE *f;
	int err;

	snprintf(tmp, sizeof(tmp), "%s/manifest.tmp", c->dir);
	snprintf(path, sizeof(path), "%s/manifest", c->dir);
	f = fopen(tmp, "w");
	if (!f) {
		vtrace_set_error("%s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "vtrace-capture %d\nvtrace %s\nstart %s\nstop %s\nhost %s\nhost-events %s\n",
		VTRACE_CAPTURE_VERSION, one_line(c->vtrace), one_line(c->start),
		one_line(c->stop), c->host, one_line(c->host_events));
	if (c->offsets)
		fprintf(f, "offsets %s\n", c->offsets);
	fprintf(f, "tsc-khz %llu\n", (unsigned long long)c->tsc_khz);
	for (int i = 0; i < c->nr_guests; i++)
		write_guest(f, &c->guests[i]);
	fprintf(f, "status %s\nend\n", one_line(c->status));
	err = ferror(f) || fflush(f) || fsync(fileno(f)) ? errno : 0;
	if (fclose(f) && !err)
		err = errno;
	if (err || rename(tmp, path)) {
		vtrace_set_error("%s: %s", err ? tmp : path, strerror(err ? err : errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/**
 * vtrace_capture_guests - the --guest specs of capture @c's guests that completed
 * @c:		the capture
 * @specs:	set to a NULL-terminated array of "NAME=DIR/GDIR[,pid=PID]", malloc'ed
 *		(free each, then the array)
 *
 * A guest that did not complete (its QEMU died, its vtrace_guest refused)
 * is left out with a warning that says why.  Returns how many, or -1.
 */
int vtrace_capture_guests(const struct vtrace_capture *c, char ***specs)
{
	int n = 0;

	*specs = calloc(c->nr_guests + 1, sizeof(**specs));
	if (!*specs)
		return -1;
	for (int i = 0; i < c->nr_guests; i++) {
		if (strcmp(c->guests[i].status, "complete")) {
			vtrace_warn("%s: guest %s left out: %s", c->dir, c->guests[i].name,
				    c->guests[i].status);
			continue;
		}
		(*specs)[n] = vtrace_capture_guest_spec(c, i);
		if (!(*specs)[n++])
			return -1;
	}
	return n;
}

/* The host thread the manifest names for guest @guest's vCPU @vcpu_id, 0 when none */
int vtrace_capture_vcpu_tid(const struct vtrace_capture *c, const char *guest, uint32_t vcpu_id)
{
	for (int i = 0; i < c->nr_guests; i++) {
		if (strcmp(c->guests[i].name, guest))
			continue;
		for (int k = 0; k < c->guests[i].nr_vcpus; k++)
			if (c->guests[i].vcpus[k].id == vcpu_id)
				return c->guests[i].vcpus[k].tid;
	}
	return 0;
}
