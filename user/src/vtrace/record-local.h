/* SPDX-License-Identifier: GPL-2.0 */
/* record-local.h: the parts of "vtrace record": the host's trace-cmd, the guests. */
#ifndef _RECORD_LOCAL_H
#define _RECORD_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vtrace-capture.h"

struct vtrace_ctl;

/* record-host.c: checks, trace-cmd record, vtrace_host's files */
extern const char *const record_host_events[];
int record_check_host(const char *trace_cmd);
const char *record_trace_cmd(void);
char *record_host_event_list(const char *extra);
pid_t record_host_start(const char *trace_cmd, const char *dir, const char *events,
			unsigned int buffer_kb);
int record_host_wait_started(pid_t pid, int timeout_ms);
int record_host_stop(pid_t pid, const char *dir);
uint64_t record_host_lost(void);
int record_host_copy_files(const char *dir, uint64_t *tsc_khz, bool *has_offsets);

/**
 * struct rec_guest - one guest of the recording
 * @name:	its name (folder DIR/NAME, machine name in the merge)
 * @pid:	its QEMU's pid, 0 unknown (--socket)
 * @prefix:	its ports' name prefix (vtrace), NULL when not known (--socket)
 * @ctl_path:	the ctl port's unix socket
 * @cpu:	its data ports' files, @nr_cpus (NULL for a gap)
 * @start_off:	each file's size when the recording started
 * @cur_off:	each file's size at the last look
 * @out:	DIR/NAME
 * @ctl_fd:	DIR/NAME/ctl
 * @ctl:	the connection
 * @seq:	the command awaiting its reply, 0 none
 * @started, @stopped: START acknowledged, EOS received
 * @dead:	QEMU exited or closed the port: @status says
 * @lost:	events lost per its last STATUS or EOS
 * @copied:	bytes of its data ports copied into the capture
 * @status:	"complete" or what went wrong
 * @vcpus:	vCPU threads read while it ran
 */
struct rec_guest {
	char				*name;
	int				pid;
	char				*prefix;
	char				*ctl_path;
	char				**cpu;
	int				nr_cpus;
	off_t				*start_off;
	off_t				*cur_off;
	char				*out;
	int				ctl_fd;
	struct vtrace_ctl		*ctl;
	uint64_t			seq;
	bool				started;
	bool				stopped;
	bool				dead;
	uint64_t			lost;
	uint64_t			copied;
	char				status[512];
	struct vtrace_capture_vcpu	*vcpus;
	int				nr_vcpus;
};

/* record-guest.c: finding the guests, driving them, their data */
int record_guest_from_pid(struct rec_guest *g, int pid, const char *name);
int record_guest_from_libvirt(struct rec_guest *g, const char *domain, const char *uri);
int record_guest_from_socket(struct rec_guest *g, const char *sock, const char *gdir);
int record_find_guests(struct rec_guest **gs, int *nr);
int record_guest_open(struct rec_guest *g, const char *dir, const char *events);
int record_guests_command(struct rec_guest *gs, int nr, uint16_t type, int timeout_ms);
void record_guests_poll(struct rec_guest *gs, int nr);
uint64_t record_guest_bytes(struct rec_guest *g);
int record_guest_copy(struct rec_guest *g);
void record_guest_free(struct rec_guest *g);

#endif /* _RECORD_LOCAL_H */
