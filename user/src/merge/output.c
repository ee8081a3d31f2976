// SPDX-License-Identifier: GPL-2.0
/* output.c: print merged events (text like trace-cmd report, or JSON lines) and --stats. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "merge-local.h"
#include "out-sched.h"
#include "vtrace-util.h"

/* One JSON line at most (see print_json) */
#define JSON_MAX	(1 << 16)

struct output {
	FILE			*out;
	const struct merge_opts	*opts;
	int			width;
	struct trace_seq	seq;
	char			*buf;
	char			*json;
	struct drawn		*drawn;		/* --format perfetto, svg */
};

struct output *output_open(FILE *out, const struct merge_opts *opts, int width)
{
	struct output *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->out = out;
	o->opts = opts;
	o->width = width;
	o->buf = malloc(1 << 20);
	o->json = malloc(JSON_MAX);
	if (!o->json) {
		free(o->buf);
		free(o);
		return NULL;
	}
	/* a big buffer for stdout; other streams (open_memstream) keep theirs */
	if (o->buf && out == stdout)
		setvbuf(out, o->buf, _IOFBF, 1 << 20);
	trace_seq_init(&o->seq);
	if (opts->format == MERGE_PERFETTO)
		o->drawn = perfetto_open(out, opts);
	else if (opts->format == MERGE_SVG)
		o->drawn = svg_open(out, opts);
	if ((opts->format == MERGE_PERFETTO || opts->format == MERGE_SVG) && !o->drawn) {
		output_close(o);
		return NULL;
	}
	return o;
}

void output_close(struct output *o)
{
	if (!o)
		return;
	if (drawn_close(o->drawn))
		vtrace_warn("%s", vtrace_last_error());
	fflush(o->out);
	if (o->out == stdout)
		setvbuf(o->out, NULL, _IOLBF, 0);
	trace_seq_destroy(&o->seq);
	free(o->buf);
	free(o->json);
	free(o);
}

static const char *comm_of(struct tep_handle *tep, int pid)
{
	const char *comm;

	if (pid == 0)
		return "<idle>";
	comm = tep_data_comm_from_pid(tep, pid);
	return comm ? comm : "<...>";
}

/* Hand-rolled formatting: printf was the largest cost of the text output */
static char *put_u64(char *p, uint64_t v, int width, char pad)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (width-- > n)
		*p++ = pad;
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* @s in a field of @width, right- or left-aligned */
static char *put_str(char *p, const char *s, size_t len, int width, bool right)
{
	int pad = width > (int)len ? width - (int)len : 0;

	if (right) {
		memset(p, ' ', pad);
		p += pad;
	}
	memcpy(p, s, len);
	p += len;
	if (!right) {
		memset(p, ' ', pad);
		p += pad;
	}
	return p;
}

static char *put_time(struct output *o, const struct source *s, char *p)
{
	uint64_t ns;

	if (o->opts->raw_tsc || !o->opts->khz)
		return put_u64(p, s->host_tsc, 20, ' ');
	ns = vtrace_tsc_to_ns(s->host_tsc, o->opts->khz);
	p = put_u64(p, ns / 1000000000, 6, ' ');
	*p++ = '.';
	return put_u64(p, ns % 1000000000, 9, '0');
}

