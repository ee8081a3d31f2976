// SPDX-License-Identifier: GPL-2.0
/* tsc.c: exact guest -> host TSC conversion through a vCPU's offset history. */
/*
 * KVM defines, per vCPU and per interval between two offset writes:
 *
 *	guest_tsc = ((host_tsc * mult) >> frac) + offset		(mod 2^64)
 *
 * so the host TSC at which the guest TSC read g is, exactly,
 *
 *	host_tsc = ceil(((g - offset) << frac) / mult)
 *
 * in 128-bit arithmetic (g - offset wraps mod 2^64).  The ceiling picks
 * the first host cycle at which the guest TSC reads g: with mult ==
 * 1 << frac (no scaling) it is just g - offset.
 *
 * Which interval?  A guest CPU's events come in ring-buffer order, which
 * is true time order, so each guest CPU keeps the index of its current
 * interval i and moves forward only.  Interval i + 1 starts, on the
 * guest's own clock, at
 *
 *	G(i+1) = ((t(i+1) * mult(i+1)) >> frac(i+1)) + offset(i+1)
 *
 * the guest TSC the vCPU had at the instant t(i+1) of the write, under
 * the new offset.  An event moves to i + 1 when its guest TSC >= G(i+1).
 * The test is on the guest side on purpose:
 *
 *   - forward jump (the guest writes IA32_TSC + 3e9): events before the
 *     write read less than the old clock at t(i+1), which is far below
 *     G(i+1); events after it read at least G(i+1).
 *   - backward steps (KVM on a host with an unstable TSC re-computes the
 *     offset at each vCPU load so that the guest TSC continues where it
 *     stopped): the offset decreases by the time the vCPU was off the
 *     CPU.  An event just after such a write, converted with the old
 *     offset, lands *before* t(i+1), so a host-side test "g - off(i) >=
 *     t(i+1)" would keep it in interval i and place it up to that whole
 *     off-CPU time too early.  Its guest TSC, however, is >= G(i+1).
 *
 * When the guest TSC goes backwards between two consecutive events of one
 * CPU (the guest wrote a smaller value), the forward test cannot fire:
 * the event moves to the first following interval that maps it at or
 * after the previous event's host time.
 *
 * The first event of a CPU takes the last interval that starts (on the
 * guest clock) at or before it and does not map it past its end.  An
 * event before G(0) of the first record is not covered by the history:
 * an error, unless the caller asked to assume the first interval's
 * offset held before it (an approximation: wrong if the offset changed
 * before vtrace_host recorded anything).
 *
 * One case needs to look ahead.  When interval i+1 sets the guest clock
 * back (G(i+1) below F(i+1), the old clock at t(i+1)), events with a guest
 * TSC in [G(i+1), F(i+1)) may come before the write (read on the old
 * clock) or after it (on the new one).  KVM's own backward steps leave no
 * trace in the event stream (the guest clock stays continuous), but a
 * guest that writes a smaller TSC makes its CPU's guest TSC drop between
 * the last event before the write and the first after it.  So the caller
 * may give the CPU's drops, found by a first pass over its pages
 * (vtrace_tsc_map_set_drops()): while the next drop ahead fits that write
 * (before < F(i+1), after >= G(i+1)), the events up to it stay in i, and
 * the drop itself then moves on by the rule above.  Without the drops such
 * events take the new interval (the forward rule alone).
 *
 * On a host with an unstable TSC, KVM also moves the offset forward (it
 * catches the guest clock up), so the starts G(i) are not monotonic: an
 * interval that starts high on the guest clock, and in which the vCPU may
 * never have run, holds the forward test back from later intervals that
 * start lower.  The current interval then maps the event at or past the
 * next write, which no event of that interval can be; such an event takes
 * the first following interval that maps it inside itself (resync()).
 *
 * None of these rules can always be right: when interval i+1 sets the clock
 * back, a guest TSC in [G(i+1), F(i+1)) maps inside both i (before the write)
 * and i+1 (after it), and the offsets alone do not say which the vCPU read
 * it in.  Seen on the unstable host: KVM stepped an offset back by 27.5
 * million cycles, no guest event came between the two writes, the rules
 * took the earlier interval and put the event where the vCPU was not in
 * guest mode (the self-check caught it, 23.2 ms outside).  So after the
 * rules, an event that the chosen interval and a neighbour both map inside
 * themselves is "ambiguous"; when the caller knows when the vCPU was in
 * guest mode (the host's kvm_entry .. kvm_exit of its thread:
 * vtrace_tsc_map_set_windows()), the event takes the interval whose host
 * time is in guest mode, if exactly one is.  Otherwise it stays where the
 * rules put it and is counted (@ambiguous), for the caller to report: never
 * silently; unless a drop of the guest's own TSC held it (the look-ahead
 * above): that is evidence, not a guess.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtrace-tsc.h"
#include "vtrace-util.h"

uint64_t vtrace_tsc_guest(const struct vtrace_tsc_interval *iv, uint64_t host_tsc)
{
	unsigned __int128 p = (unsigned __int128)host_tsc * iv->mult;

	return (uint64_t)(p >> iv->frac) + iv->offset;
}

int vtrace_tsc_host(const struct vtrace_tsc_interval *iv, uint64_t guest_tsc, uint64_t *host_tsc)
{
	unsigned __int128 x = guest_tsc - iv->offset;
	unsigned __int128 h;

	if (!iv->mult)
		return -1;
	x <<= iv->frac;
	h = (x + iv->mult - 1) / iv->mult;
	if (h > UINT64_MAX)
		return -1;
	*host_tsc = (uint64_t)h;
	return 0;
}

uint64_t vtrace_tsc_to_ns(uint64_t tsc, uint64_t khz)
{
	return (uint64_t)((unsigned __int128)tsc * 1000000 / khz);
}

uint64_t vtrace_ns_to_tsc(uint64_t ns, uint64_t khz)
{
	unsigned __int128 t = (unsigned __int128)ns * khz / 1000000;

	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

int vtrace_tsc_khz_read(const char *arg, uint64_t *khz)
{
	char *text;

	if (!vtrace_parse_u64(arg, khz) && *khz)
		return 0;
	text = vtrace_read_file(arg, 64, NULL);
	if (!text)
		return -1;
	text[strcspn(text, " \n")] = '\0';
	if (vtrace_parse_u64(text, khz) || !*khz) {
		vtrace_set_error("%s: byte 0: expected a TSC frequency in kHz, got \"%.20s\"", arg,
				 text);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

int vtrace_tsc_khz_beside(const char *file, uint64_t *khz)
{
	char path[PATH_MAX], *copy = strdup(file);

	if (!copy)
		return -1;
	snprintf(path, sizeof(path), "%s/tsc_khz", dirname(copy));
	free(copy);
	if (access(path, R_OK))
		return 0;
	return vtrace_tsc_khz_read(path, khz) ? -1 : 1;
}

void vtrace_tsc_map_init(struct vtrace_tsc_map *map, const struct vtrace_vcpu_history *hist,
			 int assume_constant)
{
	*map = (struct vtrace_tsc_map){
		.hist		 = hist,
		.assume_constant = assume_constant,
		.first_used	 = SIZE_MAX,
	};
}

/* Guest TSC at which interval @i starts (a constant offset holds for all time) */
static uint64_t start_guest(const struct vtrace_vcpu_history *h, size_t i)
{
	if (h->iv[i].kind == VTRACE_TSC_CONSTANT)
		return 0;
	return vtrace_tsc_guest(&h->iv[i], h->iv[i].host_tsc);
}

