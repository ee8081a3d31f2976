// SPDX-License-Identifier: GPL-2.0
/* dat-guest.c: vtrace dat: a guest capture as a trace.dat: metadata, TIME_SHIFT, pages. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "dat-local.h"
#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"
#include "vtrace-proto.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

/* ---- the guest's metadata */

static int keep_file(struct dat *d, const struct vtrace_msg *msg)
{
	const struct vtrace_meta_file *mf;
	struct meta *n;
	const char *name;
	const void *data;

	if (vtrace_msg_meta_file(msg, &mf, &name, &data))
		return -1;
	n = realloc(d->files, (d->nr_files + 1) * sizeof(*n));
	if (!n)
		return -1;
	d->files = n;
	n = &d->files[d->nr_files];
	n->kind = mf->kind;
	n->len = mf->data_len;
	n->name = strdup(name);
	n->data = malloc(mf->data_len ? mf->data_len : 1);
	if (!n->name || !n->data) {
		free(n->name);
		free(n->data);
		return -1;
	}
	memcpy(n->data, data, mf->data_len);
	d->nr_files++;
	return 0;
}

/* META_FILE messages of the first session, as vtrace_dump_open() uses them */
int dat_read_meta(struct dat *d)
{
	char path[PATH_MAX];
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	int infos = 0, ret;

	snprintf(path, sizeof(path), "%s/ctl", d->dir);
	p = vtrace_proto_open_file(path);
	if (!p)
		return -1;
	while ((ret = vtrace_proto_read(p, &msg)) > 0) {
		if (msg.hdr.type == VTRACE_MSG_META_INFO)
			infos++;
		if (msg.hdr.type == VTRACE_MSG_META_FILE && infos == 1 && keep_file(d, &msg)) {
			vtrace_msg_release(&msg);
			vtrace_proto_close(p);
			vtrace_set_error("%s: out of memory", path);
			return -1;
		}
		vtrace_msg_release(&msg);
	}
	if (ret < 0)
		vtrace_set_error("%s", vtrace_proto_error(p));
	vtrace_proto_close(p);
	return ret;
}

static const struct meta *find_meta(struct dat *d, unsigned int kind)
{
	for (int i = 0; i < d->nr_files; i++)
		if (d->files[i].kind == kind)
			return &d->files[i];
	return NULL;
}

static void put_sized(FILE *f, const struct meta *m, int size_bytes)
{
	put_le(f, m ? m->len : 0, size_bytes);
	if (m)
		fwrite(m->data, 1, m->len, f);
}

static void put_text(FILE *f, const char *text, int size_bytes)
{
	size_t len = text ? strlen(text) : 0;

	put_le(f, len, size_bytes);
	if (len)
		fwrite(text, 1, len, f);
}

/* "system/event" is in @system */
static bool in_system(const char *name, const char *system)
{
	const char *slash = strchr(name, '/');

	return slash && !strncmp(name, system, slash - name) && !system[slash - name];
}

static int count_kind(struct dat *d, unsigned int kind, const char *system)
{
	int n = 0;

	for (int i = 0; i < d->nr_files; i++)
		if (d->files[i].kind == kind && (!system || in_system(d->files[i].name, system)))
			n++;
	return n;
}

/* Event systems in order of first appearance, each with its format files */
static void put_systems(struct dat *d, FILE *f)
{
	char **seen = calloc(d->nr_files + 1, sizeof(*seen));
	int nr = 0;

	for (int i = 0; seen && i < d->nr_files; i++) {
		const char *name = d->files[i].name, *slash = strchr(name, '/');
		int k;

		if (d->files[i].kind != VTRACE_META_EVENT_FORMAT || !slash)
			continue;
		for (k = 0; k < nr && (strncmp(seen[k], name, slash - name) ||
				       seen[k][slash - name]); k++)
			;
		if (k == nr)
			seen[nr++] = strndup(name, slash - name);
	}
	put_le(f, nr, 4);
	for (int k = 0; k < nr; k++) {
		put_str0(f, seen[k] ? seen[k] : "");
		put_le(f, count_kind(d, VTRACE_META_EVENT_FORMAT, seen[k]), 4);
		for (int i = 0; i < d->nr_files; i++)
			if (d->files[i].kind == VTRACE_META_EVENT_FORMAT && seen[k] &&
			    in_system(d->files[i].name, seen[k]))
				put_sized(f, &d->files[i], 8);
		free(seen[k]);
	}
	free(seen);
}

