/* SPDX-License-Identifier: GPL-2.0 */
/* fuzz.h: helpers shared by the libFuzzer targets (temporary files, sinks). */
#ifndef _VTRACE_FUZZ_H
#define _VTRACE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtrace-util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every value a target reads goes here, so that no read is optimised away */
extern volatile uint64_t fuzz_sink;

/* One private directory per process, created on first use, never removed while running */
const char *fuzz_dir(void);
/* Write @len bytes to DIR/@name (replacing it); aborts on I/O errors */
void fuzz_write(const char *name, const void *buf, size_t len);
void fuzz_unlink(const char *name);
/* DIR/@name in a static buffer */
const char *fuzz_path(const char *name);

/*
 * vtrace_dump_open()'s flags for a target: FUZZ_NO_PROBE=1 in the
 * environment parses the metadata without the probe child, so that a
 * refused input shows where libtraceevent dies (replaying it, not fuzzing);
 * it sets vtrace_dat_no_probe too (a host trace.dat's headers, the same way).
 */
unsigned int fuzz_dump_flags(void);
/*
 * After a vtrace_dump_open() that failed, or at the end of every input: if
 * a probe child died since the last call (on this input, when every input
 * that could kill one calls it), keep the input in $FUZZ_CONTAINED (a
 * folder, if set) and count it.
 */
void fuzz_note_contained(const uint8_t *data, size_t size);
extern unsigned long fuzz_contained;

struct tep_handle;
struct tep_record;
struct trace_seq;
struct vtrace_dump;
struct vtrace_offsets;

/* libtraceevent's plugins mapped for the process's life (fuzz.c says why) */
void fuzz_keep_plugins(void);

/* One event printed as vtrace-merge prints it, its number fields read */
void fuzz_print_event(struct tep_handle *tep, struct tep_record *rec, struct trace_seq *s);
/* A trace_seq for the events' text, initialised once per process (reset before each use) */
struct trace_seq *fuzz_seq(void);
/* One CPU of @d read to its last event (at most @max), each event printed */
void fuzz_read_cpu(struct vtrace_dump *d, unsigned int cpu, struct trace_seq *s, int max);
/*
 * What vtrace-merge uses of an offset history: its counts and range, and
 * every vCPU history of the first 16 pids it names converted both ways
 */
void fuzz_use_offsets(struct vtrace_offsets *o);

/* Touch @len bytes of @p: ASan reports an overread at once */
static inline void fuzz_touch(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += c[i];
	fuzz_sink += sum;
}

static inline uint32_t fuzz_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif /* _VTRACE_FUZZ_H */