/* The guest TSC went backwards: first following interval not mapping before prev_host */
static void step_backwards(struct vtrace_tsc_map *map, uint64_t g)
{
	const struct vtrace_vcpu_history *h = map->hist;

	map->backwards++;
	for (size_t j = map->cur + 1; j < h->nr; j++) {
		uint64_t host;

		if (!vtrace_tsc_host(&h->iv[j], g, &host) && host >= map->prev_host) {
			map->cur = j;
			return;
		}
	}
}

/* Guest TSC of the old interval @i at the instant interval i+1 starts */
static uint64_t end_guest(const struct vtrace_vcpu_history *h, size_t i)
{
	return vtrace_tsc_guest(&h->iv[i], h->iv[i + 1].host_tsc);
}

/*
 * May an event reading @g move from interval cur to cur+1?  Not when
 * cur+1 sets the clock back, @g is in the ambiguous window and the CPU's
 * next drop is that very write, still ahead.
 */
static int write_is_ahead(struct vtrace_tsc_map *map, uint64_t g)
{
	const struct vtrace_vcpu_history *h = map->hist;
	uint64_t start = start_guest(h, map->cur + 1), end = end_guest(h, map->cur);
	const struct vtrace_tsc_drop *d;

	if (!map->drops || start >= end || g >= end)
		return 0;
	while (map->next_drop < map->nr_drops && map->drops[map->next_drop].index <= map->index)
		map->next_drop++;
	if (map->next_drop == map->nr_drops)
		return 0;
	d = &map->drops[map->next_drop];
	return d->before < end && d->after >= start;
}

/* How far resync() looks ahead, in intervals (a hostile history must not make it quadratic) */
#define RESYNC_AHEAD	64