/* ---- TIME_SHIFT: every interval of every guest CPU's vCPU */

/*
 * The intervals CPU @cpu's events fall in, as vtrace-merge converts them:
 * only those go into TIME_SHIFT.  An offset history also holds what came
 * before the trace (the firmware's TSC reset at boot puts the guest TSC
 * back to 0), and trace-cmd, which looks samples up by guest time, would
 * take those older samples for the trace's events.
 */
struct used {
	struct dat		*d;
	int			cpu;
	struct vtrace_tsc_map	map;
};

static int used_event(void *priv, const struct tep_record *rec, const uint64_t *host)
{
	struct used *u = priv;
	struct dat *d = u->d;

	if (!host) {
		/* vtrace-merge's refusal: trace-cmd would misplace it silently */
		vtrace_tsc_map_refused(&u->map, d->name, u->cpu, d->dir, rec->ts, rec->offset);
		return -1;
	}
	if (*host < d->host_lo)
		d->host_lo = *host;
	if (*host > d->host_hi)
		d->host_hi = *host;
	return 0;
}

int dat_used_intervals(struct dat *d, int cpu)
{
	struct used u = { .d = d, .cpu = cpu };
	struct vtrace_tsc_map *map = &u.map;

	vtrace_tsc_map_init(map, d->hist[cpu], d->assume_constant);
	if (vtrace_dump_cpu_host(d->dump, cpu, map, used_event, &u))
		return -1;
	if (map->ambiguous)
		dat_warn("guest %s cpu %d: %" PRIu64 " events read a guest TSC that two offset"
			 " intervals map (the offset was set back): trace-cmd's TIME_SHIFT picks an"
			 " interval by guest time alone, which may be wrong, and neither trace-cmd report"
			 " nor KernelShark can mark them; vtrace-merge marks those the host's"
			 " kvm_entry..kvm_exit do not tell apart \"[time ambiguous]\"", d->name, cpu,
			 map->ambiguous);
	d->first[cpu] = map->first_used == SIZE_MAX ? d->hist[cpu]->nr - 1 : map->first_used;
	d->last[cpu] = map->first_used == SIZE_MAX ? d->hist[cpu]->nr - 1 : map->last_used;
	return 0;
}

int dat_check_history(struct dat *d, int cpu)
{
	const struct vtrace_vcpu_history *h = d->hist[cpu];
	uint64_t prev = 0;

	for (size_t i = d->first[cpu]; i <= d->last[cpu]; i++) {
		const struct vtrace_tsc_interval *iv = &h->iv[i];
		uint64_t start = vtrace_tsc_guest(iv, iv->host_tsc);

		if (iv->mult != 1ULL << iv->frac) {
			vtrace_set_error("guest %s cpu %d: record %" PRIu64 " scales the TSC"
					 " (multiplier %" PRIu64 ", %u fraction bits): trace-cmd's"
					 " TIME_SHIFT cannot convert it exactly", d->name, cpu,
					 iv->seq, iv->mult, iv->frac);
			return -1;
		}
		if (i > d->first[cpu] && start < prev)
			dat_warn("guest %s cpu %d: the guest TSC went back at record %" PRIu64
				    ": trace-cmd maps by guest time and misplaces the events of"
				    " the overlap (vtrace-merge does not)", d->name, cpu, iv->seq);
		prev = start;
	}
	return 0;
}

static void put_time_shift(struct dat *d, FILE *f)
{
	int cpus = d->info->nr_cpus;

	put_le(f, d->host_id, 8);
	put_le(f, 0, 4);		/* flags: no interpolation */
	put_le(f, cpus, 4);
	for (int c = 0; c < cpus; c++) {
		const struct vtrace_tsc_interval *iv = d->hist[c]->iv + d->first[c];
		size_t n = d->last[c] - d->first[c] + 1;

		put_le(f, n + 1, 4);
		for (size_t i = 0; i < n; i++)
			put_le(f, vtrace_tsc_guest(&iv[i], iv[i].host_tsc), 8);
		put_le(f, INT64_MAX, 8);
		for (size_t i = 0; i <= n; i++)
			put_le(f, -iv[i < n ? i : n - 1].offset, 8);
		for (size_t i = 0; i <= n; i++)
			put_le(f, 1, 8);
	}
	for (int c = 0; c < cpus; c++)
		for (size_t i = d->first[c]; i <= d->last[c] + 1; i++)
			put_le(f, 0, 8);
}

