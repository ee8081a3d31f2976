// SPDX-License-Identifier: GPL-2.0
/* classify-print.c: --explain's summary by cause, as text or JSON lines (classify.c). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "classify-local.h"
#include "vtrace-kvm.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

static const char *const kind_key[] = {
	[C_HOST_TASK] = "host_task", [C_HOST_IRQ] = "host_irq",
	[C_HOST_SOFTIRQ] = "host_softirq", [C_HOST_IDLE] = "host_idle",
	[C_HOST_NOT_RUNNING] = "host_not_running",
	[C_VCPU_BLOCKED] = "vcpu_blocked", [C_VCPU_RUNNING] = "vcpu_running",
	[C_VCPU_EXIT] = "vcpu_exit", [C_VCPU_GUEST] = "vcpu_guest",
	[C_GUEST_IRQ] = "guest_irq", [C_GUEST_SOFTIRQ] = "guest_softirq",
	[C_GUEST_TASK] = "guest_task", [C_GUEST_SELF] = "guest_self", [C_UNKNOWN] = "unknown",
	[C_VCPU_UNKNOWN] = "vcpu_thread_unknown", [C_EVENTS_LOST] = "events_lost",
	[C_OTHER] = "other",
	[C_PATH_HOST_TIMER] = "timer_host_late", [C_PATH_TO_ENTRY] = "timer_to_entry",
	[C_PATH_GUEST_IRQ] = "timer_guest_irq", [C_PATH_GUEST] = "timer_guest",
};

static const char *const kind_text[] = {
	[C_HOST_TASK] = "host task %s on the vCPU's host cpu",
	[C_HOST_IRQ] = "host interrupts",
	[C_HOST_SOFTIRQ] = "host softirq work%s%s",
	[C_HOST_IDLE] = "host cpu idle, the vCPU waiting",
	[C_HOST_NOT_RUNNING] = "host cpu not running (stopped below the host)",
	[C_VCPU_BLOCKED] = "vCPU thread blocked in the host (D state)",
	[C_VCPU_RUNNING] = "vCPU thread running, guest idle (guest mode or exits)",
	[C_VCPU_EXIT] = "vCPU in the host: exit %s",
	[C_VCPU_GUEST] = "vCPU in guest mode, guest idle",
	[C_GUEST_IRQ] = "guest interrupts",
	[C_GUEST_SOFTIRQ] = "guest softirq work",
	[C_GUEST_TASK] = "guest task %s",
	[C_GUEST_SELF] = "the task itself, running past its due time",
	[C_UNKNOWN] = "not covered by the host trace",
	[C_VCPU_UNKNOWN] = "vCPU's host thread not told apart",
	[C_EVENTS_LOST] = "trace lost events here (%s): not told apart",
	[C_OTHER] = "other causes (past 31 in one window)",
	[C_PATH_HOST_TIMER] = "host fired the vCPU's timer late, %s",
	[C_PATH_TO_ENTRY] = "timer fired, before the vCPU's entry, %s",
	[C_PATH_GUEST_IRQ] = "guest's timer irq not yet taken, %s",
	[C_PATH_GUEST] = "guest's timer handler, wake-up, scheduling",
};

/**
 * classify_select - the summary counts the late wake-ups of @group only
 */
void classify_select(struct classify *c, int group)
{
	c->sel = group;
}

/**
 * classify_cause_text - a cause's words ("host task e2e_hog on the vCPU's host cpu")
 */
void classify_cause_text(struct classify *c, int ci, char *buf, size_t len)
{
	const struct cause *z = &c->causes[ci];

	if (z->kind == C_HOST_SOFTIRQ)
		snprintf(buf, len, kind_text[z->kind], z->task[0] ? " in " : "", z->task);
	else
		snprintf(buf, len, kind_text[z->kind], z->task);
}

/**
 * classify_key_text - the words of a cause given by its key, as explain's JSON
 * lines name it ("host_task", "e2e_hog"), for a reader of those lines
 */
