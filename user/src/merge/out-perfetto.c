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
 * other event as an instant ("i", its text in args.info).  Under each guest
 * CPU, a thread (tid 10001 + CPU) shows when the host ran that vCPU's QEMU
 * thread ("CPU N/KVM") and on which host CPU: a guest CPU that does not run
 * there is a vCPU the host preempted.
 * Times are microseconds on the host's timeline, to the nanosecond.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "out-sched.h"
#include "vtrace-util.h"

#define VCPU_TID	10001

/* a run of a host vCPU thread, kept until the guests are known */
struct vcpu_run {
	int		host_cpu;
	int		tid;
	int		vcpu;
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
	int			*vcpu_tid;	/* per vCPU index: the host tid seen */
	int			max_vcpu;
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

static void begin(struct perfetto *p, const char *ph, int pid, int tid)
{
	fputs(p->comma ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", p->out);
	fprintf(p->out, "%s\",\"pid\":%d,\"tid\":%d", ph, pid, tid);
	p->comma = true;
}

static void put_slice(struct perfetto *p, int pid, int tid, const char *name, uint64_t from,
		      uint64_t to)
{
	begin(p, "X", pid, tid);
	fputs(",\"ts\":", p->out);
	put_us(p->out, from);
	fputs(",\"dur\":", p->out);
	put_us(p->out, to - from);
	fputs(",\"name\":", p->out);
	put_str(p->out, name);
}

static int keep_run(struct perfetto *p, const struct sched_slice *sl, int vcpu)
{
	if (p->nr_runs == p->max_runs) {
		size_t n = p->max_runs ? p->max_runs * 2 : 256;
		struct vcpu_run *r = realloc(p->runs, n * sizeof(*r));

		if (!r)
			return -1;
		p->runs = r;
		p->max_runs = n;
	}
	if (vcpu >= p->max_vcpu) {
		int n = vcpu + 1, *t = realloc(p->vcpu_tid, n * sizeof(*t));

		if (!t)
			return -1;
		memset(t + p->max_vcpu, 0, (n - p->max_vcpu) * sizeof(*t));
		p->vcpu_tid = t;
		p->max_vcpu = n;
	}
	p->vcpu_tid[vcpu] = sl->pid;
	p->runs[p->nr_runs++] = (struct vcpu_run){ sl->cpu, sl->pid, vcpu, sl->from, sl->to };
	return 0;
}

static void on_slice(void *priv, const struct sched_slice *sl)
{
	struct perfetto *p = priv;
	struct machine *m = sched_tracker_machine(p->d.t, sl->mi);
	int vcpu = m->guest ? -1 : sched_vcpu_of(sl->comm);

	if (!sl->pid)
		return;
	put_slice(p, sl->mi + 1, sl->cpu + 1, sl->comm[0] ? sl->comm : "<...>", sl->from, sl->to);
	fprintf(p->out, ",\"cat\":\"sched\",\"args\":{\"pid\":%d", sl->pid);
	if (vcpu >= 0)
		fprintf(p->out, ",\"vcpu\":%d", vcpu);
	fputs("}}", p->out);
	if (vcpu >= 0 && keep_run(p, sl, vcpu))
		vtrace_warn("perfetto: out of memory: vCPU thread runs left out");
}

static void on_instant(void *priv, int mi, struct source *s, uint64_t ns)
{
	struct perfetto *p = priv;
	struct tep_handle *tep = s->m->tep;
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, s->rec));

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
	fputs("}}", p->out);
}

static void put_meta(struct perfetto *p, int pid, int tid, const char *what, const char *name,
		     int sort)
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
	char name[128], tname[24];

	for (int c = 0; c < m->nr_cpus; c++) {
		const struct vtrace_vcpu_history *h = m->cpus[c].map.hist;
		int idx = h ? h->vcpu_idx : -1, cpu;
		int tid = idx >= 0 && idx < p->max_vcpu ? p->vcpu_tid[idx] : 0;

		if (idx < 0) {
			snprintf(name, sizeof(name), "cpu %d", c);
			put_meta(p, mi + 1, c + 1, "thread_name", name, 2 * c);
			continue;
		}
		snprintf(name, sizeof(name), "cpu %d (vCPU %d, APIC id %u)", c, idx, h->vcpu_id);
		put_meta(p, mi + 1, c + 1, "thread_name", name, 2 * c);
		if (sched_guest_of_vcpu(p->d.t, idx, &cpu) != mi)
			continue;
		snprintf(tname, sizeof(tname), tid ? "tid %d" : "not seen", tid);
		snprintf(name, sizeof(name), "cpu %d on the host: thread CPU %d/KVM (%s)", c, idx,
			 tname);
		put_meta(p, mi + 1, VCPU_TID + c, "thread_name", name, 2 * c + 1);
	}
}

static void put_runs(struct perfetto *p)
{
	char name[32];

	for (size_t i = 0; i < p->nr_runs; i++) {
		const struct vcpu_run *r = &p->runs[i];
		int cpu, mi = sched_guest_of_vcpu(p->d.t, r->vcpu, &cpu);

		if (mi < 0)
			continue;
		snprintf(name, sizeof(name), "host cpu %d", r->host_cpu);
		put_slice(p, mi + 1, VCPU_TID + cpu, name, r->from, r->to);
		fprintf(p->out, ",\"cat\":\"vcpu\",\"args\":{\"host_cpu\":%d,\"tid\":%d}}",
			r->host_cpu, r->tid);
	}
}

static int perfetto_finish(struct drawn *d)
{
	struct perfetto *p = (struct perfetto *)d;
	char name[96];

	put_runs(p);
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
		for (int c = 0; c < m->nr_cpus; c++) {
			snprintf(name, sizeof(name), "cpu %d", c);
			put_meta(p, i + 1, c + 1, "thread_name", name, c);
		}
	}
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"host TSC\",", p->out);
	fprintf(p->out, "\"tsc_khz\":%" PRIu64 ",\"generator\":\"vtrace-merge\"}}\n",
		p->opts->khz);
	return 0;
}

static void perfetto_free(struct drawn *d)
{
	struct perfetto *p = (struct perfetto *)d;

	trace_seq_destroy(&p->seq);
	free(p->runs);
	free(p->vcpu_tid);
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
	p->d.t = sched_tracker_new(opts, &perfetto_ops, p);
	if (!p->d.t) {
		free(p);
		return NULL;
	}
	trace_seq_init(&p->seq);
	fputs("{\"traceEvents\":[", out);
	return &p->d;
}