/* ---- TSC2NSEC and OFFSET: the host TSC in nanoseconds, vtrace-merge's seconds */

/*
 * trace-cmd turns a time stamp (the guest's after TIME_SHIFT) into ns with
 * mul_u64_u32_shr(ts, mult, shift) = (ts * mult) >> shift, then adds the
 * OFFSET option's ns; TSC2NSEC's own offset (8 bytes) is unused by 3.1 and
 * written 0.  trace-cmd 3.1 keeps mult in an int, so it must stay below
 * 2^31, and shifts by 32 - shift, so shift is at most 32: the largest
 * shift whose rounded mult fits.  That slope is off vtrace-merge's
 * 10^6 / khz by up to 0.5 / mult of the time (2.3e-10 at 2.5 GHz: 28 ns at
 * a TSC of 300e9), so OFFSET puts the guests' first event exactly on
 * vtrace-merge's ns and the difference grows from there.
 */
void dat_tsc2nsec(uint64_t khz, uint32_t *mult, uint32_t *shift)
{
	for (int s = 32; s >= 0; s--) {
		unsigned __int128 m = (((unsigned __int128)1000000 << s) + khz / 2) / khz;

		if (m && m <= INT32_MAX) {
			*mult = m;
			*shift = s;
			return;
		}
	}
	*mult = 0;
}

/* trace-cmd's mul_u64_u32_shr(), exact for the mult and shift dat_tsc2nsec() gives */
static uint64_t tsc2nsec_ns(uint64_t tsc, uint32_t mult, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)tsc * mult) >> shift);
}

/* OFFSET and the largest difference to vtrace-merge over the guests' events */
void dat_tsc2nsec_anchor(struct dat *gs, int nr)
{
	uint64_t lo = UINT64_MAX, hi = 0, khz = gs[0].khz;
	uint32_t mult = gs[0].ns_mult, shift = gs[0].ns_shift;
	unsigned __int128 a, b, err;
	int64_t off;

	for (int i = 0; i < nr; i++) {
		lo = gs[i].host_lo < lo ? gs[i].host_lo : lo;
		hi = gs[i].host_hi > hi ? gs[i].host_hi : hi;
	}
	if (lo > hi)
		lo = hi = 0;
	off = (int64_t)(vtrace_tsc_to_ns(lo, khz) - tsc2nsec_ns(lo, mult, shift));
	/* |mult / 2^shift - 10^6 / khz| * (hi - lo), rounded up, + 1 for the floors */
	a = (unsigned __int128)mult * khz;
	b = (unsigned __int128)1000000 << shift;
	err = ((a > b ? a - b : b - a) * (hi - lo) + ((unsigned __int128)khz << shift) - 1) /
	      ((unsigned __int128)khz << shift);
	for (int i = 0; i < nr; i++) {
		gs[i].ns_offset = off;
		gs[i].ns_error = (uint64_t)err + 1;
	}
}

void dat_put_tsc2nsec(const struct dat *d, FILE *f)
{
	char text[32];

	if (!d->ns_mult)
		return;
	put_le(f, OPT_TSC2NSEC, 2);
	put_le(f, 16, 4);
	put_le(f, d->ns_mult, 4);
	put_le(f, d->ns_shift, 4);
	put_le(f, 0, 8);
	snprintf(text, sizeof(text), "%" PRId64, d->ns_offset);
	put_option_str(f, OPT_OFFSET, text);
}

static void put_options(struct dat *d, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	char uname[sizeof(d->info->hostname) + sizeof(d->info->release) + 32];

	put_option_str(f, OPT_TRACECLOCK, "[x86-tsc]\n");
	snprintf(uname, sizeof(uname), "Linux %s %s x86_64", d->info->hostname, d->info->release);
	put_option_str(f, OPT_UNAME, uname);
	m = open_memstream(&buf, &len);
	if (m) {
		put_le(m, d->info->nr_cpus, 4);
		fclose(m);
		put_option(f, OPT_CPUCOUNT, buf, len);
		free(buf);
	}
	put_option_str(f, OPT_VERSION, "vtrace dat");
	m = open_memstream(&buf, &len);
	if (m) {
		put_le(m, d->guest_id, 8);
		fclose(m);
		put_option(f, OPT_TRACEID, buf, len);
		free(buf);
	}
	m = open_memstream(&buf, &len);
	if (m) {
		put_time_shift(d, m);
		fclose(m);
		put_option(f, OPT_TIME_SHIFT, buf, len);
		free(buf);
	}
	dat_put_tsc2nsec(d, f);
	put_le(f, OPT_DONE, 2);
}

