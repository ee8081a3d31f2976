// SPDX-License-Identifier: GPL-2.0
/* out-perfetto.c: --format perfetto: Chrome JSON trace events for ui.perfetto.dev. */
/*
 * The Chrome "JSON trace event" format, which ui.perfetto.dev and
 * chrome://tracing load:
 *
 *   {"traceEvents":[
 *   {"ph":"X","pid":1,"tid":2,"ts":4000000.000,"dur":40000.000,"name":"CPU 1/KVM",...},
 *   {"ph":"i","s":"t","pid":2,"tid":2,"ts":4002020.000,"name":"hrtimer_expire_entry",...},
 *   ...
 *   {"ph":"M","pid":2,"name":"process_name","args":{"name":"g1 (guest, QEMU pid 4252)"}},
 *   ],"displayTimeUnit":"ns"}
 *
 * One process per machine (pid: the order of its first event, from 1; the
 * host sorted first, then the guests by name), one thread per CPU (tid
 * CPU + 1) carrying its scheduling slices ("X", idle left out) and every
 * other event as an instant ("i", its text in args.info).  A slice or an
 * instant whose time comes from a guest event that two offset intervals map
 * (text output's "[time ambiguous]") says so: an instant with
 * args.time_ambiguous true, a slice in category "sched,time_ambiguous" with
 * args.time_ambiguous "start", "end" or "both" (which of its ends).  Under
 * each guest CPU, a thread (tid 10001 + CPU) shows when the host ran that
 * vCPU's QEMU thread ("CPU N/KVM") and on which host CPU: a guest CPU that
 * does not run there is a vCPU the host preempted.  Of several threads of
 * that name (several VMs), only the one out-sched.c tells is the guest
 * CPU's (the self-check's fit); when none is, its track has no run and
 * its name says why ("cpu 1 on the host: not told apart: 2 threads named
 * CPU 1/KVM").  The vCPU threads' runs are kept until then.
 *
 * Exits: when the host recorded kvm:kvm_entry and kvm:kvm_exit, each vCPU
 * thread has a thread of its own in the host's process (tid XTID_BASE +
 * its tid, "CPU N/KVM (tid T): exits") with one slice per exit, from the
 * kvm_exit to the next kvm_entry, named by its reason as kvm_exit's print
 * format names it (src/lib/kvm-exit.c: "hlt", "io", "EPT_VIOLATION").
 *
 * Late wake-ups (--explain --format perfetto): explain.c's JSON lines of
 * every late wake-up (opts->explain_text) become slices on a thread of
 * their guest CPU and task (tid LATE_TID + CPU * LATE_CPU + pid, "cpu N:
 * late wake-ups of COMM (pid P)": two tasks' windows on one CPU overlap,
 * and a thread's slices must nest), from the expected time to the task
 * running, named by the delay and the main cause, with the parts and the
 * vCPU's modes as args, and a flow from each to what ran on the host CPU
 * of its vCPU at the expected time.  The rest is drawn only around them:
 * slices, exits and instants that overlap a late wake-up's window (from
 * EXPLAIN_MARGIN_NS before it was due to as long after the task ran), the
 * vCPU threads' kvm_entry/kvm_exit not as instants (their exits are slices
 * already), and explain.c's summary in otherData: a file in proportion to
 * the late wake-ups, not to the capture (a 1M-event capture: 185 MB before).
 *
 * Times are microseconds on the host's timeline, to the nanosecond.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "out-sched.h"
#include "vtrace-kvm.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

#define VCPU_TID	10001
#define LATE_TID	100000000LL	/* + CPU * LATE_CPU + pid: a guest task's late wake-ups */
#define LATE_CPU	10000000LL	/* above pid_max (2^22) */
#define XTID_BASE	1000000	/* + the vCPU thread's tid: its exits */
#define MAX_XT		256	/* vCPU threads whose exits are drawn */
#define XNAME_LEN	32	/* an exit reason's name kept: a longer one is its number */
#define LATE_MAX	100000	/* --explain: the worst this many late wake-ups drawn */
#define EXPLAIN_MARGIN_NS 200000 /* --explain: drawn around each late wake-up's window */

/* --explain: host ns drawn, around one late wake-up or several that overlap */
struct window {
	uint64_t	from;
	uint64_t	to;
};

