// SPDX-License-Identifier: GPL-2.0
/* output.c: print merged events (text like trace-cmd report, or JSON lines) and --stats. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "merge-local.h"
#include "vtrace-util.h"

struct output {
	FILE			*out;
	const struct merge_opts	*opts;
	int			width;
	struct trace_seq	seq;
	char			*buf;
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
	if (o->buf)
		setvbuf(out, o->buf, _IOFBF, 1 << 20);
	trace_seq_init(&o->seq);
	return o;
}

void output_close(struct output *o)
{
	if (!o)
		return;
	fflush(o->out);
	setvbuf(o->out, NULL, _IOLBF, 0);
	trace_seq_destroy(&o->seq);
	free(o->buf);
	free(o);
}

static void print_time(struct output *o, const struct source *s)
{
	uint64_t ns;

	if (o->opts->raw_tsc || !o->opts->khz) {
		fprintf(o->out, "%20" PRIu64, s->host_tsc);
		return;
	}
	ns = vtrace_tsc_to_ns(s->host_tsc, o->opts->khz);
	fprintf(o->out, "%6" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

static const char *comm_of(struct tep_handle *tep, int pid)
{
	const char *comm;

	if (pid == 0)
		return "<idle>";
	comm = tep_data_comm_from_pid(tep, pid);
	return comm ? comm : "<...>";
}

static void print_text(struct output *o, struct source *s)
{
	struct tep_handle *tep = s->m->tep;
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, s->rec));
	int pid = tep_data_pid(tep, s->rec);

	fprintf(o->out, "%-*s [%03d] %16s-%-7d ", o->width, s->m->name, s->cpu,
		comm_of(tep, pid), pid);
	print_time(o, s);
	if (!ev) {
		fprintf(o->out, ": unknown event %d\n", tep_data_type(tep, s->rec));
		return;
	}
	trace_seq_reset(&o->seq);
	tep_print_event(tep, &o->seq, s->rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&o->seq);
	while (o->seq.len && o->seq.buffer[o->seq.len - 1] == '\n')
		o->seq.buffer[--o->seq.len] = '\0';
	fprintf(o->out, ": %s:%*s %s\n", ev->name, (int)(20 - strlen(ev->name)), "",
		o->seq.buffer);
}

static void json_string(FILE *out, const char *s, size_t len)
{
	fputc('"', out);
	for (size_t i = 0; i < len && s[i]; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
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

static void json_number(FILE *out, const void *p, int size, bool is_signed)
{
	uint64_t v = read_num(p, size, is_signed);

	if (is_signed)
		fprintf(out, "%" PRId64, (int64_t)v);
	else
		fprintf(out, "%" PRIu64, v);
}

static void json_array(FILE *out, const char *p, int len, int esize, bool is_signed)
{
	if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
		esize = 1;
	fputc('[', out);
	for (int i = 0; i + esize <= len; i += esize) {
		if (i)
			fputc(',', out);
		json_number(out, p + i, esize, is_signed);
	}
	fputc(']', out);
}

/* One field's value; anything outside the record prints as null */
static void json_field(FILE *out, struct tep_format_field *f, const struct tep_record *rec)
{
	const char *data = rec->data;
	bool sgn = f->flags & TEP_FIELD_IS_SIGNED;
	int off = f->offset, len = f->size;

	/* a flexible array ("char buf[]", size 0) runs to the end of the record */
	if (!len && !(f->flags & TEP_FIELD_IS_DYNAMIC))
		len = rec->size - off;
	if (off < 0 || len < 0 || off + len > rec->size) {
		fputs("null", out);
		return;
	}
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		uint32_t v = read_num(data + off, 4, false);

		len = v >> 16;
		off = (v & 0xffff) + (f->flags & TEP_FIELD_IS_RELATIVE ? off + f->size : 0);
		if (off + len > rec->size) {
			fputs("null", out);
			return;
		}
	}
	if (f->flags & TEP_FIELD_IS_STRING)
		json_string(out, data + off, len);
	else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
		json_array(out, data + off, len, f->elementsize, sgn);
	else if (len == 1 || len == 2 || len == 4 || len == 8)
		json_number(out, data + off, len, sgn);
	else
		json_array(out, data + off, len, 1, false);
}

static void print_json(struct output *o, struct source *s)
{
	struct tep_handle *tep = s->m->tep;
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, s->rec));
	int pid = tep_data_pid(tep, s->rec);
	const char *comm = comm_of(tep, pid);
	FILE *out = o->out;

	fputs("{\"machine\":", out);
	json_string(out, s->m->name, strlen(s->m->name));
	fprintf(out, ",\"cpu\":%d,\"ns\":", s->cpu);
	if (o->opts->khz)
		fprintf(out, "%" PRIu64, vtrace_tsc_to_ns(s->host_tsc, o->opts->khz));
	else
		fputs("null", out);
	fprintf(out, ",\"tsc\":%" PRIu64 ",\"guest_ts\":", s->host_tsc);
	if (s->m->guest)
		fprintf(out, "%llu", s->rec->ts);
	else
		fputs("null", out);
	fputs(",\"system\":", out);
	json_string(out, ev ? ev->system : "?", ev ? strlen(ev->system) : 1);
	fputs(",\"event\":", out);
	json_string(out, ev ? ev->name : "?", ev ? strlen(ev->name) : 1);
	fprintf(out, ",\"pid\":%d,\"comm\":", pid);
	json_string(out, comm, strlen(comm));
	fputs(",\"fields\":{", out);
	for (struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next) {
		json_string(out, f->name, strlen(f->name));
		fputc(':', out);
		json_field(out, f, s->rec);
		if (f->next)
			fputc(',', out);
	}
	fputs("}}\n", out);
}

void output_event(struct output *o, struct source *s)
{
	if (o->opts->format == MERGE_JSONL)
		print_json(o, s);
	else
		print_text(o, s);
}

static void print_range(FILE *out, const struct source *s, const struct merge_opts *opts)
{
	if (!s->printed) {
		fprintf(out, " %27s", "-");
		return;
	}
	if (opts->raw_tsc || !opts->khz)
		fprintf(out, " %13" PRIu64 "..%-13" PRIu64, s->first_tsc, s->last_tsc);
	else
		fprintf(out, " %6" PRIu64 ".%06" PRIu64 "..%6" PRIu64 ".%06" PRIu64,
			s->first_ns / 1000000000, s->first_ns % 1000000000 / 1000,
			s->last_ns / 1000000000, s->last_ns % 1000000000 / 1000);
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
	fprintf(out, "%-*s %3s %10s %10s %7s %10s %9s %5s %27s %-16s %s\n", width, "machine", "cpu",
		"read", "printed", "fillers", "lost-page", "lost-eos", "bad", "time range (s)",
		"intervals", "checks");
	for (int i = 0; i < nr; i++)
		for (int c = 0; c < machines[i]->nr_cpus; c++)
			stats_line(out, &machines[i]->cpus[c], width, opts);
}