/* Everything before the CPU data, with the flyrecord table for @sizes */
static int put_header(struct dat *d, FILE *f, const uint64_t *sizes, uint64_t data_start)
{
	int cpus = d->info->nr_cpus;
	uint64_t at = data_start;

	fwrite("\x17\x08\x44tracing6", 1, 11, f);
	fputc(0, f);
	fputc(0, f);				/* little endian */
	fputc(d->info->long_size ? d->info->long_size : 8, f);
	put_le(f, d->info->page_size, 4);
	fwrite("header_page", 1, 12, f);
	put_sized(f, find_meta(d, VTRACE_META_HEADER_PAGE), 8);
	fwrite("header_event", 1, 13, f);
	put_sized(f, find_meta(d, VTRACE_META_HEADER_EVENT), 8);
	put_le(f, count_kind(d, VTRACE_META_FTRACE_FORMAT, NULL), 4);
	for (int i = 0; i < d->nr_files; i++)
		if (d->files[i].kind == VTRACE_META_FTRACE_FORMAT)
			put_sized(f, &d->files[i], 8);
	put_systems(d, f);
	put_sized(f, find_meta(d, VTRACE_META_KALLSYMS), 4);
	/* as the dump reader filtered it: trace-cmd reads the same lines out of bounds */
	put_text(f, vtrace_dump_printk_formats(d->dump), 4);
	put_sized(f, find_meta(d, VTRACE_META_CMDLINES), 8);
	put_le(f, cpus, 4);
	fwrite("options  ", 1, 10, f);
	put_options(d, f);
	fwrite("flyrecord", 1, 10, f);
	for (int c = 0; c < cpus; c++) {
		put_le(f, sizes[c] ? at : 0, 8);
		put_le(f, sizes[c], 8);
		at += sizes[c];
	}
	return ferror(f) ? -1 : 0;
}

/* Whole pages of DIR/cpuK (a cut last page is left out) */
static uint64_t cpu_bytes(struct dat *d, int cpu)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/cpu%d", d->dir, cpu);
	if (stat(path, &st))
		return 0;
	return st.st_size / d->info->page_size * d->info->page_size;
}

static int copy_bytes(FILE *out, const char *path, uint64_t len)
{
	FILE *in = fopen(path, "r");
	char buf[65536];

	if (!in) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	while (len) {
		size_t n = fread(buf, 1, len < sizeof(buf) ? len : sizeof(buf), in);

		if (!n || fwrite(buf, 1, n, out) != n)
			break;
		len -= n;
	}
	fclose(in);
	if (len) {
		vtrace_set_error("%s: short read or write", path);
		return -1;
	}
	return 0;
}

int dat_write_guest(struct dat *d, const char *path)
{
	int cpus = d->info->nr_cpus;
	uint64_t *sizes = calloc(cpus, sizeof(*sizes)), start, page = d->info->page_size;
	char *head = NULL, cpath[PATH_MAX];
	size_t head_len = 0;
	FILE *m, *out = NULL;
	int ret = -1;

	if (!sizes)
		return -1;
	for (int c = 0; c < cpus; c++)
		sizes[c] = cpu_bytes(d, c);
	/* the header's length does not depend on the offsets in it */
	m = open_memstream(&head, &head_len);
	if (!m || put_header(d, m, sizes, 0) || fclose(m))
		goto error;
	start = (head_len + page - 1) / page * page;
	free(head);
	head = NULL;
	m = open_memstream(&head, &head_len);
	if (!m || put_header(d, m, sizes, start) || fclose(m))
		goto error;
	out = fopen(path, "w");
	if (!out) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		goto error;
	}
	fwrite(head, 1, head_len, out);
	for (uint64_t i = head_len; i < start; i++)
		fputc(0, out);
	for (int c = 0; c < cpus; c++) {
		snprintf(cpath, sizeof(cpath), "%s/cpu%d", d->dir, c);
		if (sizes[c] && copy_bytes(out, cpath, sizes[c]))
			goto error;
	}
	ret = 0;
error:
	if (out && fclose(out) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	free(head);
	free(sizes);
	return ret;
}