/* Does interval @i map @g inside itself (at or after its write, before the next)? */
static int maps_inside(const struct vtrace_vcpu_history *h, size_t i, uint64_t g)
{
	uint64_t host;

	if (vtrace_tsc_host(&h->iv[i], g, &host) || host < h->iv[i].host_tsc)
		return 0;
	return i + 1 == h->nr || host < h->iv[i + 1].host_tsc;
}

/* The current interval maps @g past the next write: find the interval that does not */
static void resync(struct vtrace_tsc_map *map, uint64_t g)
{
	const struct vtrace_vcpu_history *h = map->hist;
	size_t j, end = map->cur + 1 + RESYNC_AHEAD;
	uint64_t host;

	if (map->cur + 1 >= h->nr || h->iv[map->cur].kind == VTRACE_TSC_CONSTANT ||
	    vtrace_tsc_host(&h->iv[map->cur], g, &host) || host < h->iv[map->cur + 1].host_tsc)
		return;
	for (j = map->cur + 1; j < h->nr && j < end; j++) {
		if (maps_inside(h, j, g)) {
			map->cur = j;
			map->resynced++;
			return;
		}
	}
}

/* The last interval that starts at or before @g and does not map it past its end */
static int first_interval(struct vtrace_tsc_map *map, uint64_t g)
{
	const struct vtrace_vcpu_history *h = map->hist;

	for (size_t i = h->nr; i-- > 0; ) {
		uint64_t host;

		if (g < start_guest(h, i))
			continue;
		if (i + 1 < h->nr && (vtrace_tsc_host(&h->iv[i], g, &host) ||
				      host >= h->iv[i + 1].host_tsc))
			continue;
		if (i > 0) {
			map->cur = i - 1;
			if (write_is_ahead(map, g))
				continue;
		}
		map->cur = i;
		return 0;
	}
	return -1;
}

int vtrace_tsc_map_needs_drops(const struct vtrace_tsc_map *map)
{
	const struct vtrace_vcpu_history *h = map->hist;

	for (size_t i = 0; h && i + 1 < h->nr; i++)
		if (start_guest(h, i + 1) < end_guest(h, i))
			return 1;
	return 0;
}

void vtrace_tsc_map_set_drops(struct vtrace_tsc_map *map, const struct vtrace_tsc_drop *drops,
			      size_t nr)
{
	map->drops = drops;
	map->nr_drops = nr;
	map->next_drop = 0;
}

void vtrace_tsc_map_set_windows(struct vtrace_tsc_map *map,
				int (*in_guest)(void *ctx, uint64_t host_tsc), void *ctx)
{
	map->in_guest = in_guest;
	map->in_guest_ctx = ctx;
}

/* The other interval that maps @g inside itself, next to the chosen one, or SIZE_MAX */
static size_t other_inside(const struct vtrace_tsc_map *map, uint64_t g)
{
	const struct vtrace_vcpu_history *h = map->hist;
	size_t c = map->cur;
	uint64_t host;

	if (h->iv[c].kind == VTRACE_TSC_CONSTANT)
		return SIZE_MAX;
	/* cheap tests first: most events are far from any write */
	if (c + 1 < h->nr && g >= start_guest(h, c + 1) && maps_inside(h, c + 1, g) &&
	    maps_inside(h, c, g))
		return c + 1;
	/* the earlier interval only when it keeps the CPU's events in time order */
	if (c > 0 && h->iv[c - 1].kind != VTRACE_TSC_CONSTANT && g < end_guest(h, c - 1) &&
	    maps_inside(h, c - 1, g) && maps_inside(h, c, g) &&
	    (!map->started || (!vtrace_tsc_host(&h->iv[c - 1], g, &host) &&
			       host >= map->prev_host)))
		return c - 1;
	return SIZE_MAX;
}

/* Two intervals map @g inside themselves: the one in guest mode, if the caller can tell */
static void tell_apart(struct vtrace_tsc_map *map, uint64_t g)
{
	const struct vtrace_vcpu_history *h = map->hist;
	size_t other = other_inside(map, g);
	uint64_t here, there;
	int in_here = -1, in_there = -1;
	int held;

	if (other == SIZE_MAX)
		return;
	/* held back by a drop that fits the write: the guest's own evidence, not a guess */
	held = other == map->cur + 1 && write_is_ahead(map, g);
	if (map->in_guest && !vtrace_tsc_host(&h->iv[map->cur], g, &here) &&
	    !vtrace_tsc_host(&h->iv[other], g, &there)) {
		in_here = map->in_guest(map->in_guest_ctx, here);
		in_there = map->in_guest(map->in_guest_ctx, there);
	}
	if (in_here == 1 && in_there == 0) {
		map->told_apart++;
	} else if (in_here == 0 && in_there == 1) {
		map->told_apart++;
		map->moved++;
		map->cur = other;
	} else if (!held) {
		map->ambiguous++;
	}
}