void classify_key_text(const char *key, const char *task, char *buf, size_t len)
{
	for (size_t k = 0; k < sizeof(kind_key) / sizeof(kind_key[0]); k++) {
		if (!kind_key[k] || strcmp(kind_key[k], key) || !kind_text[k])
			continue;
		if (k == C_HOST_SOFTIRQ)
			snprintf(buf, len, kind_text[k], task[0] ? " in " : "", task);
		else
			snprintf(buf, len, kind_text[k], task);
		return;
	}
	snprintf(buf, len, "%s %s", key, task);
}

const char *classify_cause_key(struct classify *c, int ci, const char **task)
{
	*task = c->causes[ci].task;
	return kind_key[c->causes[ci].kind];
}

/* a comm as a JSON string's body */
/* the causes with wake-ups, most delay first, then -1 (the wake-ups' parts keep their indexes) */
static int *ordered(struct classify *c)
{
	int *o = calloc(c->nr_causes + 1, sizeof(*o));
	int n = 0;

	for (int i = 0; o && i < c->nr_causes; i++) {
		int j;

		if (!c->causes[i].count || c->causes[i].group != c->sel)
			continue;
		for (j = n++; j > 0; j--) {
			const struct cause *x = &c->causes[o[j - 1]], *y = &c->causes[i];

			if (x->total > y->total || (x->total == y->total && x->kind <= y->kind))
				break;
			o[j] = o[j - 1];
		}
		o[j] = i;
	}
	if (o)
		o[n] = -1;
	return o;
}

static void print_ms(FILE *out, uint64_t ns, int width)
{
	fprintf(out, "%*" PRIu64 ".%03" PRIu64, width > 4 ? width - 4 : 0, ns / 1000000,
		ns % 1000000 / 1000);
}

static const char *const no_exits =
	"the host trace has no kvm:kvm_entry/kvm_exit events, so \"vCPU thread running\" is guest"
	" mode and exits the host handled together";
static const char *const half_exits =
	"the host trace has kvm:kvm_exit or kvm:kvm_entry but not both, so \"vCPU thread"
	" running\" is guest mode and exits the host handled together";

static const char *const no_ticks =
	"the host trace has no irq_vectors:local_timer_entry events, so a host cpu that did not"
	" run (stopped below the host) counts as what it last did (idle, a task, the vCPU)";

static bool have_modes(const struct classify *c)
{
	return c->exits && c->entries;
}

/* the host cpus of the late wake-ups' vCPUs whose silences are not told apart: "1,3" */
static void cpus_not_told(const struct classify *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; c->in_window && i < c->nr_cpus[c->host] && n < len; i++)
		if ((c->in_window[i] & 1 << c->sel) && !cl_tick_of(c, i)->quiet_ns)
			n += snprintf(buf + n, len - n, "%s%d", n ? "," : "", i);
}

/* a host cpu's line: its silences told apart as the host not running, or why not */
static void print_text_tick(const struct classify *c, FILE *out, int cpu)
{
	const struct host_tick *tk = cl_tick_of(c, cpu);
	uint64_t median = tk->median, ticks = tk->ticks, thr = tk->quiet_ns;
	int n = tk->intervals;

	if (!thr) {
		fprintf(out, "Host not running: not told apart on cpu %d: %s", cpu, tk->why);
		if (ticks) {
			fprintf(out, ": %" PRIu64 " local_timer_entry, %d intervals while busy, median ",
				ticks, n);
			print_ms(out, median, 0);
			fputs(" ms", out);
		}
		fputs(".\n", out);
		return;
	}
	fprintf(out, "Host not running: told apart on cpu %d: a silence of ", cpu);
	print_ms(out, thr, 0);
	fputs(" ms or more (", out);
	if (thr == QUIET_TICKS * median)
		fputs("3 ticks of ", out);
	else
		fputs("3 ms at the least; its tick ", out);
	print_ms(out, median, 0);
	fprintf(out, " ms: the median of %d intervals while busy).\n", n);
}