/* "MACHINE [CPU]             COMM-PID     SEC.NSEC: EVENT:               INFO" */
static void print_text(struct output *o, struct source *s)
{
	struct tep_handle *tep = s->m->tep;
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, s->rec));
	int pid = tep_data_pid(tep, s->rec);
	const char *comm = comm_of(tep, pid);
	char line[512], *p = line, *pid_start;
	size_t len;

	p = put_str(p, s->m->name, strnlen(s->m->name, 64), o->width, false);
	memcpy(p, " [", 2);
	p = put_u64(p + 2, s->cpu, 3, '0');
	memcpy(p, "] ", 2);
	p = put_str(p + 2, comm, strnlen(comm, 64), 16, true);
	*p++ = '-';
	pid_start = p;
	if (pid < 0)
		*p++ = '-';
	p = put_u64(p, pid < 0 ? -(int64_t)pid : pid, 0, ' ');
	p = put_str(p, "", 0, 8 - (int)(p - pid_start), false);
	p = put_time(o, s, p);
	memcpy(p, ": ", 2);
	p += 2;
	if (!ev) {
		fwrite(line, 1, p - line, o->out);
		fprintf(o->out, "unknown event %d\n", tep_data_type(tep, s->rec));
		return;
	}
	len = strnlen(ev->name, 128);
	p = put_str(p, ev->name, len, 0, false);
	*p++ = ':';
	p = put_str(p, "", 0, 21 - (int)len, false);
	fwrite(line, 1, p - line, o->out);
	trace_seq_reset(&o->seq);
	tep_print_event(tep, &o->seq, s->rec, "%s", TEP_PRINT_INFO);
	while (o->seq.len && o->seq.buffer[o->seq.len - 1] == '\n')
		o->seq.len--;
	fwrite(o->seq.buffer, 1, o->seq.len, o->out);
	fputc('\n', o->out);
}

/*
 * JSON lines are built in one buffer and written with one fwrite.  An event
 * is at most a page, and no byte takes more than 6 characters ("\u00XX"), so
 * JSON_MAX bounds any line; fields that would not fit are cut short.
 */

struct jbuf {
	char	*p;
	char	*end;
};

static void j_raw(struct jbuf *j, const char *s, size_t len)
{
	if (j->end - j->p < (ptrdiff_t)len)
		len = j->end - j->p;
	memcpy(j->p, s, len);
	j->p += len;
}

#define J_LIT(j, lit)	j_raw(j, lit, sizeof(lit) - 1)

static void j_string(struct jbuf *j, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	if (j->end - j->p < 64)
		return;
	*j->p++ = '"';
	for (size_t i = 0; i < len && s[i] && j->end - j->p > 8; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			*j->p++ = '\\';
			*j->p++ = c;
		} else if (c == '\n') {
			*j->p++ = '\\';
			*j->p++ = 'n';
		} else if (c < 0x20 || c >= 0x7f) {
			memcpy(j->p, "\\u00", 4);
			j->p[4] = hex[c >> 4];
			j->p[5] = hex[c & 15];
			j->p += 6;
		} else {
			*j->p++ = c;
		}
	}
	*j->p++ = '"';
}

static void j_u64(struct jbuf *j, uint64_t v)
{
	if (j->end - j->p >= 24)
		j->p = put_u64(j->p, v, 0, ' ');
}

static void j_s64(struct jbuf *j, int64_t v)
{
	if (j->end - j->p < 24)
		return;
	if (v < 0) {
		*j->p++ = '-';
		j->p = put_u64(j->p, -(uint64_t)v, 0, ' ');
	} else {
		j->p = put_u64(j->p, v, 0, ' ');
	}
}