/**
 * vtrace_tsc_map_event - host TSC of a guest CPU's next event
 * @map:	the CPU's map
 * @guest_tsc:	the event's guest TSC
 * @host_tsc:	its host TSC
 *
 * Returns 0, or -1 when the history does not cover the event (before its
 * first record and no assume_constant, or a conversion overflow).
 */
int vtrace_tsc_map_event(struct vtrace_tsc_map *map, uint64_t guest_tsc, uint64_t *host_tsc)
{
	const struct vtrace_vcpu_history *h = map->hist;

	if (!h || !h->nr)
		return -1;
	if (!map->started) {
		if (first_interval(map, guest_tsc)) {
			if (!map->assume_constant)
				return -1;
			map->cur = 0;
		}
	} else if (guest_tsc < map->prev_guest) {
		step_backwards(map, guest_tsc);
	}
	while (map->cur + 1 < h->nr && guest_tsc >= start_guest(h, map->cur + 1) &&
	       !write_is_ahead(map, guest_tsc))
		map->cur++;
	resync(map, guest_tsc);
	tell_apart(map, guest_tsc);
	if ((map->cur == 0 && guest_tsc < start_guest(h, 0)) ||
	    h->iv[map->cur].kind == VTRACE_TSC_ASSUMED) {
		if (!map->assume_constant)
			return -1;
		map->extrapolated++;
	}
	if (vtrace_tsc_host(&h->iv[map->cur], guest_tsc, host_tsc))
		return -1;
	/* a history cut short by dropped records says nothing after its end */
	if (h->end_tsc && *host_tsc > h->end_tsc && map->cur + 1 == h->nr) {
		map->past_end = 1;
		if (!map->assume_constant)
			return -1;
		map->extrapolated++;
	}
	map->index++;
	map->started = 1;
	map->prev_guest = guest_tsc;
	map->prev_host = *host_tsc;
	if (map->cur < map->first_used)
		map->first_used = map->cur;
	if (map->cur > map->last_used)
		map->last_used = map->cur;
	return 0;
}

/* The first interval of @h that stands on a record (not an ASSUMED one before it), or NULL */
const struct vtrace_tsc_interval *vtrace_tsc_history_first(const struct vtrace_vcpu_history *h)
{
	if (!h || !h->nr)
		return NULL;
	return &h->iv[h->nr > 1 && h->iv[0].kind == VTRACE_TSC_ASSUMED];
}

static const char *end_why(int why)
{
	switch (why) {
	case VTRACE_END_READ:
		return "the copy's \"# end\" line: it was read then";
	case VTRACE_END_DROPPED:
		return "vtrace_host dropped the records after it";
	case VTRACE_END_TRACE:
		return "the host trace's last event: the recording stopped then";
	case VTRACE_END_LOST:
		return "the host trace lost events after it: a record may be missing";
	default:
		return "its last record: the copy has no \"# end\" line, it may have been cut";
	}
}

/**
 * vtrace_tsc_map_refused - say why vtrace_tsc_map_event() refused an event
 * @map:	the guest CPU's map
 * @guest:	the guest's name
 * @cpu:	the guest CPU
 * @path:	the guest's dump folder
 * @guest_tsc:	the event's guest TSC
 * @at:		its byte in @path/cpu@cpu
 *
 * vtrace-merge and vtrace dat refuse such an event with the same error.
 */
void vtrace_tsc_map_refused(const struct vtrace_tsc_map *map, const char *guest, int cpu,
			    const char *path, uint64_t guest_tsc, uint64_t at)
{
	const struct vtrace_vcpu_history *h = map->hist;
	const struct vtrace_tsc_interval *first = vtrace_tsc_history_first(h);

	if (!first)
		vtrace_set_error("guest %s cpu %d: events but no offset history for its vCPU",
				 guest, cpu);
	else if (map->past_end)
		vtrace_set_error("offset history of guest %s cpu %d ends at host TSC %llu (%s),"
				 " its event at %s/cpu%d byte %llu is later (--assume-constant-offset"
				 " extrapolates)", guest, cpu, (unsigned long long)h->end_tsc,
				 end_why(h->end_why), path, cpu, (unsigned long long)at);
	else
		vtrace_set_error("offset history does not cover guest %s cpu %d before host TSC"
				 " %llu (its guest TSC %llu at %s/cpu%d byte %llu; first record:"
				 " seq %llu): the guest traced before the history begins; start"
				 " the host recording (trace-cmd record -e vtrace_host) before the"
				 " guest traces, or --assume-constant-offset extrapolates",
				 guest, cpu, (unsigned long long)first->host_tsc,
				 (unsigned long long)guest_tsc, path, cpu, (unsigned long long)at,
				 (unsigned long long)first->seq);
}
