// SPDX-License-Identifier: GPL-2.0
/* vcpu.c: the host's "CPU N/KVM" threads, their spans, and which one ran a guest's vCPU. */
/*
 * A vCPU is a thread of QEMU, named "CPU N/KVM" when QEMU runs with
 * -name ...,debug-threads=on (libvirt sets it); on a plain QEMU command line
 * every thread keeps the process's name, and what tells a vCPU thread is
 * its kvm_entry events, which carry the vCPU's id (its APIC id).  Between a
 * sched_switch to it and the next sched_switch from it, it is on a host CPU
 * (a "run span"); between a kvm_entry and the next kvm_exit of it, it runs
 * guest code (a "guest window").  One pass over the host trace collects the
 * spans of every such thread, sorted (the run spans of a thread known by
 * its kvm_entry alone from its first kvm_entry on).
 *
 * With several VMs, several threads share the name or the vCPU id: a guest
 * CPU's candidates are all the threads of its vCPU's name or, unnamed,
 * whose kvm_entry events carry its vCPU id, and each of its events (on the
 * host's TSC) is looked up in the spans of each.  The
 * candidate with the fewest events outside its spans, then the most
 * spans, is the vCPU's thread (vtrace_vcpu_fit_best()); a tie is
 * ambiguous.  vtrace-merge's self-check (src/merge/check.c) and vtrace
 * dat's GUEST option (src/vtrace/dat.c) both choose so.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "vtrace-dump.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

struct fields {
	struct tep_event	*sw, *entry, *exit;
	struct tep_format_field	*prev_pid, *prev_comm, *next_pid, *next_comm;
	struct tep_format_field	*vcpu_id;	/* kvm_entry's */
};

/* What one host CPU's walk keeps */
struct walk {
	bool		started;
	bool		seen;		/* a switch or a kvm event went by */
	int		cur;		/* the task on the CPU */
	int		cur_idx;	/* its vCPU index, -1 none, -2 unknown */
	bool		cur_vcpu;	/* a vCPU thread: named so, or known by its kvm_entry */
	uint64_t	since;
	bool		in_guest;
	int		guest_tid;
	uint64_t	entry;
	uint64_t	last;
};

struct priv {
	struct fields	f;
	struct walk	w;
};

/**
 * vtrace_vcpu_idx_of - N of a thread named "CPU N/KVM" (QEMU's vCPU threads), else -1
 * @len:	at most this many bytes of @comm (a sched_switch's comm need not end in a NUL)
 *
 * The name exactly: "CPU ", N in decimal digits (at most VTRACE_VCPU_IDX_MAX), "/KVM".
 */
int vtrace_vcpu_idx_of(const char *comm, size_t len)
{
	size_t i = 4;
	int idx = 0;

	len = strnlen(comm, len);
	if (len < 9 || memcmp(comm, "CPU ", 4) || comm[i] < '0' || comm[i] > '9')
		return -1;
	for (; i < len && comm[i] >= '0' && comm[i] <= '9'; i++) {
		idx = idx * 10 + (comm[i] - '0');
		if (idx > VTRACE_VCPU_IDX_MAX)
			return -1;
	}
	return len - i == 4 && !memcmp(comm + i, "/KVM", 4) ? idx : -1;
}

static struct vtrace_vthread *thread_find(struct vtrace_vthreads *c, int tid)
{
	for (int i = c->nr_th - 1; i >= 0; i--)
		if (c->th[i].tid == tid)
			return &c->th[i];
	return NULL;
}

static struct vtrace_vthread *thread_get(struct vtrace_vthreads *c, int tid)
{
	struct vtrace_vthread *n = thread_find(c, tid);

	if (n)
		return n;
	if (c->nr_th == c->alloc_th) {
		int alloc = c->alloc_th ? 2 * c->alloc_th : 16;

		n = realloc(c->th, alloc * sizeof(*n));
		if (!n)
			return NULL;
		c->th = n;
		c->alloc_th = alloc;
	}
	n = &c->th[c->nr_th++];
	*n = (struct vtrace_vthread){ .tid = tid, .idx = -1, .entry_vcpu = -1 };
	return n;
}

