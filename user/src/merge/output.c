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
/* Text lines are gathered here and written in chunks of about this size */
#define TEXT_BUF	(1 << 20)
/* Room kept for one line's prefix (machine, CPU, task, time, event name) besides the name's width */
#define PREFIX_MAX	512

/*
 * What the text prefix needs of a machine, looked up once: by event id the
 * event and its "name:" column, by pid (hashed) the "comm-pid" column.  A pid
 * is cached only once libtraceevent knows its comm (which it never changes:
 * tep_register_comm() keeps the first), so a task named later by the
 * sched_switch plugin is printed as trace-cmd report prints it.
 */
#define COMM_SLOTS	1024
#define COMM_COL	80	/* comm (at most 64, strnlen) + '-' + pid, padded */
#define NAME_COL	152	/* an event name (at most 128, strnlen) + ':' + padding */

struct comm_slot {
	int		pid;
	unsigned char	len;		/* 0: empty */
	char		col[COMM_COL];
};

struct event_slot {
	struct tep_event	*ev;		/* NULL: not looked up yet */
	unsigned char		len;
	char			col[NAME_COL];
};

struct text_cache {
	struct tep_handle	*tep;
	bool			direct;		/* common_type/pid read in place */
	int			type_offset;
	int			pid_offset;
	int			nr_ids;
	struct event_slot	*ids;		/* 0 .. the highest id in the metadata */
	struct comm_slot	comms[COMM_SLOTS];
};

struct output {
	FILE			*out;
	const struct merge_opts	*opts;
	int			width;
	struct trace_seq	seq;
	char			*json;
	char			*text;		/* TEXT_BUF: lines not yet written */
	size_t			text_len;
	struct text_cache	**cache;	/* by machine index (text output) */
	int			nr_cache;
	struct drawn		*drawn;		/* --format perfetto, svg */
	const char *const	*verdict;	/* the self-check's, published at its end */
	bool			finished;
};

/*
 * common_type (u16) and common_pid (s32) read in place when the trace has
 * the host's byte order, else through libtraceevent (tep_data_type/pid).
 */
static void find_common(struct text_cache *c, struct tep_event *ev)
{
	struct tep_format_field *type = tep_find_common_field(ev, "common_type");
	struct tep_format_field *pid = tep_find_common_field(ev, "common_pid");

	c->direct = type && pid && type->size == 2 && pid->size == 4 &&
		    type->offset >= 0 && pid->offset >= 0 &&
		    tep_is_file_bigendian(c->tep) == tep_is_local_bigendian(c->tep);
	if (c->direct) {
		c->type_offset = type->offset;
		c->pid_offset = pid->offset;
	}
}

static struct text_cache *cache_new(struct tep_handle *tep)
{
	struct tep_event **evs = tep_list_events(tep, TEP_EVENT_SORT_ID);
	int n = tep_get_events_count(tep), max = -1;
	struct text_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	for (int i = 0; evs && i < n; i++)
		if (evs[i]->id > max && evs[i]->id <= VTRACE_EVENT_ID_MAX)
			max = evs[i]->id;
	c->tep = tep;
	if (evs && n > 0)
		find_common(c, evs[0]);
	c->nr_ids = max + 1;
	c->ids = calloc(c->nr_ids + 1, sizeof(*c->ids));
	if (!c->ids) {
		free(c);
		return NULL;
	}
	return c;
}

static int data_type(const struct text_cache *c, struct tep_record *rec)
{
	uint16_t v;

	if (!c->direct)
		return tep_data_type(c->tep, rec);
	memcpy(&v, (char *)rec->data + c->type_offset, sizeof(v));
	return v;
}

static int data_pid(const struct text_cache *c, struct tep_record *rec)
{
	int32_t v;

	if (!c->direct)
		return tep_data_pid(c->tep, rec);
	memcpy(&v, (char *)rec->data + c->pid_offset, sizeof(v));
	return v;
}