static uint64_t read_num(const void *p, int size, bool is_signed)
{
	switch (size) {
	case 1: return is_signed ? (uint64_t)(int64_t)*(const int8_t *)p : *(const uint8_t *)p;
	case 2: { int16_t v; memcpy(&v, p, 2);
		  return is_signed ? (uint64_t)(int64_t)v : (uint16_t)v; }
	case 4: { int32_t v; memcpy(&v, p, 4);
		  return is_signed ? (uint64_t)(int64_t)v : (uint32_t)v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static void j_number(struct jbuf *j, const void *p, int size, bool is_signed)
{
	uint64_t v = read_num(p, size, is_signed);

	if (is_signed)
		j_s64(j, (int64_t)v);
	else
		j_u64(j, v);
}

static void j_array(struct jbuf *j, const char *p, int len, int esize, bool is_signed)
{
	if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
		esize = 1;
	J_LIT(j, "[");
	for (int i = 0; i + esize <= len; i += esize) {
		if (i)
			J_LIT(j, ",");
		j_number(j, p + i, esize, is_signed);
	}
	J_LIT(j, "]");
}

/* One field's value; anything outside the record prints as null */
static void j_field(struct jbuf *j, struct tep_format_field *f, const struct tep_record *rec)
{
	const char *data = rec->data;
	bool sgn = f->flags & TEP_FIELD_IS_SIGNED;
	int off = f->offset, len = f->size;

	/* a flexible array ("char buf[]", size 0) runs to the end of the record */
	if (!len && !(f->flags & TEP_FIELD_IS_DYNAMIC))
		len = rec->size - off;
	if (off < 0 || len < 0 || off + len > rec->size) {
		J_LIT(j, "null");
		return;
	}
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		uint32_t v = read_num(data + off, 4, false);

		len = v >> 16;
		off = (v & 0xffff) + (f->flags & TEP_FIELD_IS_RELATIVE ? off + f->size : 0);
		if (off + len > rec->size) {
			J_LIT(j, "null");
			return;
		}
	}
	if (f->flags & TEP_FIELD_IS_STRING)
		j_string(j, data + off, len);
	else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
		j_array(j, data + off, len, f->elementsize, sgn);
	else if (len == 1 || len == 2 || len == 4 || len == 8)
		j_number(j, data + off, len, sgn);
	else
		j_array(j, data + off, len, 1, false);
}

static void print_json(struct output *o, struct source *s)
{
	struct tep_handle *tep = s->m->tep;
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, s->rec));
	int pid = tep_data_pid(tep, s->rec);
	const char *comm = comm_of(tep, pid);
	struct jbuf j = { o->json, o->json + JSON_MAX - 8 };

	J_LIT(&j, "{\"machine\":");
	j_string(&j, s->m->name, strlen(s->m->name));
	J_LIT(&j, ",\"cpu\":");
	j_u64(&j, s->cpu);
	J_LIT(&j, ",\"host_ns\":");
	if (o->opts->khz)
		j_u64(&j, vtrace_tsc_to_ns(s->host_tsc, o->opts->khz));
	else
		J_LIT(&j, "null");
	J_LIT(&j, ",\"host_tsc\":");
	j_u64(&j, s->host_tsc);
	J_LIT(&j, ",\"guest_tsc\":");
	if (s->m->guest)
		j_u64(&j, s->rec->ts);
	else
		J_LIT(&j, "null");
	J_LIT(&j, ",\"system\":");
	j_string(&j, ev ? ev->system : "?", ev ? strlen(ev->system) : 1);
	J_LIT(&j, ",\"event\":");
	j_string(&j, ev ? ev->name : "?", ev ? strlen(ev->name) : 1);
	J_LIT(&j, ",\"pid\":");
	j_s64(&j, pid);
	J_LIT(&j, ",\"comm\":");
	j_string(&j, comm, strlen(comm));
	J_LIT(&j, ",\"fields\":{");
	for (struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next) {
		j_string(&j, f->name, strlen(f->name));
		J_LIT(&j, ":");
		j_field(&j, f, s->rec);
		if (f->next)
			J_LIT(&j, ",");
	}
	/* room for the closing was kept out of j.end */
	memcpy(j.p, "}}\n", 3);
	fwrite(o->json, 1, j.p + 3 - o->json, o->out);
}

void output_event(struct output *o, struct source *s)
{
	if (o->drawn)
		drawn_event(o->drawn, s);
	else if (o->opts->format == MERGE_JSONL)
		print_json(o, s);
	else
		print_text(o, s);
}

static void print_range(FILE *out, const struct source *s, const struct merge_opts *opts)
{
	char buf[64];

	if (!s->printed)
		snprintf(buf, sizeof(buf), "-");
	else if (opts->raw_tsc || !opts->khz)
		snprintf(buf, sizeof(buf), "%" PRIu64 "-%" PRIu64, s->first_tsc, s->last_tsc);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64 "-%" PRIu64 ".%06" PRIu64,
			 s->first_ns / 1000000000, s->first_ns % 1000000000 / 1000,
			 s->last_ns / 1000000000, s->last_ns % 1000000000 / 1000);
	fprintf(out, " %-25s", buf);
}