static int span_add(struct vtrace_spans *sp, uint64_t start, uint64_t end)
{
	if (end < start)
		return 0;
	if (sp->nr == sp->alloc) {
		size_t alloc = sp->alloc ? 2 * sp->alloc : 64;
		struct vtrace_span *n = realloc(sp->s, alloc * sizeof(*n));

		if (!n)
			return -1;
		sp->s = n;
		sp->alloc = alloc;
	}
	sp->s[sp->nr++] = (struct vtrace_span){ start, end };
	return 0;
}

static uint64_t num(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = 0;

	tep_read_number_field(f, rec->data, &v);
	return v;
}

static int close_run(struct vtrace_vthreads *c, struct walk *w, uint64_t t)
{
	struct vtrace_vthread *th;

	if (w->cur_idx < 0 && !w->cur_vcpu)
		return 0;
	th = thread_get(c, w->cur);
	if (!th)
		return -1;
	if (w->cur_idx >= 0)
		th->idx = w->cur_idx;
	return span_add(&th->run, w->since, t);
}

static int close_guest(struct vtrace_vthreads *c, struct walk *w, uint64_t t)
{
	struct vtrace_vthread *th;

	if (!w->in_guest)
		return 0;
	w->in_guest = false;
	th = thread_get(c, w->guest_tid);
	return th ? span_add(&th->guest, w->entry, t) : -1;
}

/* A thread whose kvm_entry events were seen: a vCPU thread, whatever its name */
static bool is_kvm_thread(struct vtrace_vthreads *c, int tid)
{
	const struct vtrace_vthread *th = thread_find(c, tid);

	return th && th->entry_vcpu != -1;
}

/* The vCPU id a thread's kvm_entry events carry: -2 when they carry several */
static void note_entry_vcpu(struct vtrace_vthread *th, int64_t id)
{
	if (th->entry_vcpu == -1)
		th->entry_vcpu = id;
	else if (th->entry_vcpu != id)
		th->entry_vcpu = -2;
}

static int on_switch(struct vtrace_vthreads *c, const struct fields *f, struct walk *w,
		     struct tep_record *rec)
{
	const char *d = rec->data;
	int prev = num(f->prev_pid, rec);

	w->cur = prev;
	w->cur_idx = vtrace_vcpu_idx_of(d + f->prev_comm->offset, f->prev_comm->size);
	w->cur_vcpu = w->cur_idx >= 0 || is_kvm_thread(c, prev);
	if (w->in_guest && w->guest_tid == prev && close_guest(c, w, rec->ts))
		return -1;
	if (close_run(c, w, rec->ts))
		return -1;
	w->cur = num(f->next_pid, rec);
	w->cur_idx = vtrace_vcpu_idx_of(d + f->next_comm->offset, f->next_comm->size);
	w->cur_vcpu = w->cur_idx >= 0 || is_kvm_thread(c, w->cur);
	w->since = rec->ts;
	w->seen = true;
	return 0;
}

static int on_kvm(struct vtrace_vthreads *c, const struct fields *f, struct tep_handle *tep,
		  struct walk *w, struct tep_record *rec, bool entry)
{
	int tid = tep_data_pid(tep, rec);
	struct vtrace_vthread *th;

	if (w->in_guest && close_guest(c, w, rec->ts))
		return -1;
	th = thread_get(c, tid);
	if (!th)
		return -1;
	if (entry && f->vcpu_id) {
		note_entry_vcpu(th, num(f->vcpu_id, rec));
		/* known from here on: its time on the cpu counts as a run span */
		if (w->cur == tid && !w->cur_vcpu) {
			w->cur_vcpu = true;
			w->since = rec->ts;
		}
	}
	if (entry) {
		w->in_guest = true;
		w->guest_tid = tid;
		w->entry = rec->ts;
	} else if (!w->seen) {
		/* in the guest since before this CPU's first event */
		w->in_guest = true;
		w->guest_tid = tid;
		w->entry = 0;
		if (close_guest(c, w, rec->ts))
			return -1;
	}
	w->seen = true;
	return 0;
}