/* Text output: a text_cache per machine, at its index */
static int caches_open(struct output *o, struct machine **machines, int nr)
{
	o->cache = calloc(nr, sizeof(*o->cache));
	if (!o->cache)
		return -1;
	o->nr_cache = nr;
	for (int i = 0; i < nr; i++) {
		int k = machines[i]->index;

		if (k < 0 || k >= nr || o->cache[k]) {
			vtrace_set_error("machine %s: bad index %d", machines[i]->name, k);
			return -1;
		}
		o->cache[k] = cache_new(machines[i]->tep);
		if (!o->cache[k])
			return -1;
	}
	return 0;
}

/*
 * A big buffer for stdout (other streams, open_memstream()'s, keep theirs),
 * set once and never freed: stdout keeps using the buffer it was given
 * after any later setvbuf(stdout, NULL, ...), so a buffer freed by
 * output_close() was written to by the next output to stdout in the
 * process (found by fuzz-merge, which runs vtrace_merge_main() again and
 * again; glibc's own writes there are not seen by ASan).
 */
static void stdout_big_buffer(void)
{
	static char buf[1 << 20];
	static bool set;

	if (!set)
		setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	set = true;
}

/* The machine column: the longest name, at least 4 wide */
static int name_width(struct machine **machines, int nr)
{
	int width = 4;

	for (int i = 0; i < nr; i++)
		if ((int)strlen(machines[i]->name) > width)
			width = strlen(machines[i]->name);
	return width;
}

/**
 * output_open - the text, jsonl, perfetto or svg output (@opts->format) to @out
 * @width:	the machine column's width, 0: the longest name's
 * @machines:	every machine whose events may be printed, each at its m->index
 * @verdict:	where the self-check publishes its verdict at its end (check_pass()):
 *		jsonl's last record; NULL: none
 */
struct output *output_open(FILE *out, const struct merge_opts *opts, int width,
			   struct machine **machines, int nr, const char *const *verdict)
{
	struct output *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->out = out;
	o->opts = opts;
	o->width = width ? width : name_width(machines, nr);
	o->verdict = verdict;
	trace_seq_init(&o->seq);
	o->json = malloc(JSON_MAX);
	o->text = malloc(TEXT_BUF);
	if (!o->json || !o->text)
		goto error;
	if (opts->format == MERGE_TEXT && caches_open(o, machines, nr))
		goto error;
	if (out == stdout)
		stdout_big_buffer();
	if (opts->format == MERGE_PERFETTO)
		o->drawn = perfetto_open(out, opts);
	else if (opts->format == MERGE_SVG)
		o->drawn = svg_open(out, opts);
	if ((opts->format == MERGE_PERFETTO || opts->format == MERGE_SVG) && !o->drawn)
		goto error;
	if (o->drawn)
		o->drawn->verdict = verdict;
	return o;
error:
	output_close(o);
	return NULL;
}

static void text_flush(struct output *o)
{
	if (o->text_len)
		fwrite(o->text, 1, o->text_len, o->out);
	o->text_len = 0;
}

/* The self-check's verdict @v as a JSON line: {"type":"self_check","verdict":"..."} */
void output_jsonl_verdict(FILE *out, const char *v)
{
	if (!v)
		return;
	fputs("{\"type\":\"self_check\",\"verdict\":", out);
	vtrace_json_string(out, v);
	fputs("}\n", out);
}

/* What is still kept goes out: the verdict, a drawn output's file, the text buffer */
static void output_finish(struct output *o)
{
	if (o->finished)
		return;
	o->finished = true;
	/* --format jsonl: the verdict is the last record */
	if (o->verdict && o->opts->format == MERGE_JSONL)
		output_jsonl_verdict(o->out, *o->verdict);
	if (drawn_close(o->drawn))
		vtrace_warn("%s", vtrace_last_error());
	o->drawn = NULL;
	text_flush(o);
	fflush(o->out);
}

