// SPDX-License-Identifier: GPL-2.0
/* machine.c: open the host and the guests, and step through each CPU's events. */
/*
 * A machine is the host (a trace-cmd trace.dat, or a dump folder) or a
 * guest (a dump folder).  Every CPU is read page by page with the dumps'
 * reader (src/lib/dump.c), a trace.dat's too, flat or compressed
 * (vtrace_dump_open_dat(): libtracecmd reads its headers).  Each CPU of a machine is a
 * struct source whose head event carries its host TSC: the host's own
 * time stamps are host TSC already (recorded with -C x86-tsc), a guest's
 * go through its vCPU's offset history (src/lib/tsc.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "merge-local.h"
#include "vtrace-dump.h"
#include "vtrace-util.h"

static struct machine *machine_alloc(const char *name, const char *path)
{
	struct machine *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->name = strdup(name);
	m->path = strdup(path);
	m->pid = -1;
	m->selected = true;
	if (!m->name || !m->path) {
		machine_close(m);
		return NULL;
	}
	return m;
}

static int alloc_sources(struct machine *m)
{
	m->cpus = calloc(m->nr_cpus, sizeof(*m->cpus));
	if (!m->cpus)
		return -1;
	for (int i = 0; i < m->nr_cpus; i++) {
		m->cpus[i].m = m;
		m->cpus[i].cpu = i;
		m->cpus[i].first_ns = UINT64_MAX;
		m->cpus[i].first_tsc = UINT64_MAX;
	}
	return 0;
}

/* A CPU reader for each CPU of a dump folder or of a trace.dat read page by page */
static int open_readers(struct machine *m, struct vtrace_dump *d)
{
	m->tep = vtrace_dump_tep(d);
	m->nr_cpus = vtrace_dump_info(d)->nr_cpus;
	if (alloc_sources(m))
		return -1;
	for (int i = 0; i < m->nr_cpus; i++) {
		m->cpus[i].reader = vtrace_cpu_reader_open(d, i);
		if (!m->cpus[i].reader)
			return -1;
	}
	return 0;
}

static int open_dump(struct machine *m, const struct merge_opts *opts)
{
	m->dump = vtrace_dump_open(m->path, opts->skip_bad ? VTRACE_DUMP_SKIP_BAD : 0);
	if (!m->dump)
		return -1;
	return open_readers(m, m->dump);
}

/*
 * What trace-cmd counted as lost when it stopped: events a merge cannot
 * show, and that --explain's windows may have lacked.
 */
static void warn_unread(const char *path, const char *lacks)
{
	vtrace_warn("%s: trace-cmd's counts at its stop (trace-cmd report --stat): %s: the file"
		    " lacks those events (its buffer was too small for the rate: trace-cmd record"
		    " -b KiB)", path, lacks);
}

/* Instances recorded beside the top one (trace-cmd record -B): not merged, and said so */
static void warn_instances(const char *path, struct tracecmd_input *handle)
{
	char names[256];
	int nr = vtrace_dat_instances(handle, names, sizeof(names));

	if (nr)
		vtrace_warn("%s: %d instance%s beside the top one (trace-cmd record -B): %s: their"
			    " events are not merged, only the top instance's", path, nr,
			    nr == 1 ? "" : "s", names);
}

/* trace-cmd's count of each CPU's events at its stop, for machine_close() */
static void note_cpustats(struct machine *m, struct tracecmd_input *handle)
{
	struct vtrace_dat_cpustat st;

	for (int i = 0; i < m->nr_cpus; i++)
		if (!vtrace_dat_cpustat(handle, i, &st) && st.left)
			m->cpus[i].stat_events = st.read + st.left;
}

/*
 * trace-cmd takes a CPU's statistics before it reads the buffer a last
 * time: the events it counted as left there ("entries") are normally in
 * the file.  Only a source read to its end tells: it lacks events if it
 * holds fewer than trace-cmd had read by then plus those left.
 */
static void warn_left(struct machine *m)
{
	char msg[512];
	size_t at = 0;
	int more = 0;

	for (int i = 0; i < m->nr_cpus; i++)
		if (m->cpus[i].stat_events && !m->cpus[i].at_end)
			return;
	for (int i = 0; i < m->nr_cpus; i++) {
		const struct source *s = &m->cpus[i];

		if (s->read >= s->stat_events)
			continue;
		if (at + 100 > sizeof(msg)) {
			more++;
			continue;
		}
		at += snprintf(msg + at, sizeof(msg) - at, "%scpu %d: %" PRIu64 " of %" PRIu64,
			       at ? "; " : "", i, s->stat_events - s->read, s->stat_events);
	}
	if (more)
		snprintf(msg + at, sizeof(msg) - at, "; %d more cpus", more);
	if (at)
		vtrace_warn("%s: events trace-cmd counted at its stop (read, and left in the"
			    " kernel's buffer: trace-cmd report --stat) but the file lacks: %s (trace-cmd"
			    " stopped before it read them all)", m->path, msg);
}