static void print_jsonl_ticks(const struct classify *c, FILE *out)
{
	for (int i = 0; c->in_window && i < c->nr_cpus[c->host]; i++) {
		const struct host_tick *tk = cl_tick_of(c, i);

		if (!(c->in_window[i] & 1 << c->sel))
			continue;
		fprintf(out, "{\"type\":\"host_cpu\",\"cpu\":%d,\"ticks\":%" PRIu64 ",\"intervals\":%d"
			",\"tick_ns\":%" PRIu64 ",\"quiet_ns\":%" PRIu64 ",\"not_told_apart\":\"%s\"}\n",
			i, tk->ticks, tk->intervals, tk->median, tk->quiet_ns, tk->why_key);
	}
}

/**
 * classify_mode_name - "guest mode", an exit's reason ("hlt", "io"), "not recorded"
 */
const char *classify_mode_name(struct classify *c, int state)
{
	if (state == X_UNKNOWN)
		return "not recorded";
	if (state == X_GUEST)
		return "guest mode";
	return c->reasons.name[state - 1];
}

static const char *mode_key(int state)
{
	return state == X_UNKNOWN ? "unknown" : state == X_GUEST ? "guest" : "exit";
}

/**
 * classify_print_modes - a late wake-up's window by the vCPU's mode, one line
 */
void classify_print_modes(struct classify *c, FILE *out, const struct late_parts *p)
{
	if (!have_modes(c))
		return;
	if (p->nr_lost) {
		fputs("vCPU modes: not told apart: the trace lost events in this window.\n", out);
		return;
	}
	if (!p->exits) {
		fprintf(out, "vCPU modes: no kvm_entry/kvm_exit of the vCPU thread (tid %d) recorded.\n",
			p->vcpu_tid);
		return;
	}
	fprintf(out, "vCPU modes (kvm_entry/kvm_exit of tid %d):", p->vcpu_tid);
	for (int i = 0; i < p->nr_modes; i++) {
		const struct late_mode *m = &p->mode[i];

		fprintf(out, "%s %s%s ", i ? ";" : "", m->state > X_GUEST ? "exit " : "",
			classify_mode_name(c, m->state));
		print_ms(out, m->ns, 0);
		if (m->state == X_UNKNOWN) {
			fputs(" ms", out);
			continue;
		}
		fprintf(out, " ms (%" PRIu32 " %s, longest ", m->count, m->state == X_GUEST ?
			(m->count == 1 ? "entry" : "entries") : (m->count == 1 ? "exit" : "exits"));
		print_ms(out, m->max, 0);
		fputs(" ms)", out);
	}
	fputs(".\n", out);
}

/**
 * classify_json_modes - the same as a JSON array's members
 */
void classify_json_modes(struct classify *c, FILE *out, const struct late_parts *p)
{
	for (int i = 0; i < p->nr_modes; i++) {
		const struct late_mode *m = &p->mode[i];

		fprintf(out, "%s{\"mode\":\"%s\",\"reason\":\"", i ? "," : "", mode_key(m->state));
		if (m->state > X_GUEST)
			vtrace_json_chars(out, classify_mode_name(c, m->state));
		fprintf(out, "\",\"count\":%" PRIu32 ",\"ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}",
			m->count, m->ns, m->max);
	}
}