/* a vCPU thread's exit in progress */
struct xthread {
	int		tid;
	bool		open;
	int		reason;		/* index in names */
	uint64_t	from;
};

/* a run of a host vCPU thread, kept until its guest CPU is known */
struct vcpu_run {
	int		host_cpu;
	int		tid;
	uint64_t	from;
	uint64_t	to;
};

struct perfetto {
	struct drawn		d;
	FILE			*out;
	const struct merge_opts	*opts;
	struct trace_seq	seq;
	bool			comma;
	struct vcpu_run		*runs;
	size_t			nr_runs;
	size_t			max_runs;
	/* exits: the host's kvm events, looked up on its first event */
	struct tep_handle	*host_tep;
	int			exit_id, entry_id;
	struct tep_format_field	*exit_reason, *exit_isa;
	struct xthread		xt[MAX_XT];
	int			nr_xt;
	struct vtrace_kvm_exits	names;
	uint64_t		exits;
	long long		*late_tracks;	/* named: tid * 64 + machine index */
	size_t			nr_late_tracks;
	bool			explain;	/* only the windows are drawn */
	struct window		*win;		/* sorted, disjoint */
	size_t			nr_win;
	uint64_t		left_out;	/* events and slices outside every window */
};

static void put_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* ns as microseconds with three decimals */
static void put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* Is host time [@from, @to] drawn?  Without --explain all is; with it, what meets a window */
static bool drawn_at(const struct perfetto *p, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = p->nr_win;

	if (!p->explain)
		return true;
	while (lo < hi) {	/* the first window that ends at or after @from */
		size_t mid = lo + (hi - lo) / 2;

		if (p->win[mid].to < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nr_win && p->win[lo].from <= to;
}

static void begin(struct perfetto *p, const char *ph, int pid, long long tid)
{
	fputs(p->comma ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", p->out);
	fprintf(p->out, "%s\",\"pid\":%d,\"tid\":%lld", ph, pid, tid);
	p->comma = true;
}

static void put_slice(struct perfetto *p, int pid, long long tid, const char *name,
		      uint64_t from, uint64_t to)
{
	begin(p, "X", pid, tid);
	fputs(",\"ts\":", p->out);
	put_us(p->out, from);
	fputs(",\"dur\":", p->out);
	put_us(p->out, to - from);
	fputs(",\"name\":", p->out);
	put_str(p->out, name);
}

static int keep_run(struct perfetto *p, const struct sched_slice *sl)
{
	if (p->nr_runs == p->max_runs) {
		size_t n = p->max_runs ? p->max_runs * 2 : 256;
		struct vcpu_run *r = realloc(p->runs, n * sizeof(*r));

		if (!r)
			return -1;
		p->runs = r;
		p->max_runs = n;
	}
	p->runs[p->nr_runs++] = (struct vcpu_run){ sl->cpu, sl->pid, sl->from, sl->to };
	return 0;
}

static void on_slice(void *priv, const struct sched_slice *sl)
{
	struct perfetto *p = priv;
	struct machine *m = sched_tracker_machine(p->d.t, sl->mi);
	int vcpu = m->guest ? -1 : vtrace_vcpu_idx_of(sl->comm, SIZE_MAX);
	const char *amb = sched_slice_ambiguous(sl);

	if (!sl->pid)
		return;
	if (vcpu >= 0 && keep_run(p, sl))
		vtrace_warn("perfetto: out of memory: vCPU thread runs left out");
	if (!drawn_at(p, sl->from, sl->to)) {
		p->left_out++;
		return;
	}
	put_slice(p, sl->mi + 1, sl->cpu + 1, sl->comm[0] ? sl->comm : "<...>", sl->from, sl->to);
	fprintf(p->out, ",\"cat\":\"%s\",\"args\":{\"pid\":%d",
		amb ? "sched,time_ambiguous" : "sched", sl->pid);
	if (vcpu >= 0)
		fprintf(p->out, ",\"vcpu\":%d", vcpu);
	if (amb)
		fprintf(p->out, ",\"time_ambiguous\":\"%s\"", amb);
	fputs("}}", p->out);
}

static void host_lookup(struct perfetto *p, struct tep_handle *tep)
{
	struct tep_event *ev = tep_find_event_by_name(tep, "kvm", "kvm_exit");

	p->host_tep = tep;
	p->exit_id = ev ? ev->id : -1;
	p->exit_reason = ev ? tep_find_field(ev, "exit_reason") : NULL;
	p->exit_isa = ev ? tep_find_field(ev, "isa") : NULL;
	ev = tep_find_event_by_name(tep, "kvm", "kvm_entry");
	p->entry_id = ev ? ev->id : -1;
}

static uint64_t field_u32(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = 0;

	if (f && f->offset + f->size <= rec->size)
		tep_read_number_field(f, rec->data, &v);
	return (uint32_t)v;
}

/* the reason's index in p->names, named on its first kvm_exit */
static int exit_reason(struct perfetto *p, struct source *s)
{
	uint64_t key = field_u32(p->exit_reason, s->rec) | field_u32(p->exit_isa, s->rec) << 32;

	return vtrace_kvm_exit_index(&p->names, s->m->tep, s->rec, key);
}

static struct xthread *xthread_of(struct perfetto *p, int tid)
{
	for (int i = 0; i < p->nr_xt; i++)
		if (p->xt[i].tid == tid)
			return &p->xt[i];
	if (p->nr_xt == MAX_XT)
		return NULL;
	p->xt[p->nr_xt].tid = tid;
	p->xt[p->nr_xt].open = false;
	return &p->xt[p->nr_xt++];
}

/* a host kvm_exit opens the vCPU thread's exit, the next kvm_entry draws it */
static void on_kvm(struct perfetto *p, int mi, struct source *s, uint64_t ns, bool exit)
{
	struct xthread *x = xthread_of(p, tep_data_pid(s->m->tep, s->rec));
	const char *name;

	if (!x)
		return;
	if (exit) {
		x->open = true;
		x->reason = exit_reason(p, s);
		x->from = ns;
		return;
	}
	if (!x->open)
		return;
	x->open = false;
	if (!drawn_at(p, x->from, ns)) {
		p->left_out++;
		return;
	}
	name = p->names.name[x->reason];
	put_slice(p, mi + 1, XTID_BASE + x->tid, name, x->from, ns);
	fputs(",\"cat\":\"kvm_exit\",\"args\":{\"reason\":", p->out);
	put_str(p->out, name);
	fprintf(p->out, ",\"tid\":%d}}", x->tid);
	p->exits++;
}

static void on_instant(void *priv, int mi, struct source *s, uint64_t ns)
{
	struct perfetto *p = priv;
	struct tep_handle *tep = s->m->tep;
	int id = tep_data_type(tep, s->rec);
	struct tep_event *ev = tep_find_event(tep, id);

	if (!s->m->guest) {
		if (p->host_tep != tep)
			host_lookup(p, tep);
		if (id == p->exit_id || id == p->entry_id) {
			on_kvm(p, mi, s, ns, id == p->exit_id);
			/* --explain: drawn as the exits' slices, not twice */
			if (p->explain && p->exit_id >= 0 && p->entry_id >= 0)
				return;
		}
	}
	if (!drawn_at(p, ns, ns)) {
		p->left_out++;
		return;
	}

	begin(p, "i", mi + 1, s->cpu + 1);
	fputs(",\"s\":\"t\",\"ts\":", p->out);
	put_us(p->out, ns);
	fputs(",\"name\":", p->out);
	put_str(p->out, ev ? ev->name : "unknown");
	fputs(",\"cat\":", p->out);
	put_str(p->out, ev ? ev->system : "unknown");
	fprintf(p->out, ",\"args\":{\"pid\":%d,\"info\":", tep_data_pid(tep, s->rec));
	trace_seq_reset(&p->seq);
	if (ev)
		tep_print_event(tep, &p->seq, s->rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&p->seq);
	while (p->seq.len && p->seq.buffer[p->seq.len - 1] == '\n')
		p->seq.buffer[--p->seq.len] = '\0';
	put_str(p->out, p->seq.buffer);
	/* two offset intervals give its time, nothing told them apart (src/lib/tsc.c) */
	fputs(s->ambiguous ? ",\"time_ambiguous\":true}}" : "}}", p->out);
}

static void put_meta(struct perfetto *p, int pid, long long tid, const char *what,
		     const char *name, int sort)
{
	begin(p, "M", pid, tid);
	fprintf(p->out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	put_str(p->out, name);
	fputs("}}", p->out);
	begin(p, "M", pid, tid);
	fprintf(p->out, ",\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%d}}",
		strncmp(what, "process", 7) ? "thread" : "process", sort);
}

static void put_guest_threads(struct perfetto *p, int mi, struct machine *m)
{
	char name[160], what[96];

	for (int c = 0; c < m->nr_cpus; c++) {
		const struct vtrace_vcpu_history *h = m->cpus[c].map.hist;
		int idx = h ? h->vcpu_idx : -1;

		if (idx < 0) {
			snprintf(name, sizeof(name), "cpu %d", c);
			put_meta(p, mi + 1, c + 1, "thread_name", name, 3 * c);
			continue;
		}
		snprintf(name, sizeof(name), "cpu %d (vCPU %d, APIC id %u)", c, idx, h->vcpu_id);
		put_meta(p, mi + 1, c + 1, "thread_name", name, 3 * c);
		sched_vcpu_label(p->d.t, mi, c, what, sizeof(what));
		snprintf(name, sizeof(name), "cpu %d on the host: %s", c, what);
		put_meta(p, mi + 1, VCPU_TID + c, "thread_name", name, 3 * c + 1);
	}
}

static void put_runs(struct perfetto *p)
{
	char name[32];

	for (size_t i = 0; i < p->nr_runs; i++) {
		const struct vcpu_run *r = &p->runs[i];
		int cpu, mi = sched_guest_of_tid(p->d.t, r->tid, &cpu);

		if (mi < 0 || !drawn_at(p, r->from, r->to))
			continue;
		snprintf(name, sizeof(name), "host cpu %d", r->host_cpu);
		put_slice(p, mi + 1, VCPU_TID + cpu, name, r->from, r->to);
		fprintf(p->out, ",\"cat\":\"vcpu\",\"args\":{\"host_cpu\":%d,\"tid\":%d}}",
			r->host_cpu, r->tid);
	}
}

/* the vCPU threads' exit tracks: "CPU 1/KVM (tid 900): exits" in the host's process */
static void put_exit_threads(struct perfetto *p, int mi)
{
	char name[96], vcpu[24];

	for (int i = 0; i < p->nr_xt; i++) {
		const char *comm = tep_data_comm_from_pid(p->host_tep, p->xt[i].tid);
		int v = sched_vthread_idx(p->d.t, p->xt[i].tid);

		if (v >= 0) {
			snprintf(vcpu, sizeof(vcpu), "CPU %d/KVM", v);
			comm = vcpu;
		}
		snprintf(name, sizeof(name), "%.40s (tid %d): exits (kvm_exit..kvm_entry)",
			 comm ? comm : "<...>", p->xt[i].tid);
		put_meta(p, mi + 1, XTID_BASE + p->xt[i].tid, "thread_name", name, 1000 + i);
	}
}

/* a number after "KEY": in one of explain.c's JSON lines */
static bool json_num(const char *line, const char *key, long long *v)
{
	const char *p = strstr(line, key);

	return p && sscanf(p + strlen(key), "%lld", v) == 1;
}

static int host_pid(struct perfetto *p)
{
	for (int i = 0; i < sched_tracker_machines(p->d.t); i++)
		if (!sched_tracker_machine(p->d.t, i)->guest)
			return i + 1;
	return 0;
}

/* one late wake-up of explain.c's JSON lines, on its guest task's late track; its machine or -1 */
static int put_late(struct perfetto *p, const char *line, size_t len, long long *tid)
{
	long long rank, cpu, pid, from, to, delay, hcpu;
	const char *g = strstr(line, "\"guest\":\""), *parts = strstr(line, ",\"parts\":");
	static const char cause_at[] = "\"parts\":[{\"cause\":\"";
	const char *cause = strstr(line, cause_at);
	char name[160], gname[64] = "", key[24] = "", task[48] = "";
	int mi = -1, n;

	if (!g || !parts || !json_num(line, "\"rank\":", &rank) || !json_num(line, "\"cpu\":", &cpu) ||
	    !json_num(line, "\"pid\":", &pid) || !json_num(line, "\"expected_ns\":", &from) ||
	    !json_num(line, "\"running_ns\":", &to) || !json_num(line, "\"delay_ns\":", &delay) ||
	    !json_num(line, "\"host_cpu\":", &hcpu) || sscanf(g + 9, "%63[^\"]", gname) != 1)
		return -1;
	for (int i = 0; i < sched_tracker_machines(p->d.t); i++)
		if (!strcmp(sched_tracker_machine(p->d.t, i)->name, gname))
			mi = i;
	if (mi < 0 || from < 0 || to < from || cpu < 0 || cpu > 4096 || pid < 0 || pid >= LATE_CPU)
		return -1;
	*tid = LATE_TID + cpu * LATE_CPU + pid;
	if (cause)
		sscanf(cause + strlen(cause_at), "%23[^\"]\",\"task\":\"%47[^\"]", key, task);
	snprintf(name, sizeof(name), "late %lld.%03lld ms: %s%s%s", delay / 1000000,
		 delay % 1000000 / 1000, key, task[0] ? " " : "", task);
	put_slice(p, mi + 1, *tid, name, from, to);
	fprintf(p->out, ",\"cat\":\"late\",\"args\":{\"rank\":%lld,\"delay_ns\":%lld,"
		"\"host_cpu\":%lld", rank, delay, hcpu);
	/* the parts (and modes, the timer's path) as explain.c wrote them: JSON already */
	n = (int)(line + len - parts);
	while (n > 0 && parts[n - 1] == '\n')
		n--;
	if (n > 0 && parts[n - 1] == '}')	/* the record's own end, not an object's in it */
		n--;
	fprintf(p->out, "%.*s}}", n, parts);
	if (hcpu < 0 || !host_pid(p))
		return mi;
	/* a flow from the late wake-up to what ran on its vCPU's host cpu then */
	begin(p, "s", mi + 1, *tid);
	fputs(",\"ts\":", p->out);
	put_us(p->out, from);
	fprintf(p->out, ",\"id\":%lld,\"name\":\"late wake-up\",\"cat\":\"late\"}", rank);
	begin(p, "f", host_pid(p), hcpu + 1);
	fputs(",\"bp\":\"e\",\"ts\":", p->out);
	put_us(p->out, from);
	fprintf(p->out, ",\"id\":%lld,\"name\":\"late wake-up\",\"cat\":\"late\"}", rank);
	return mi;
}

/* a late track's name, once: "cpu 1: late wake-ups of cyclictest (pid 136)" */
static void name_late_track(struct perfetto *p, int mi, long long tid, const char *line)
{
	const char *c = strstr(line, "\"comm\":\"");
	long long cpu = (tid - LATE_TID) / LATE_CPU, pid = (tid - LATE_TID) % LATE_CPU;
	char name[96], comm[17] = "";
	long long *n;

	for (size_t i = 0; i < p->nr_late_tracks; i++)
		if (p->late_tracks[i] == tid * 64 + mi)
			return;
	n = realloc(p->late_tracks, (p->nr_late_tracks + 1) * sizeof(*n));
	if (!n)
		return;
	p->late_tracks = n;
	n[p->nr_late_tracks++] = tid * 64 + mi;
	if (c)
		sscanf(c + 8, "%16[^\"]", comm);
	snprintf(name, sizeof(name), "cpu %lld: late wake-ups of %s (pid %lld)", cpu, comm, pid);
	put_meta(p, mi + 1, tid, "thread_name", name, 3 * (int)cpu + 2);
}

/* --explain: every late wake-up explain.c listed, on its guest task's late track */
static void put_lates(struct perfetto *p)
{
	const char *line = p->opts->explain_text;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		long long tid;
		int mi;

		if (!strncmp(line, "{\"type\":\"late\",", 15) && end) {
			mi = put_late(p, line, len, &tid);
			if (mi >= 0 && mi < 64)
				name_late_track(p, mi, tid, line);
		}
		line = end ? end + 1 : NULL;
	}
}

static int cmp_window(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* --explain: each late wake-up's window and its margins, sorted and merged; 0 or -1 */
static int late_windows(struct perfetto *p)
{
	size_t alloc = 0, n = 0;

	for (const char *line = p->opts->explain_text; line && *line; ) {
		const char *end = strchr(line, '\n');
		long long from, to;

		if (!strncmp(line, "{\"type\":\"late\",", 15) &&
		    json_num(line, "\"expected_ns\":", &from) &&
		    json_num(line, "\"running_ns\":", &to) && from >= 0 && to >= from) {
			if (n == alloc) {
				struct window *w;

				alloc = alloc ? 2 * alloc : 256;
				w = realloc(p->win, alloc * sizeof(*w));
				if (!w)
					return -1;
				p->win = w;
			}
			p->win[n].from = (uint64_t)from > EXPLAIN_MARGIN_NS ?
					 (uint64_t)from - EXPLAIN_MARGIN_NS : 0;
			p->win[n++].to = (uint64_t)to + EXPLAIN_MARGIN_NS;
		}
		line = end ? end + 1 : NULL;
	}
	if (n)
		qsort(p->win, n, sizeof(*p->win), cmp_window);
	for (size_t i = 0; i < n; i++) {
		if (p->nr_win && p->win[i].from <= p->win[p->nr_win - 1].to) {
			if (p->win[i].to > p->win[p->nr_win - 1].to)
				p->win[p->nr_win - 1].to = p->win[i].to;
			continue;
		}
		p->win[p->nr_win++] = p->win[i];
	}
	return 0;
}

/* --explain: its summary, causes and modes (explain.c's JSON lines) in otherData */
static void put_explain_summary(struct perfetto *p)
{
	bool first = true;

	fprintf(p->out, ",\"explain\":{\"drawn\":\"the late wake-ups, and what meets their"
		" windows: from %d us before each was due to %d us after its task ran\","
		"\"windows\":%zu,\"left_out\":%" PRIu64 ",\"summary\":[", EXPLAIN_MARGIN_NS / 1000,
		EXPLAIN_MARGIN_NS / 1000, p->nr_win, p->left_out);
	for (const char *line = p->opts->explain_text; line && *line; ) {
		const char *end = strchr(line, '\n');

		if (end && line[0] == '{' && strncmp(line, "{\"type\":\"late\",", 15)) {
			fprintf(p->out, "%s\n%.*s", first ? "" : ",", (int)(end - line), line);
			first = false;
		}
		line = end ? end + 1 : NULL;
	}
	fputs("]}", p->out);
}

static int perfetto_finish(struct drawn *d)
{
	struct perfetto *p = (struct perfetto *)d;
	char name[96];

	put_runs(p);
	put_lates(p);
	for (int i = 0; i < sched_tracker_machines(d->t); i++) {
		struct machine *m = sched_tracker_machine(d->t, i);

		if (m->guest)
			snprintf(name, sizeof(name), "%s (guest, QEMU pid %d)", m->name, m->pid);
		else
			snprintf(name, sizeof(name), "%s", m->name);
		put_meta(p, i + 1, 0, "process_name", name, sched_tracker_rank(d->t, i));
		if (m->guest) {
			put_guest_threads(p, i, m);
			continue;
		}
		if (p->exits && m->tep == p->host_tep)
			put_exit_threads(p, i);
		for (int c = 0; c < m->nr_cpus; c++) {
			snprintf(name, sizeof(name), "cpu %d", c);
			put_meta(p, i + 1, c + 1, "thread_name", name, c);
		}
	}
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"host TSC\",", p->out);
	fprintf(p->out, "\"tsc_khz\":%" PRIu64 ",\"generator\":\"vtrace-merge\"", p->opts->khz);
	if (p->d.verdict && *p->d.verdict) {
		fputs(",\"self_check\":", p->out);
		put_str(p->out, *p->d.verdict);
	}
	if (p->explain)
		put_explain_summary(p);
	fputs("}}\n", p->out);
	return 0;
}

static void perfetto_free(struct drawn *d)
{
	struct perfetto *p = (struct perfetto *)d;

	trace_seq_destroy(&p->seq);
	vtrace_kvm_exits_free(&p->names);
	free(p->runs);
	free(p->late_tracks);
	free(p->win);
	free(p);
}

static const struct sched_ops perfetto_ops = {
	.slice		= on_slice,
	.instant	= on_instant,
};

struct drawn *perfetto_open(FILE *out, const struct merge_opts *opts)
{
	struct perfetto *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->out = out;
	p->opts = opts;
	p->d.finish = perfetto_finish;
	p->d.free = perfetto_free;
	p->explain = opts->explain_text;
	if (p->explain && late_windows(p)) {
		free(p->win);
		free(p);
		return NULL;
	}
	p->d.t = sched_tracker_new(opts, &perfetto_ops, p);
	if (!p->d.t) {
		free(p);
		return NULL;
	}
	trace_seq_init(&p->seq);
	vtrace_kvm_exits_init(&p->names, XNAME_LEN);
	fputs("{\"traceEvents\":[", out);
	return &p->d;
}