static void print_intervals(FILE *out, const struct source *s)
{
	const struct vtrace_tsc_map *map = &s->map;

	if (!s->m->guest) {
		fprintf(out, " %-16s", "(host)");
	} else if (!map->hist || map->first_used == SIZE_MAX) {
		fprintf(out, " %-16s", "-");
	} else {
		char buf[64];

		snprintf(buf, sizeof(buf), "%zu:seq%llu..%llu", map->last_used - map->first_used + 1,
			 (unsigned long long)map->hist->iv[map->first_used].seq,
			 (unsigned long long)map->hist->iv[map->last_used].seq);
		fprintf(out, " %-16s", buf);
	}
}

/* Page counters vs the guest's own EOS counters: they must agree */
static void print_checks(FILE *out, const struct source *s)
{
	const struct vtrace_cpu_counts *c = s->reader ? vtrace_cpu_reader_counts(s->reader) : NULL;
	const struct vtrace_cpu_stats *eos = s->m->dump ? vtrace_dump_eos(s->m->dump, s->cpu) : NULL;

	if (s->map.backwards)
		fprintf(out, " tsc-backwards=%llu", (unsigned long long)s->map.backwards);
	if (s->map.extrapolated)
		fprintf(out, " extrapolated=%llu", (unsigned long long)s->map.extrapolated);
	if (s->out_of_order)
		fprintf(out, " host-time-backwards=%llu", (unsigned long long)s->out_of_order);
	if (c && c->truncated)
		fprintf(out, " truncated-bytes=%llu", (unsigned long long)c->truncated);
	if (!s->m->dump)
		return;
	if (!eos) {
		fputs(" no-EOS", out);
		return;
	}
	if (eos->events_sent != c->events)
		fprintf(out, " MISMATCH:eos-events=%llu", (unsigned long long)eos->events_sent);
	if (eos->fillers_sent != c->fillers)
		fprintf(out, " MISMATCH:eos-fillers=%llu", (unsigned long long)eos->fillers_sent);
	if (eos->pages_sent * 1 != c->pages && eos->pages_sent)
		fprintf(out, " MISMATCH:eos-pages=%llu", (unsigned long long)eos->pages_sent);
}

static void stats_line(FILE *out, const struct source *s, int width, const struct merge_opts *o)
{
	const struct vtrace_cpu_counts *c = s->reader ? vtrace_cpu_reader_counts(s->reader) : NULL;
	const struct vtrace_cpu_stats *eos = s->m->dump ? vtrace_dump_eos(s->m->dump, s->cpu) : NULL;
	uint64_t lost_pages = c ? c->missed : s->missed;
	uint64_t lost_eos = eos ? eos->events_lost_ring + eos->events_lost_port : 0;

	fprintf(out, "%-*s %3d %10" PRIu64 " %10" PRIu64 " %7" PRIu64 " %9" PRIu64 "%s %9" PRIu64
		" %5" PRIu64, width, s->m->name, s->cpu, s->read, s->printed, s->fillers,
		lost_pages, c && c->missed_unknown ? "+" : " ", lost_eos,
		c ? c->bad_pages : 0);
	print_range(out, s, o);
	print_intervals(out, s);
	print_checks(out, s);
	fputc('\n', out);
}

void output_stats(FILE *out, struct machine **machines, int nr, const struct merge_opts *opts)
{
	int width = 7;

	for (int i = 0; i < nr; i++)
		if ((int)strlen(machines[i]->name) > width)
			width = strlen(machines[i]->name);
	fprintf(out, "%-*s %3s %10s %10s %7s %10s %9s %5s %-25s %-16s %s\n", width, "machine", "cpu",
		"read", "printed", "fillers", "lost-page", "lost-eos", "bad",
		opts->raw_tsc || !opts->khz ? "host TSC range" : "time range (s)",
		"intervals", "checks");
	for (int i = 0; i < nr; i++)
		for (int c = 0; c < machines[i]->nr_cpus; c++)
			stats_line(out, &machines[i]->cpus[c], width, opts);
}