static void print_ns(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/*
 * "4 events in 2 losses", "2 events in 2 losses, 1 not counted", "events
 * in 1 loss, not counted", "events in 2 losses, none counted"
 */
static void print_lost_count(FILE *out, uint64_t events, uint64_t losses, uint64_t uncounted)
{
	if (events || uncounted < losses)
		fprintf(out, "%" PRIu64 " event%s", events, events == 1 ? "" : "s");
	else
		fputs("events", out);
	fprintf(out, " in %" PRIu64 " loss%s", losses, losses == 1 ? "" : "es");
	if (uncounted && uncounted < losses)
		fprintf(out, ", %" PRIu64 " not counted", uncounted);
	else if (uncounted)
		fputs(losses == 1 ? ", not counted" : ", none counted", out);
}

/**
 * classify_print_lost - where the trace lost events in a late wake-up's window, a line
 * @machines:	the machines, by classify's index (pass 2's: pass 1's are closed)
 *
 * "Events lost where this window rests: host cpu 1 lost 2 events in 1 loss
 * between 4.047929000 and 4.048930000: what ran there is not known."
 */
void classify_print_lost(FILE *out, const struct late_parts *p, struct machine **machines)
{
	if (!p->nr_lost)
		return;
	fputs("Events lost where this window rests:", out);
	for (int i = 0; i < p->nr_lost; i++) {
		const struct late_lost *l = &p->lost[i];

		fprintf(out, "%s %s cpu %d lost ", i ? ";" : "", machines[l->mi]->name, l->cpu);
		print_lost_count(out, l->events, l->losses, l->uncounted);
		fputs(" between ", out);
		print_ns(out, l->from);
		fputs(" and ", out);
		if (l->to == UINT64_MAX)
			fputs("its next event (after running)", out);
		else
			print_ns(out, l->to);
	}
	fputs(": what ran there is not known.\n", out);
}

/**
 * classify_json_lost - the same as a JSON array's members
 */
void classify_json_lost(FILE *out, const struct late_parts *p, struct machine **machines)
{
	for (int i = 0; i < p->nr_lost; i++) {
		const struct late_lost *l = &p->lost[i];

		fprintf(out, "%s{\"machine\":\"", i ? "," : "");
		vtrace_json_chars(out, machines[l->mi]->name);
		fprintf(out, "\",\"cpu\":%d,\"losses\":%" PRIu32 ",\"events\":%" PRIu64
			",\"uncounted\":%" PRIu32 ",\"from_ns\":%" PRIu64 ",\"to_ns\":", l->cpu,
			l->losses, l->events, l->uncounted, l->from);
		if (l->to == UINT64_MAX)
			fputs("null}", out);
		else
			fprintf(out, "%" PRIu64 "}", l->to);
	}
}

/* the late wake-ups of the summary under C_EVENTS_LOST */
static uint64_t lost_wakeups(const struct classify *c)
{
	uint64_t n = 0;

	for (int i = 0; i < c->nr_causes; i++)
		if (c->causes[i].kind == C_EVENTS_LOST && c->causes[i].group == c->sel)
			n += c->causes[i].count;
	return n;
}

/*
 * What the traces lost in all, once, when they lost any: "Events lost:
 * host 4 events in 2 losses (cpu 1); guest g1 2 events in 2 losses, 1 not
 * counted (cpu 1). ..."
 */
static void print_text_lost(const struct classify *c, FILE *out)
{
	bool any = false;

	for (int mi = 0; mi < c->nr; mi++) {
		uint64_t losses = 0, events = 0, uncounted = 0;
		int cpus = 0;

		for (int k = 0; k < c->nr_cpus[mi]; k++) {
			losses += c->lost[mi][k].n;
			events += c->lost[mi][k].events;
			uncounted += c->lost[mi][k].uncounted;
		}
		if (!losses)
			continue;
		fprintf(out, "%s%s%s ", any ? "; " : "Events lost: ",
			c->machines[mi]->guest ? "guest " : "", c->machines[mi]->name);
		print_lost_count(out, events, losses, uncounted);
		fputs(" (cpu", out);
		for (int k = 0; k < c->nr_cpus[mi]; k++)
			if (c->lost[mi][k].n)
				fprintf(out, "%s%d", cpus++ ? "," : " ", k);
		fputc(')', out);
		any = true;
	}
	if (any)
		fprintf(out, ". The late wake-ups whose windows meet one (%" PRIu64 " of %" PRIu64
			") are under \"trace lost events here\": not told apart.\n", lost_wakeups(c),
			c->late_g[c->sel]);
}

static void print_jsonl_lost(const struct classify *c, FILE *out)
{
	for (int mi = 0; mi < c->nr; mi++) {
		for (int k = 0; k < c->nr_cpus[mi]; k++) {
			const struct lost *l = &c->lost[mi][k];

			if (!l->n)
				continue;
			fputs("{\"type\":\"events_lost\",\"machine\":\"", out);
			vtrace_json_chars(out, c->machines[mi]->name);
			fprintf(out, "\",\"cpu\":%d,\"losses\":%zu,\"events\":%" PRIu64
				",\"uncounted\":%" PRIu64 "}\n", k, l->n, l->events, l->uncounted);
		}
	}
}

/* the modes of a cause's wake-ups, most time first: X_STATES indexes, -1 ended */
static void modes_ordered(const struct cause *z, int *o)
{
	int n = 0;

	for (int i = 0; i < X_STATES; i++) {
		int j;

		if (!z->x[i].total && !z->x[i].count)
			continue;
		for (j = n++; j > 0 && z->x[o[j - 1]].total < z->x[i].total; j--)
			o[j] = o[j - 1];
		o[j] = i;
	}
	o[n] = -1;
}

/* A row of the summary's tables: TEXT (indented, then padded to @width), count, total, max */
static void print_row(FILE *out, int indent, int width, const char *text, uint64_t count,
		      uint64_t total, uint64_t max)
{
	fprintf(out, "%*s%-*s %8" PRIu64 " ", indent, "", width, text, count);
	print_ms(out, total, 10);
	fputc(' ', out);
	print_ms(out, max, 10);
}

static void print_text_modes(struct classify *c, FILE *out, const int *o)
{
	int mo[X_STATES + 1];
	char text[80];

	fprintf(out, "\nvCPU modes in the late wake-ups' windows, by main cause (%" PRIu64
		" kvm_exit, %" PRIu64 " kvm_entry in the host trace):\n", c->exits, c->entries);
	fputs("  cause / mode                                           count   total ms"
	      "     max ms\n", out);
	for (int i = 0; o[i] >= 0; i++) {
		const struct cause *z = &c->causes[o[i]];

		classify_cause_text(c, o[i], text, sizeof(text));
		fprintf(out, "  %s\n", text);
		if (!z->x) {
			fputs(z->kind == C_EVENTS_LOST ? "    (not told apart: the trace lost events)\n"
			      : "    (no kvm_entry/kvm_exit of these vCPU threads)\n", out);
			continue;
		}
		modes_ordered(z, mo);
		for (int k = 0; mo[k] >= 0; k++) {
			const struct xstat *x = &z->x[mo[k]];
			int state = mo[k] - 1;

			snprintf(text, sizeof(text), "%s%s", state > X_GUEST ? "exit " : "",
				 classify_mode_name(c, state));
			print_row(out, 4, 50, text, x->count, x->total, x->max);
			fputc('\n', out);
		}
	}
}

static void print_text(struct classify *c, FILE *out, const int *o)
{
	char text[80];

	fputs("  cause                                                  wake-ups   total ms"
	      "     max ms   share\n", out);
	for (int i = 0; o[i] >= 0; i++) {
		const struct cause *z = &c->causes[o[i]];

		classify_cause_text(c, o[i], text, sizeof(text));
		print_row(out, 2, 54, text, z->count, z->total, z->max);
		fprintf(out, "  %5.1f%%\n", c->delay_g[c->sel] ?
			100.0 * z->total / c->delay_g[c->sel] : 0.0);
	}
	print_text_lost(c, out);
	if (c->host < 0) {
		fputs("No host trace (--host): the host's causes cannot be told apart.\n", out);
		return;
	}
	if (!c->ticks)
		fprintf(out, "Not told apart: %s.\n", no_ticks);
	for (int i = 0; c->ticks && c->in_window && i < c->nr_cpus[c->host]; i++)
		if (c->in_window[i] & 1 << c->sel)
			print_text_tick(c, out, i);
	if (!have_modes(c))
		fprintf(out, "Not told apart: %s.\n", c->exits || c->entries ? half_exits : no_exits);
	else
		print_text_modes(c, out, o);
}

static void print_jsonl_modes(struct classify *c, FILE *out, const struct cause *z)
{
	int mo[X_STATES + 1];

	modes_ordered(z, mo);
	for (int k = 0; mo[k] >= 0; k++) {
		const struct xstat *x = &z->x[mo[k]];

		fprintf(out, "{\"type\":\"mode\",\"cause\":\"%s\",\"task\":\"", kind_key[z->kind]);
		vtrace_json_chars(out, z->task);
		fprintf(out, "\",\"mode\":\"%s\",\"reason\":\"", mode_key(mo[k] - 1));
		if (mo[k] - 1 > X_GUEST)
			vtrace_json_chars(out, classify_mode_name(c, mo[k] - 1));
		fprintf(out, "\",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%"
			PRIu64 "}\n", x->count, x->total, x->max);
	}
}

static void print_jsonl(struct classify *c, FILE *out, const int *o)
{
	for (int i = 0; o[i] >= 0; i++) {
		const struct cause *z = &c->causes[o[i]];

		fprintf(out, "{\"type\":\"cause\",\"cause\":\"%s\",\"task\":\"", kind_key[z->kind]);
		vtrace_json_chars(out, z->task);
		fprintf(out, "\",\"wakeups\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%"
			PRIu64 ",\"share\":%.4f}\n", z->count, z->total, z->max,
			c->delay_g[c->sel] ? (double)z->total / c->delay_g[c->sel] : 0.0);
	}
	for (int i = 0; have_modes(c) && o[i] >= 0; i++)
		if (c->causes[o[i]].x)
			print_jsonl_modes(c, out, &c->causes[o[i]]);
}

/**
 * classify_print - the summary: late wake-ups per cause, most delay first
 * @what:	the tasks ("cyclictest", "a guest task")
 * @json_more:	more of the jsonl summary's fields (",\"selection\":...")
 */
int classify_print(struct classify *c, FILE *out, bool jsonl, const char *what,
		   uint64_t threshold, uint64_t wakeups, const char *json_more)
{
	int *o = ordered(c);
	char cpus[64] = "";

	if (!o)
		return -1;
	if (jsonl) {
		if (c->host >= 0 && c->ticks)
			cpus_not_told(c, cpus, sizeof(cpus));
		fprintf(out, "{\"type\":\"summary\",\"task\":\"");
		vtrace_json_chars(out, what);
		fprintf(out, "\"%s,\"threshold_ns\":%" PRIu64 ",\"wakeups\":%" PRIu64
			",\"late\":%" PRIu64 ",\"delay_ns\":%" PRIu64 ",\"host\":%s"
			",\"kvm_exits\":%" PRIu64 ",\"kvm_entries\":%" PRIu64 ",\"ticks\":%" PRIu64
			",\"not_told_apart\":\"%s%s%s%s\"}\n",
			json_more, threshold, wakeups, c->late_g[c->sel], c->delay_g[c->sel],
			c->host >= 0 ? "true" : "false",
			c->exits, c->entries, c->ticks, c->host < 0 ? "host causes (no --host)" :
			have_modes(c) ? "" : "guest mode, exit handling",
			c->host < 0 || (c->ticks && !cpus[0]) || have_modes(c) ? "" : "; ",
			c->host < 0 || (c->ticks && !cpus[0]) ? "" : c->ticks ?
			"host not running on cpu " : "host not running", cpus);
		print_jsonl(c, out, o);
		print_jsonl_lost(c, out);
		if (c->host >= 0 && c->ticks)
			print_jsonl_ticks(c, out);
		free(o);
		return 0;
	}
	if (!c->late_g[c->sel]) {
		fprintf(out, "No late wake-up: none of the %" PRIu64 " wake-ups of %s was later"
			" than ", wakeups, what);
		print_ms(out, threshold, 0);
		fputs(" ms (--threshold).\n", out);
		free(o);
		return 0;
	}
	fprintf(out, "Late wake-ups of %s (later than ", what);
	print_ms(out, threshold, 0);
	fprintf(out, " ms): %" PRIu64 " of %" PRIu64 ", ", c->late_g[c->sel], wakeups);
	print_ms(out, c->delay_g[c->sel], 0);
	fputs(" ms of delay in all, each counted under the cause that took most of it:\n", out);
	print_text(c, out, o);
	free(o);
	return 0;
}
