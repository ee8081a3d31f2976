/* SPDX-License-Identifier: GPL-2.0 */
/* lib-local.h: declarations shared by the files of src/lib only. */
#ifndef _LIB_LOCAL_H
#define _LIB_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

struct tracecmd_input;
struct tep_handle;

/**
 * struct dat_layout - a trace-cmd trace.dat's headers and where its CPUs' pages are
 * @handle:	libtracecmd's handle, headers read (its tep, its trace clock)
 * @fd:		the handle's file descriptor (closed with the handle)
 * @nr_cpus:	entries of @offset and @size
 * @offset:	where CPU K's pages start in the file
 * @size:	their length in bytes (0: the CPU recorded nothing)
 * @compressed:	v7 with compressed sections: @offset and @size not set
 */
struct dat_layout {
	const char		*path;
	struct tracecmd_input	*handle;
	struct tep_handle	*tep;
	int			fd;
	uint64_t		file_size;
	unsigned int		page_size;
	int			long_size;
	int			nr_cpus;
	uint64_t		*offset;
	uint64_t		*size;
	bool			compressed;
};

/* tracedat.c */
int dat_layout_read(const char *path, struct dat_layout *l);
const char *dat_layout_clock(const struct dat_layout *l);
void dat_layout_free(struct dat_layout *l, bool keep_handle);

#endif /* _LIB_LOCAL_H */