static int open_dat(struct machine *m, const struct merge_opts *opts)
{
	char lacks[512];
	struct stat st;

	if (stat(m->path, &st)) {
		vtrace_set_error("%s: %s", m->path, strerror(errno));
		return -1;
	}
	if (!st.st_size) {
		vtrace_set_error("%s: byte 0: empty file, expected a trace-cmd trace.dat", m->path);
		return -1;
	}
	if (vtrace_dat_check_magic(m->path))
		return -1;
	m->dat_pages = vtrace_dump_open_dat(m->path, opts->skip_bad ? VTRACE_DUMP_SKIP_BAD : 0);
	if (!m->dat_pages)
		return -1;
	if (vtrace_dat_check_clock(m->path, vtrace_dump_dat_clock(m->dat_pages)))
		return -1;
	if (vtrace_dat_unread(vtrace_dump_dat_handle(m->dat_pages), lacks, sizeof(lacks)))
		warn_unread(m->path, lacks);
	warn_instances(m->path, vtrace_dump_dat_handle(m->dat_pages));
	if (open_readers(m, m->dat_pages))
		return -1;
	note_cpustats(m, vtrace_dump_dat_handle(m->dat_pages));
	return 0;
}

/*
 * A dump folder is what vtrace_guest writes, in a guest: its time stamps
 * are that guest's TSC, not the host's.  Given as --host it would be taken
 * for the host's trace, and QEMU removes the qemu.pid that tells a guest's
 * dump when it exits.  So a dump folder is the host's only when a file
 * host_dump in it says so (the unit tests' generator, gen.py, marks its
 * host so; a host running vtrace_guest itself, as a nested L1, would too).
 */
static bool is_guest_dump(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/qemu.pid", dir);
	if (!access(path, F_OK)) {
		vtrace_set_error("--host %s: a guest's dump folder (it holds qemu.pid): give it as"
				 " --guest NAME=%s, and as --host the host's trace.dat (trace-cmd"
				 " record -C x86-tsc)", dir, dir);
		return true;
	}
	snprintf(path, sizeof(path), "%s/host_dump", dir);
	if (!access(path, F_OK))
		return false;
	vtrace_set_error("--host %s: a dump folder, as vtrace_guest writes in a guest (its times"
			 " are the guest's TSC, not the host's): give it as --guest NAME=%s, and as"
			 " --host the host's trace.dat (trace-cmd record -C x86-tsc); a host's own"
			 " dump says so with a file host_dump in it", dir, dir);
	return true;
}

struct machine *machine_open_host(const char *path, const struct merge_opts *opts)
{
	struct machine *m = machine_alloc("host", path);
	struct stat st;
	int ret;

	if (!m)
		return NULL;
	if (!stat(path, &st) && S_ISDIR(st.st_mode) && is_guest_dump(path)) {
		machine_close(m);
		return NULL;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		ret = open_dump(m, opts);
	else
		ret = open_dat(m, opts);
	if (ret) {
		machine_close(m);
		return NULL;
	}
	return m;
}

struct machine *machine_open_guest(const char *spec, const struct merge_opts *opts)
{
	struct vtrace_guest_spec g = { 0 };
	struct machine *m = NULL;

	if (vtrace_guest_spec_parse(spec, &g))
		goto error;
	m = machine_alloc(g.name, g.dir);
	if (!m)
		goto error;
	m->guest = true;
	m->has_offset = g.has_offset;
	m->offset = g.offset;
	if (open_dump(m, opts))
		goto error;
	m->pid = vtrace_guest_spec_pid(&g, vtrace_dump_qemu_pid(m->dump));
	if (m->pid < 0)
		goto error;
	if (!m->pid)
		m->pid = -1;	/* bind_offsets() guesses */
	vtrace_guest_spec_free(&g);
	return m;
error:
	machine_close(m);
	vtrace_guest_spec_free(&g);
	return NULL;
}

void machine_close(struct machine *m)
{
	if (!m)
		return;
	if (m->cpus)
		warn_left(m);
	symbols_detach(m);
	for (int i = 0; m->cpus && i < m->nr_cpus; i++) {
		vtrace_cpu_reader_close(m->cpus[i].reader);
		free(m->cpus[i].drops);
	}
	free(m->cpus);
	vtrace_dump_close(m->dump);
	vtrace_dump_close(m->dat_pages);
	free(m->event_ok);
	free(m->const_hist);
	free(m->const_iv);
	free(m->name);
	free(m->path);
	free(m);
}

/**
 * machine_vm_matches - does every CPU of guest @m with a data port have a
 * vCPU of VM @pid in the offset history (by APIC id)?
 */
bool machine_vm_matches(struct machine *m, struct vtrace_offsets *offsets, int pid)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		const struct vtrace_cpu_info *ci = vtrace_dump_cpu(m->dump, i);