static void find_fields(struct tep_handle *tep, struct fields *f)
{
	memset(f, 0, sizeof(*f));
	f->sw = tep_find_event_by_name(tep, "sched", "sched_switch");
	if (f->sw) {
		f->prev_pid = tep_find_field(f->sw, "prev_pid");
		f->prev_comm = tep_find_field(f->sw, "prev_comm");
		f->next_pid = tep_find_field(f->sw, "next_pid");
		f->next_comm = tep_find_field(f->sw, "next_comm");
		if (!f->prev_pid || !f->prev_comm || !f->next_pid || !f->next_comm)
			f->sw = NULL;
	}
	f->entry = tep_find_event_by_name(tep, "kvm", "kvm_entry");
	f->exit = tep_find_event_by_name(tep, "kvm", "kvm_exit");
	if (!f->entry || !f->exit)
		f->entry = f->exit = NULL;
	f->vcpu_id = f->entry ? tep_find_field(f->entry, "vcpu_id") : NULL;
}

/**
 * vtrace_vthreads_init - get ready to read a host trace whose formats @tep holds
 *
 * Returns 0, or -1 (out of memory).  @vt->has_switch false: nothing to collect.
 */
int vtrace_vthreads_init(struct vtrace_vthreads *vt, struct tep_handle *tep)
{
	struct priv *p = calloc(1, sizeof(*p));

	memset(vt, 0, sizeof(*vt));
	if (!p)
		return -1;
	find_fields(tep, &p->f);
	vt->priv = p;
	vt->lo = UINT64_MAX;
	vt->has_kvm = p->f.entry;
	vt->has_switch = p->f.sw;
	return 0;
}

/* A host CPU's records follow, in time order */
void vtrace_vthreads_cpu_begin(struct vtrace_vthreads *vt)
{
	struct priv *p = vt->priv;

	memset(&p->w, 0, sizeof(p->w));
}

int vtrace_vthreads_record(struct vtrace_vthreads *c, struct tep_handle *tep,
			   struct tep_record *rec)
{
	struct priv *p = c->priv;
	const struct fields *f = &p->f;
	struct walk *w = &p->w;
	int id = tep_data_type(tep, rec);
	uint64_t before = w->started ? w->last : 0;

	if (!w->started) {
		w->started = true;
		w->cur = tep_data_pid(tep, rec);
		w->cur_idx = -2;
		w->since = 0;	/* running since before the trace */
		if (rec->ts < c->lo)
			c->lo = rec->ts;
	}
	w->last = rec->ts;
	if (rec->ts > c->hi)
		c->hi = rec->ts;
	if (rec->missed_events) {
		c->lost += rec->missed_events > 0 ? rec->missed_events : 1;
		/* what ran on this CPU from its last event to this one is not known */
		if (span_add(&c->gaps, before, rec->ts))
			return -1;
	}
	if (f->sw && id == f->sw->id) {
		c->nr_switch++;
		return on_switch(c, f, w, rec);
	}
	if (f->entry && id == f->entry->id) {
		c->nr_entry++;
		return on_kvm(c, f, tep, w, rec, true);
	}
	if (f->exit && id == f->exit->id)
		return on_kvm(c, f, tep, w, rec, false);
	return 0;
}

/* The CPU's trace ends: what runs goes on to the end of the whole trace */
int vtrace_vthreads_cpu_end(struct vtrace_vthreads *c, struct tep_handle *tep)
{
	struct walk *w = &((struct priv *)c->priv)->w;

	if (!w->started)
		return 0;
	if (w->cur_idx == -2) {
		const char *comm = tep_data_comm_from_pid(tep, w->cur);

		w->cur_idx = comm ? vtrace_vcpu_idx_of(comm, strlen(comm)) : -1;
	}
	if (close_guest(c, w, UINT64_MAX))
		return -1;
	return close_run(c, w, UINT64_MAX);
}