void output_close(struct output *o)
{
	if (!o)
		return;
	output_finish(o);
	trace_seq_destroy(&o->seq);
	free(o->json);
	free(o->text);
	for (int i = 0; i < o->nr_cache; i++)
		if (o->cache[i]) {
			free(o->cache[i]->ids);
			free(o->cache[i]);
		}
	free(o->cache);
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

/* "SSSSSS.NNNNNNNNN": the nanoseconds two digits at a time */
static char *put_time(struct output *o, const struct source *s, uint64_t ns, char *p)
{
	static const char digits[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	uint32_t frac;

	if (o->opts->raw_tsc || !o->opts->khz)
		return put_u64(p, s->host_tsc, 20, ' ');
	p = put_u64(p, ns / 1000000000, 6, ' ');
	*p++ = '.';
	frac = ns % 1000000000;
	p[8] = '0' + frac % 10;
	frac /= 10;
	for (int i = 6; i >= 0; i -= 2) {
		memcpy(p + i, digits + 2 * (frac % 100), 2);
		frac /= 100;
	}
	return p + 9;
}

/* The event of @type and its name column "name:" padded to 22 (NULL: unknown) */
static const struct event_slot *event_of(struct text_cache *c, int type)
{
	struct event_slot *e;
	size_t len;

	if (type < 0 || type >= c->nr_ids)
		return NULL;
	e = &c->ids[type];
	if (e->ev)
		return e;
	e->ev = tep_find_event(c->tep, type);
	if (!e->ev)
		return NULL;
	len = strnlen(e->ev->name, 128);
	memcpy(e->col, e->ev->name, len);
	e->col[len] = ':';
	e->len = put_str(e->col + len + 1, "", 0, 21 - (int)len, false) - e->col;
	return e;
}

/* "            comm-pid     ": the comm right-aligned in 16, the pid left-aligned in 8 */
static int comm_col(struct tep_handle *tep, int pid, char *col, bool *known)
{
	const char *comm = pid ? tep_data_comm_from_pid(tep, pid) : "<idle>";
	char *p, *pid_start;

	/* libtraceevent says "<...>" for a pid it does not know (yet) */
	if (!comm)
		comm = "<...>";
	*known = strcmp(comm, "<...>") != 0;
	p = put_str(col, comm, strnlen(comm, 64), 16, true);
	*p++ = '-';
	pid_start = p;
	if (pid < 0)
		*p++ = '-';
	p = put_u64(p, pid < 0 ? -(int64_t)pid : pid, 0, ' ');
	p = put_str(p, "", 0, 8 - (int)(p - pid_start), false);
	return p - col;
}

static char *put_comm(struct text_cache *c, int pid, char *p)
{
	struct comm_slot *slot = &c->comms[(unsigned int)pid % COMM_SLOTS];
	bool known;
	int len;

	if (slot->len && slot->pid == pid) {
		memcpy(p, slot->col, slot->len);
		return p + slot->len;
	}
	len = comm_col(c->tep, pid, p, &known);
	if (known) {
		slot->pid = pid;
		slot->len = len;
		memcpy(slot->col, p, len);
	}
	return p + len;
}

/*
 * What tep_print_event(tep, seq, rec, "%s", TEP_PRINT_INFO) prints, without
 * parsing that format string and finding the event again for every event:
 * the plugin's handler if the event has one, then libtraceevent's own
 * printing (pretty_print()) if there is none or it returns non-zero, as
 * print_event_info() does.  The handler already ran, so it is kept out of
 * the second call with TEP_EVENT_FL_NOHANDLE for that call.
 */
static void event_info(struct trace_seq *seq, struct tep_event *ev, struct tep_record *rec)
{
	int flags = ev->flags;

	if (ev->handler && !(flags & (TEP_EVENT_FL_NOHANDLE | TEP_EVENT_FL_PRINTRAW))) {
		if (!ev->handler(seq, rec, ev, ev->context))
			return;
		ev->flags |= TEP_EVENT_FL_NOHANDLE;
		tep_print_event(ev->tep, seq, rec, "%s", TEP_PRINT_INFO);
		ev->flags = flags;
		return;
	}
	tep_print_event(ev->tep, seq, rec, "%s", TEP_PRINT_INFO);
}

/* After an event whose time two offset intervals give and nothing told apart (src/lib/tsc.c) */
#define AMBIGUOUS_MARK	"  [time ambiguous]"

/*
 * Appends the event's info (libtraceevent's printing, plugins included) at @p
 * in o->text, without its trailing newlines, and ends the line.
 */
static void put_info(struct output *o, struct source *s, struct tep_event *ev, char *p)
{
	struct trace_seq *seq = &o->seq;
	unsigned int len;

	trace_seq_reset(seq);
	event_info(seq, ev, s->rec);
	len = seq->len;
	while (len && seq->buffer[len - 1] == '\n')
		len--;
	if ((size_t)(o->text + TEXT_BUF - p) < len + sizeof(AMBIGUOUS_MARK)) {
		/* a huge event: write out what is gathered, then the rest directly */
		o->text_len = p - o->text;
		text_flush(o);
		fwrite(seq->buffer, 1, len, o->out);
		if (s->ambiguous)
			fputs(AMBIGUOUS_MARK, o->out);
		fputc('\n', o->out);
		return;
	}
	memcpy(p, seq->buffer, len);
	p += len;
	if (s->ambiguous) {
		memcpy(p, AMBIGUOUS_MARK, sizeof(AMBIGUOUS_MARK) - 1);
		p += sizeof(AMBIGUOUS_MARK) - 1;
	}
	*p = '\n';
	o->text_len = p + 1 - o->text;
}

/* "MACHINE [CPU] ": every line's start */
static char *put_machine(const struct output *o, const struct source *s, char *p)
{
	p = put_str(p, s->m->name, strnlen(s->m->name, 64), o->width, false);
	memcpy(p, " [", 2);
	p = put_u64(p + 2, s->cpu, 3, '0');
	memcpy(p, "] ", 2);
	return p + 2;
}

/* Room for the two lines of put_dropped() besides the names' width */
#define DROPPED_MAX	128
#define COUNTED_TAIL	" EVENTS DROPPED]\n"
#define UNCOUNTED_TAIL	" [EVENTS DROPPED]\n"

/*
 * The CPU's ring buffer lost events before this one: trace-cmd report's
 * line (tracecmd/trace-read.c: "CPU:%d [%lld EVENTS DROPPED]", without a
 * count "CPU:%d [EVENTS DROPPED]") after the machine prefix, the machine's
 * own CPU number in both places:
 *
 *   g1   [001] CPU:1 [37 EVENTS DROPPED]
 *
 * Losses that add up on one event (the flagged first event of a page was
 * a filler or not selected) are one line for the counted, one for the
 * uncounted ones, so the counts add up to --stats' lost-page.
 */
static char *put_dropped(const struct output *o, const struct source *s, char *p)
{
	if (s->lost_counted) {
		p = put_machine(o, s, p);
		memcpy(p, "CPU:", 4);
		p = put_u64(p + 4, s->cpu, 0, ' ');
		memcpy(p, " [", 2);
		p = put_u64(p + 2, s->lost_counted, 0, ' ');
		memcpy(p, COUNTED_TAIL, sizeof(COUNTED_TAIL) - 1);
		p += sizeof(COUNTED_TAIL) - 1;
	}
	if (s->lost_uncounted) {
		p = put_machine(o, s, p);
		memcpy(p, "CPU:", 4);
		p = put_u64(p + 4, s->cpu, 0, ' ');
		memcpy(p, UNCOUNTED_TAIL, sizeof(UNCOUNTED_TAIL) - 1);
		p += sizeof(UNCOUNTED_TAIL) - 1;
	}
	return p;
}

/*
 * "MACHINE [CPU]             COMM-PID     SEC.NSEC: EVENT:               INFO"
 * Lines gather in o->text, written out when it is nearly full (one fwrite per
 * MiB instead of three stdio calls per event); the columns that depend on
 * the event id and the pid come from the machine's text_cache.
 */
static void print_text(struct output *o, struct source *s, uint64_t ns)
{
	struct text_cache *c = o->cache[s->m->index];
	int type = data_type(c, s->rec);
	const struct event_slot *e = event_of(c, type);
	char *p;

	if (TEXT_BUF - o->text_len < PREFIX_MAX + DROPPED_MAX + 3 * (size_t)o->width + 4096)
		text_flush(o);
	p = o->text + o->text_len;
	if (s->lost)
		p = put_dropped(o, s, p);
	p = put_machine(o, s, p);
	p = put_comm(c, data_pid(c, s->rec), p);
	p = put_time(o, s, ns, p);
	memcpy(p, ": ", 2);
	p += 2;
	if (!e) {
		p += snprintf(p, 64, "unknown event %d\n", type);
		o->text_len = p - o->text;
		return;
	}
	memcpy(p, e->col, e->len);
	put_info(o, s, e->ev, p + e->len);
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
	if (s->ambiguous)
		J_LIT(&j, ",\"time_ambiguous\":true");
	if (s->lost) {
		J_LIT(&j, ",\"missed_events\":");
		j_s64(&j, s->lost);
	}
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

void output_event(struct output *o, struct source *s, uint64_t ns)
{
	if (o->drawn)
		drawn_event(o->drawn, s);
	else if (o->opts->format == MERGE_JSONL)
		print_json(o, s);
	else
		print_text(o, s, ns);
}

static bool output_pass_event(void *priv, struct source *s, uint64_t ns)
{
	output_event(priv, s, ns);
	return false;
}

static int output_pass_end(void *priv, bool failed)
{
	(void)failed;
	output_finish(priv);
	return 0;
}

/* The output as a pass: each event printed or drawn, the rest written at its end */
struct merge_pass output_pass(struct output *o)
{
	return (struct merge_pass){ .event = output_pass_event, .end = output_pass_end, .priv = o };
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
	if (s->map.told_apart)
		fprintf(out, " told-apart=%llu", (unsigned long long)s->map.told_apart);
	if (s->map.ambiguous)
		fprintf(out, " ambiguous=%llu", (unsigned long long)s->map.ambiguous);
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
	/* pages mark only overwritten events, all of which the ring counted */
	if (c->missed > eos->events_lost_ring)
		fprintf(out, " MISMATCH:eos-ring-lost=%llu",
			(unsigned long long)eos->events_lost_ring);
}

static void stats_line(FILE *out, const struct source *s, int width, const struct merge_opts *o)
{
	const struct vtrace_cpu_counts *c = vtrace_cpu_reader_counts(s->reader);
	const struct vtrace_cpu_stats *eos = s->m->dump ? vtrace_dump_eos(s->m->dump, s->cpu) : NULL;
	uint64_t lost_pages = c->missed;
	bool lost_unknown = c->missed_unknown;
	uint64_t lost_eos = eos ? eos->events_lost_ring + eos->events_lost_port : 0;

	fprintf(out, "%-*s %3d %10" PRIu64 " %10" PRIu64 " %7" PRIu64 " %9" PRIu64 "%s %9" PRIu64
		" %5" PRIu64, width, s->m->name, s->cpu, s->read, s->printed, s->fillers,
		lost_pages, lost_unknown ? "+" : " ", lost_eos, c->bad_pages);
	print_range(out, s, o);
	print_intervals(out, s);
	print_checks(out, s);
	fputc('\n', out);
}

static void output_stats(FILE *out, struct machine **machines, int nr,
			 const struct merge_opts *opts)
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

/* --stats printed once every event was read: not after an error */
static int stats_end(void *priv, bool failed)
{
	struct output_stats *st = priv;

	if (!failed)
		output_stats(st->out, st->machines, st->nr, st->opts);
	return 0;
}

/* --stats as a pass: the engine counts (struct source), the pass prints at the end */
struct merge_pass output_stats_pass(struct output_stats *st)
{
	return (struct merge_pass){ .end = stats_end, .priv = st };
}