		if ((ci->flags & VTRACE_CPU_HAS_PORT) &&
		    !vtrace_offsets_vcpu(offsets, pid, ci->apic_id))
			return false;
	}
	return true;
}

/*
 * No qemu.pid (QEMU removes its -pidfile when it exits), no pid=PID, and no
 * host trace to weigh the VMs by (guest-vm.c): the one VM of the history
 * whose vCPUs cover the guest's APIC ids, if there is exactly one.
 */
static int guess_pid(struct machine *m, struct vtrace_offsets *offsets)
{
	char *pids = vtrace_offsets_pids(offsets), *save = NULL;
	int found = -1, n = 0;

	if (!pids)
		return -1;
	for (char *t = strtok_r(pids, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		int pid = atoi(t);

		if (pid > 0 && machine_vm_matches(m, offsets, pid)) {
			found = pid;
			n++;
		}
	}
	free(pids);
	if (n == 1) {
		m->pid = found;
		vtrace_warn("guest %s: no %s/qemu.pid: using pid %d, the only VM of the offsets file"
			    " whose vCPUs match its APIC ids (pid=PID to choose)", m->name, m->path,
			    found);
		return 0;
	}
	pids = vtrace_offsets_pids(offsets);
	vtrace_set_error("guest %s: no %s/qemu.pid and no pid=PID: %s VM of the offsets file"
			 " matches its APIC ids (pids there: %s)", m->name, m->path,
			 n ? "more than one" : "no", pids ? pids : "?");
	free(pids);
	return -1;
}

/* Bounds the drops kept for one CPU: a sane guest writes its TSC a few times */
#define MAX_DROPS	(1U << 20)

/*
 * The history sets this vCPU's clock back somewhere: note where the CPU's
 * guest TSC drops, in a first pass over its pages (time stamps only), so
 * that the conversion can tell a guest's own backward TSC write from KVM's
 * backward steps (src/lib/tsc.c).  Damaged pages are left to the real pass
 * to report.
 */
static int find_drops(struct source *s)
{
	struct vtrace_cpu_reader *r = vtrace_cpu_reader_open(s->m->dump, s->cpu);
	uint64_t index = 0, prev = 0;
	struct tep_record *rec;
	size_t nr = 0, alloc = 0;
	bool quiet;
	int filler;

	if (!r)
		return -1;
	quiet = vtrace_set_quiet(true);
	while (vtrace_cpu_reader_next(r, &rec, &filler) > 0) {
		if (index && rec->ts < prev && nr < MAX_DROPS) {
			if (nr == alloc) {
				struct vtrace_tsc_drop *n;

				alloc = alloc ? alloc * 2 : 16;
				n = realloc(s->drops, alloc * sizeof(*n));
				if (!n)
					break;
				s->drops = n;
			}
			s->drops[nr++] = (struct vtrace_tsc_drop){ index, prev, rec->ts };
		}
		prev = rec->ts;
		index++;
	}
	vtrace_set_quiet(quiet);
	vtrace_cpu_reader_close(r);
	vtrace_set_error("%s", "");
	vtrace_tsc_map_set_drops(&s->map, s->drops, nr);
	return 0;
}

/*
 * --guest NAME=DIR,offset=N: no records for this VM (vtrace_host loaded with
 * snapshot=0, or its records dropped); N is KVM's debugfs tsc-offset read
 * during the recording.  One interval from host TSC 0, no scaling: changes
 * of the offset are not known (warned).
 */
static int bind_constant(struct machine *m, const struct merge_opts *opts)
{
	m->const_hist = calloc(1, sizeof(*m->const_hist));
	m->const_iv = calloc(1, sizeof(*m->const_iv));
	if (!m->const_hist || !m->const_iv)
		return -1;
	*m->const_iv = (struct vtrace_tsc_interval){ .offset = (uint64_t)m->offset, .mult = 1,
						     .kind = VTRACE_TSC_CONSTANT };
	*m->const_hist = (struct vtrace_vcpu_history){ .pid = m->pid, .vcpu_idx = -1, .nr = 1,
						       .iv = m->const_iv };
	for (int i = 0; i < m->nr_cpus; i++)
		vtrace_tsc_map_init(&m->cpus[i].map, m->const_hist, opts->assume_constant);
	vtrace_warn("guest %s: constant offset %lld for every vCPU (offset=): offset changes"
		    " during the recording are not known", m->name, (long long)m->offset);
	return 0;
}

/* Guest CPU K -> its vCPU (APIC id from META_INFO) -> its offset history */
int machine_bind_offsets(struct machine *m, struct vtrace_offsets *offsets,
			 const struct merge_opts *opts)
{
	if (!m->guest)
		return 0;
	if (m->has_offset)
		return bind_constant(m, opts);
	if (!offsets) {
		vtrace_offsets_missing(m->name, opts->host_dat);
		return -1;
	}
	if (m->pid < 0 && guess_pid(m, offsets))
		return -1;
	if (vtrace_offsets_check_pid(offsets, m->pid, m->name, opts->offsets_src))
		return -1;
	for (int i = 0; i < m->nr_cpus; i++) {
		const struct vtrace_cpu_info *ci = vtrace_dump_cpu(m->dump, i);
		const struct vtrace_vcpu_history *h;

		h = vtrace_offsets_vcpu(offsets, m->pid, ci->apic_id);
		if (!h && (ci->flags & VTRACE_CPU_HAS_PORT)) {
			vtrace_set_error("guest %s cpu %d: no offset records for its vCPU (APIC id"
					 " %u) of pid %d", m->name, i, ci->apic_id, m->pid);
			return -1;
		}
		vtrace_tsc_map_init(&m->cpus[i].map, h, opts->assume_constant);
		if (vtrace_tsc_map_needs_drops(&m->cpus[i].map) && find_drops(&m->cpus[i]))
			return -1;
	}
	return 0;
}

static bool spec_matches(const char *spec, const struct tep_event *ev)
{
	const char *colon = strchr(spec, ':');
	char sys[128];

	if (!colon)
		return !fnmatch(spec, ev->name, 0);
	if ((size_t)(colon - spec) >= sizeof(sys))
		return false;
	memcpy(sys, spec, colon - spec);
	sys[colon - spec] = '\0';
	return !fnmatch(sys, ev->system, 0) && !fnmatch(colon + 1, ev->name, 0);
}

/* --machine and --event: which machines and event ids are printed */
int machine_select(struct machine *m, const struct merge_opts *opts)
{
	struct tep_event **evs;
	int n;

	if (opts->machines) {
		m->selected = false;
		for (char **p = opts->machines; *p; p++)
			if (!strcmp(*p, m->name))
				m->selected = true;
	}
	if (!opts->events)
		return 0;
	evs = tep_list_events(m->tep, TEP_EVENT_SORT_ID);
	n = tep_get_events_count(m->tep);
	for (int i = 0; i < n; i++)
		if (evs[i]->id > m->max_id && evs[i]->id <= VTRACE_EVENT_ID_MAX)
			m->max_id = evs[i]->id;
	m->event_ok = calloc(m->max_id + 1, 1);
	if (!m->event_ok)
		return -1;
	for (int i = 0; i < n; i++)
		for (char **p = opts->events; *p; p++)
			if (evs[i]->id >= 0 && evs[i]->id <= m->max_id && spec_matches(*p, evs[i]))
				m->event_ok[evs[i]->id] = 1;
	return 0;
}

static int next_record(struct source *s, int *filler)
{
	return vtrace_cpu_reader_next(s->reader, &s->rec, filler);
}

static int convert(struct source *s)
{
	const struct vtrace_vcpu_history *h = s->map.hist;

	if (!s->m->guest) {
		s->host_tsc = s->rec->ts;
		return 0;
	}
	if (!vtrace_tsc_map_event(&s->map, s->rec->ts, &s->host_tsc)) {
		if (s->map.extrapolated == 1 && !s->warned) {
			s->warned = true;
			vtrace_warn("guest %s cpu %d: events before its first offset record (host TSC"
				    " %llu) converted with the earliest offset known"
				    " (--assume-constant-offset): approximate", s->m->name, s->cpu,
				    (unsigned long long)vtrace_tsc_history_first(h)->host_tsc);
		}
		return 0;
	}
	vtrace_tsc_map_refused(&s->map, s->m->name, s->cpu, s->m->path, s->rec->ts,
			       s->rec->offset);
	return -1;
}

static bool event_selected(struct source *s)
{
	struct machine *m = s->m;
	int id;

	if (!m->event_ok)
		return true;
	id = tep_data_type(m->tep, s->rec);
	return id >= 0 && id <= m->max_id && m->event_ok[id];
}

/*
 * The ring buffer lost events before @rec (its page's missed-events flag):
 * s->lost, and apart the counted and the uncounted ones (the text output's
 * "EVENTS DROPPED" lines: those of pages whose flagged first event was
 * dropped too add up on the next one returned)
 */
static void note_lost(struct source *s, const struct tep_record *rec)
{
	if (!rec->missed_events)
		return;
	if (rec->missed_events > 0)
		s->lost_counted += rec->missed_events;
	else
		s->lost_uncounted++;
	if (s->lost < 0 || rec->missed_events < 0)
		s->lost = -1;
	else
		s->lost += rec->missed_events;
}

static void switch_lookup(struct switch_fields *f, struct tep_handle *tep)
{
	struct tep_event *ev;

	f->looked = true;
	f->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	f->id = vtrace_event_id(tep, "sched", "sched_switch", &ev);
	f->prev_pid = vtrace_event_field(ev, "prev_pid");
	f->prev_comm = vtrace_event_field(ev, "prev_comm");
	f->prev_state = vtrace_event_field(ev, "prev_state");
	f->next_pid = vtrace_event_field(ev, "next_pid");
	f->next_comm = vtrace_event_field(ev, "next_comm");
	f->next_prio = vtrace_event_field(ev, "next_prio");
	if (!f->prev_pid || !f->next_pid)
		f->id = -1;
}

/* A comm field of @rec into @buf (SW_COMM_LEN + 1 bytes), "" when out of the record */
static void switch_comm(struct tep_format_field *f, const struct tep_record *rec, char *buf)
{
	int n = f ? f->size : 0;

	if (n > SW_COMM_LEN)
		n = SW_COMM_LEN;
	if (n <= 0 || f->offset + f->size > rec->size)
		n = 0;
	else
		memcpy(buf, (const char *)rec->data + f->offset, n);
	buf[n] = '\0';
}

/**
 * source_decode - decode @s's head event for the passes it is fed to
 *
 * Sets s->sw when the event is a sched_switch (with its prev_pid and
 * next_pid), else NULL.
 */
void source_decode(struct source *s)
{
	struct switch_fields *f = &s->m->sw;
	struct sched_switch *sw = &s->sw_ev;
	const struct tep_record *rec = s->rec;

	if (!f->looked)
		switch_lookup(f, s->m->tep);
	s->sw = NULL;
	if (f->id < 0 || tep_data_type(s->m->tep, s->rec) != f->id)
		return;
	sw->prev_pid = (int)vtrace_field_num(f->native, f->prev_pid, rec);
	sw->next_pid = (int)vtrace_field_num(f->native, f->next_pid, rec);
	sw->next_prio = f->next_prio ? (int)vtrace_field_num(f->native, f->next_prio, rec) :
		INT_MIN;
	sw->prev_state = f->prev_state ? vtrace_field_num(f->native, f->prev_state, rec) : 0;
	switch_comm(f->prev_comm, rec, sw->prev_comm);
	switch_comm(f->next_comm, rec, sw->next_comm);
	s->sw = sw;
}

/**
 * source_advance - load the source's next printable event
 *
 * Every event is converted (the offset state must see them all) and goes
 * to the passes that read every event (@readers: the self-check); fillers
 * and events not selected are then dropped.  s->lost says whether events
 * were lost before the one returned: the missed-events flag of a page
 * whose first event was dropped is kept for the next one returned.
 * Returns 1 with s->rec set, 0 at the end (s->rec NULL), -1 on error.
 */
int source_advance(struct source *s, const struct merge_pass *readers, int nr_readers)
{
	uint64_t ambiguous;
	int filler, ret;

	s->lost = 0;
	s->lost_counted = 0;
	s->lost_uncounted = 0;
	for (;;) {
		uint64_t prev = s->host_tsc;

		ret = next_record(s, &filler);
		if (ret <= 0) {
			s->rec = NULL;
			s->at_end = !ret;
			return ret;
		}
		s->read++;
		note_lost(s, s->rec);
		ambiguous = s->map.ambiguous;
		if (convert(s))
			return -1;
		s->ambiguous = s->map.ambiguous != ambiguous;
		for (int i = 0; i < nr_readers; i++)
			readers[i].read(readers[i].priv, s);
		if (s->read > 1 && s->host_tsc < prev)
			s->out_of_order++;
		if (filler) {
			s->fillers++;
			continue;
		}
		if (event_selected(s))
			return 1;
	}
}