static int cmp_span(const void *a, const void *b)
{
	const struct vtrace_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Spans cut by the trace's start or end run to it */
static void finish_spans(struct vtrace_vthreads *c, struct vtrace_spans *sp)
{
	if (sp->nr)
		qsort(sp->s, sp->nr, sizeof(*sp->s), cmp_span);
	for (size_t i = 0; i < sp->nr; i++) {
		if (sp->s[i].start < c->lo)
			sp->s[i].start = c->lo;
		if (sp->s[i].end > c->hi)
			sp->s[i].end = c->hi;
	}
}

/* The losses sorted, those that overlap made one */
static void merge_gaps(struct vtrace_spans *g)
{
	size_t n = 0;

	if (!g->nr)
		return;
	qsort(g->s, g->nr, sizeof(*g->s), cmp_span);
	for (size_t i = 1; i < g->nr; i++) {
		if (g->s[i].start <= g->s[n].end) {
			if (g->s[i].end > g->s[n].end)
				g->s[n].end = g->s[i].end;
		} else {
			g->s[++n] = g->s[i];
		}
	}
	g->nr = n + 1;
}

/* Every CPU read: the threads named, their spans sorted */
void vtrace_vthreads_finish(struct vtrace_vthreads *c, struct tep_handle *tep)
{
	for (int i = 0; i < c->nr_th; i++) {
		struct vtrace_vthread *t = &c->th[i];

		if (t->idx < 0) {
			const char *comm = tep_data_comm_from_pid(tep, t->tid);

			t->idx = comm ? vtrace_vcpu_idx_of(comm, strlen(comm)) : -1;
		}
		finish_spans(c, &t->run);
		finish_spans(c, &t->guest);
	}
	merge_gaps(&c->gaps);
}

/* @t falls where a CPU of the host trace lost events (any thread may have run there) */
static bool in_gap(const struct vtrace_vthreads *vt, uint64_t t)
{
	const struct vtrace_span *g = vt->gaps.s;
	size_t lo = 0, hi = vt->gaps.nr;

	while (lo < hi) {		/* the first gap starting after @t */
		size_t mid = lo + (hi - lo) / 2;

		if (g[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && t <= g[lo - 1].end;
}

/* A host trace.dat, raw time stamps (dat-records.c) */
int vtrace_vthreads_read_dat(struct vtrace_vthreads *vt, const char *path)
{
	struct vtrace_dat_records *h = vtrace_dat_records_open(path);
	struct tep_handle *tep;
	int ret;

	if (!h)
		return -1;
	tep = vtrace_dat_records_tep(h);
	ret = vtrace_vthreads_init(vt, tep);
	for (int cpu = 0; cpu < vtrace_dat_records_cpus(h) && !ret; cpu++) {
		struct tep_record *rec;

		vtrace_vthreads_cpu_begin(vt);
		while (!ret && (ret = vtrace_dat_records_next(h, cpu, &rec)) > 0)
			ret = vtrace_vthreads_record(vt, tep, rec);
		if (!ret)
			ret = vtrace_vthreads_cpu_end(vt, tep);
	}
	if (!ret)
		vtrace_vthreads_finish(vt, tep);
	vtrace_dat_records_close(h);
	return ret;
}

/**
 * vtrace_vthreads_read_pages - the vCPU threads of a host dump folder, or of a
 * trace.dat read page by page (vtrace_dump_open_dat())
 * @bad_pages:	adds the pages skipped as damaged (VTRACE_DUMP_SKIP_BAD)
 *
 * Returns 0, or -1 with an error set.  Damaged pages are left to the
 * merge's own reading to report.
 */
int vtrace_vthreads_read_pages(struct vtrace_vthreads *vt, struct vtrace_dump *d,
			       uint64_t *bad_pages)
{
	struct tep_handle *tep = vtrace_dump_tep(d);
	int ret = 0;

	if (vtrace_vthreads_init(vt, tep))
		return -1;
	for (uint32_t cpu = 0; cpu < vtrace_dump_info(d)->nr_cpus && !ret; cpu++) {
		struct vtrace_cpu_reader *r = vtrace_cpu_reader_open(d, cpu);
		struct tep_record *rec;
		bool quiet;
		int filler;

		if (!r)
			return -1;
		vtrace_vthreads_cpu_begin(vt);
		quiet = vtrace_set_quiet(true);
		while (!ret && vtrace_cpu_reader_next(r, &rec, &filler) > 0)
			if (!filler)
				ret = vtrace_vthreads_record(vt, tep, rec);
		vtrace_set_quiet(quiet);
		*bad_pages += vtrace_cpu_reader_counts(r)->bad_pages;
		vtrace_cpu_reader_close(r);
		if (!ret)
			ret = vtrace_vthreads_cpu_end(vt, tep);
	}
	vtrace_set_error("%s", "");
	if (!ret)
		vtrace_vthreads_finish(vt, tep);
	return ret;
}

void vtrace_vthreads_free(struct vtrace_vthreads *vt)
{
	for (int i = 0; i < vt->nr_th; i++) {
		free(vt->th[i].run.s);
		free(vt->th[i].guest.s);
	}
	free(vt->th);
	free(vt->gaps.s);
	free(vt->priv);
	memset(vt, 0, sizeof(*vt));
}

/**
 * vtrace_vthread_name - how a vCPU thread is named in the tools' messages
 * @t:		the thread
 * @buf, @len:	where the name is written
 *
 * "\"CPU 1/KVM\"" for a thread QEMU named (-name ...,debug-threads=on), else
 * "(not named CPU N/KVM: its kvm_entry events' vcpu_id 1)".  Returns @buf.
 */
const char *vtrace_vthread_name(const struct vtrace_vthread *t, char *buf, size_t len)
{
	if (t->idx >= 0)
		snprintf(buf, len, "\"CPU %d/KVM\"", t->idx);
	else
		snprintf(buf, len, "(not named CPU N/KVM: its kvm_entry events' vcpu_id %lld)",
			 (long long)t->entry_vcpu);
	return buf;
}

/* ---- which thread ran a guest CPU */

/* A thread named after vCPU @vcpu_idx, or unnamed with kvm_entry events of @vcpu_id */
static bool is_candidate(const struct vtrace_vthread *t, int vcpu_idx, int64_t vcpu_id)
{
	if (vcpu_idx < 0)
		return false;
	return t->idx == vcpu_idx || (t->idx < 0 && vcpu_id >= 0 && t->entry_vcpu == vcpu_id);
}

/*
 * A candidate of @h's VM: a thread that wrote another VM's offsets is that
 * VM's (vtrace_host records the writer: QEMU writes a vCPU's offset from its
 * own thread), and is left out, counted in @fit->others; one that wrote
 * @h's VM's is counted in @fit->own.
 */
static bool of_vm(struct vtrace_vcpu_fit *fit, const struct vtrace_vcpu_history *h,
		  const struct vtrace_vthread *t, bool count)
{
	int pid = vtrace_offsets_thread_pid(h->offsets, t->tid);

	if (pid > 0 && pid != h->pid) {
		fit->others += count;
		return false;
	}
	fit->own += count && pid == h->pid;
	return true;
}

/*
 * @fit's candidates for the vCPU of history @h: every thread named "CPU
 * N/KVM" for its index N and every unnamed one whose kvm_entry events carry
 * its vCPU id (none for a negative index), but the threads known to be
 * another VM's.  Returns 0, or -1 out of memory.
 */
int vtrace_vcpu_fit_init(struct vtrace_vcpu_fit *fit, const struct vtrace_vthreads *vt,
			 const struct vtrace_vcpu_history *h, uint64_t tol)
{
	int vcpu_idx = h->vcpu_idx;
	int64_t vcpu_id = h->vcpu_id;
	int n = 0;

	memset(fit, 0, sizeof(*fit));
	fit->vt = vt;
	fit->tol = tol;
	for (int i = 0; i < vt->nr_th; i++)
		n += is_candidate(&vt->th[i], vcpu_idx, vcpu_id) && of_vm(fit, h, &vt->th[i], true);
	if (n && !(fit->cand = calloc(n, sizeof(*fit->cand)))) {
		vtrace_set_error("out of memory for %d threads of vCPU %d", n, vcpu_idx);
		return -1;
	}
	for (int i = 0; n && i < vt->nr_th; i++) {
		struct vtrace_vthread *t = &vt->th[i];
		struct vtrace_vcpu_cand *k;

		if (!is_candidate(t, vcpu_idx, vcpu_id) || !of_vm(fit, h, t, false))
			continue;
		k = &fit->cand[fit->nr_cand++];
		k->t = t;
		k->sp = t->guest.nr ? &t->guest : &t->run;
		k->to_start = k->to_end = UINT64_MAX;
	}
	return 0;
}

void vtrace_vcpu_fit_free(struct vtrace_vcpu_fit *fit)
{
	free(fit->cand);
	fit->cand = NULL;
	fit->nr_cand = 0;
}

/* Inside a guest window of a candidate thread? (src/lib/tsc.c's in_guest: 1, 0, -1) */
int vtrace_vcpu_fit_in_guest(void *ctx, uint64_t t)
{
	const struct vtrace_vcpu_fit *fit = ctx;

	if (t < fit->vt->lo || t > fit->vt->hi)
		return -1;
	for (int i = 0; i < fit->nr_cand; i++) {
		const struct vtrace_spans *sp = &fit->cand[i].t->guest;
		size_t lo = 0, hi = sp->nr;

		while (lo < hi) {	/* the first span starting after t */
			size_t mid = lo + (hi - lo) / 2;

			if (sp->s[mid].start <= t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && t <= sp->s[lo - 1].end)
			return 1;
	}
	return 0;
}

/* Has a candidate kvm_entry..kvm_exit windows (run spans are too wide to tell events apart)? */
bool vtrace_vcpu_fit_has_windows(const struct vtrace_vcpu_fit *fit)
{
	for (int i = 0; i < fit->nr_cand; i++)
		if (fit->cand[i].t->guest.nr)
			return true;
	return false;
}

/* The last span starting at or before @t (the cursor moves on; back: a binary search) */
static size_t find_span(struct vtrace_vcpu_cand *k, uint64_t t)
{
	const struct vtrace_span *s = k->sp->s;
	size_t nr = k->sp->nr, lo = 0, hi;

	if (k->cur < nr && s[k->cur].start <= t) {
		while (k->cur + 1 < nr && s[k->cur + 1].start <= t)
			k->cur++;
		return k->cur;
	}
	hi = k->cur < nr ? k->cur : nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	k->cur = lo ? lo - 1 : 0;
	return lo ? lo - 1 : SIZE_MAX;
}

static void cand_event(struct vtrace_vcpu_cand *k, uint64_t t, const struct vtrace_vcpu_fit *fit)
{
	const struct vtrace_span *s = k->sp->s;
	size_t i = k->sp->nr ? find_span(k, t) : SIZE_MAX;
	uint64_t dist = UINT64_MAX;

	k->checked++;
	if (i != SIZE_MAX && t <= s[i].end) {
		if (t - s[i].start < k->to_start)
			k->to_start = t - s[i].start;
		if (s[i].end - t < k->to_end)
			k->to_end = s[i].end - t;
		return;
	}
	if (i != SIZE_MAX)
		dist = t - s[i].end;
	i = i == SIZE_MAX ? 0 : i + 1;
	if (i < k->sp->nr && s[i].start - t < dist)
		dist = s[i].start - t;
	if (dist == UINT64_MAX)
		dist = t - fit->vt->lo;	/* the thread never ran in the host trace */
	/*
	 * where the host trace lost events, the thread may have run unseen: not
	 * a proof against the timeline, counted apart
	 */
	if (dist > fit->tol && in_gap(fit->vt, t)) {
		k->checked--;
		k->in_loss++;
		return;
	}
	if (dist > k->worst)
		k->worst = dist;
	if (dist > fit->tol)
		k->outside++;
}

/*
 * A guest event at host TSC @host_tsc, looked up in the spans of every
 * candidate still in the running (VTRACE_VCPU_HOPELESS: on a host of many
 * VMs the others' threads drop out early, so an event costs about one
 * lookup).  Returns 0, or 1 when it is outside the host trace (not checked).
 */
int vtrace_vcpu_fit_event(struct vtrace_vcpu_fit *fit, uint64_t host_tsc)
{
	uint64_t least = UINT64_MAX;

	if (host_tsc < fit->vt->lo || host_tsc > fit->vt->hi) {
		fit->unchecked++;
		return 1;
	}
	for (int i = 0; i < fit->nr_cand; i++) {
		struct vtrace_vcpu_cand *k = &fit->cand[i];

		if (k->outside > fit->least + VTRACE_VCPU_HOPELESS)
			continue;
		cand_event(k, host_tsc, fit);
		if (k->outside < least)
			least = k->outside;
	}
	fit->least = least;
	return 0;
}

/* The best candidate (fewest outside, then most spans); a tie to @named if it is one */
static const struct vtrace_vcpu_cand *best(const struct vtrace_vcpu_fit *fit, int named,
					   bool *ambiguous)
{
	const struct vtrace_vcpu_cand *b = NULL, *n = NULL;
	int ties = 0;

	for (int i = 0; i < fit->nr_cand; i++) {
		const struct vtrace_vcpu_cand *k = &fit->cand[i];

		if (b && k->outside == b->outside && k->sp->nr == b->sp->nr)
			ties++;
		if (!b || k->outside < b->outside ||
		    (k->outside == b->outside && k->sp->nr > b->sp->nr)) {
			b = k;
			ties = 0;
		}
	}
	*ambiguous = b && fit->nr_cand > 1 && (ties || !b->checked);
	if (!*ambiguous || named <= 0)
		return b;
	for (int i = 0; i < fit->nr_cand && !n; i++)
		if (fit->cand[i].t->tid == named && fit->cand[i].outside == b->outside &&
		    fit->cand[i].sp->nr == b->sp->nr)
			n = &fit->cand[i];
	if (n)
		*ambiguous = false;
	return n ? n : b;
}

/**
 * vtrace_vcpu_fit_best - the candidate that fits: fewest outside, then most spans
 * @ambiguous:	set when another candidate fits as well (or none was checked), and
 *		the capture's manifest names none of those that fit best
 *
 * Returns NULL when the vCPU has no thread in the host trace.
 */
const struct vtrace_vcpu_cand *vtrace_vcpu_fit_best(const struct vtrace_vcpu_fit *fit,
						    bool *ambiguous)
{
	bool amb;

	return best(fit, fit->named_tid, ambiguous ? ambiguous : &amb);
}

/**
 * vtrace_vcpu_fit_by_name - whether the fit's best thread is the manifest's choice
 *
 * True when other threads fit the guest CPU's events as well, and the
 * capture's manifest (@fit->named_tid) told which of them is its vCPU's.
 */
bool vtrace_vcpu_fit_by_name(const struct vtrace_vcpu_fit *fit)
{
	bool amb, amb_named;

	best(fit, 0, &amb);
	best(fit, fit->named_tid, &amb_named);
	return amb && !amb_named;
}

/**
 * vtrace_vcpu_fit_tid - the host thread of a guest CPU's vCPU, as its events so far tell
 *
 * The thread named after the vCPU whose spans hold the guest CPU's events
 * read so far (vtrace_vcpu_fit_best()).  Returns -1 when that is not
 * known: no fit (@fit NULL), no thread of that name in the host trace, or
 * several threads of that name (several VMs) that fit as well.
 */
int vtrace_vcpu_fit_tid(const struct vtrace_vcpu_fit *fit)
{
	const struct vtrace_vcpu_cand *k;
	bool amb;

	if (!fit || !fit->nr_cand)
		return -1;
	k = vtrace_vcpu_fit_best(fit, &amb);
	return k && !amb ? k->t->tid : -1;
}
