/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-capture.h: a capture folder of "vtrace record" (its manifest), and QEMU's vtrace ports. */
#ifndef _VTRACE_CAPTURE_H
#define _VTRACE_CAPTURE_H

#include <stdint.h>

/* The manifest's format version this code writes, and the newest it reads */
#define VTRACE_CAPTURE_VERSION	1

/**
 * struct vtrace_capture_vcpu - one vCPU of a guest and the host thread that ran it
 * @id:		KVM's vcpu_id (the APIC id; kvm_entry's vcpu_id)
 * @idx:	its index in the VM (QEMU's "CPU N/KVM"), -1 unknown
 * @tid:	the host thread, 0 unknown
 */
struct vtrace_capture_vcpu {
	uint32_t	id;
	int		idx;
	int		tid;
};

/**
 * struct vtrace_capture_guest - one guest of a capture
 * @name:	its name (the machine's name in the merge)
 * @dir:	its dump folder, relative to the capture folder
 * @pid:	its QEMU's pid, 0 unknown
 * @events:	the guest events asked for
 * @status:	"complete", or what went wrong ("died: ...")
 * @lost:	events the guest counted as lost (its EOS)
 * @bytes:	bytes of its data ports in the capture
 * @vcpus:	its vCPUs and their host threads, @nr_vcpus of them
 */
struct vtrace_capture_guest {
	char				*name;
	char				*dir;
	int				pid;
	char				*events;
	char				*status;
	uint64_t			lost;
	uint64_t			bytes;
	struct vtrace_capture_vcpu	*vcpus;
	int				nr_vcpus;
};

/**
 * struct vtrace_capture - a capture folder's manifest (Documentation/man/vtrace.1.rst)
 * @dir:	the folder
 * @version:	the manifest's format version
 * @vtrace:	the vtrace version that wrote it
 * @start, @stop: when the recording started and stopped (UTC, ISO 8601)
 * @host:	the host trace, relative to @dir ("host.dat")
 * @host_events: the host events recorded, blank-separated
 * @offsets:	vtrace_host's tsc_offsets file, relative to @dir, or NULL
 * @tsc_khz:	the host TSC frequency, 0 unknown
 * @status:	"complete", or "partial: ..." (some guest did not complete)
 * @guests:	@nr_guests guests
 */
struct vtrace_capture {
	char				*dir;
	int				version;
	char				*vtrace;
	char				*start;
	char				*stop;
	char				*host;
	char				*host_events;
	char				*offsets;
	uint64_t			tsc_khz;
	char				*status;
	struct vtrace_capture_guest	*guests;
	int				nr_guests;
};

struct vtrace_capture *vtrace_capture_read(const char *dir);
int vtrace_capture_write(const struct vtrace_capture *c);
void vtrace_capture_free(struct vtrace_capture *c);
int vtrace_capture_is_dir(const char *path);
char *vtrace_capture_guest_spec(const struct vtrace_capture *c, int i);
char *vtrace_capture_path(const struct vtrace_capture *c, const char *rel);
int vtrace_capture_guests(const struct vtrace_capture *c, char ***specs);
int vtrace_capture_vcpu_tid(const struct vtrace_capture *c, const char *guest, uint32_t vcpu_id);

/**
 * struct vtrace_qemu_ports - the vtrace ports of a QEMU command line
 * @name:	the guest's -name (guest=NAME), NULL if none
 * @prefix:	the ports' name prefix ("vtrace": vtrace.ctl, vtrace.cpuK)
 * @ctl:	the host end of PREFIX.ctl: a unix socket QEMU listens on
 * @ctl_is_file: PREFIX.ctl's host end is a file (file mode), not a socket
 * @ctl_fd:	PREFIX.ctl's socket is QEMU's fd N (-chardev socket,fd=N: libvirt's), -1
 * @cpu:	the files of PREFIX.cpu0 .. PREFIX.cpu(@nr_cpus - 1), NULL for a gap
 * @home:	$HOME in the running QEMU's environment (libvirt: the domain's
 *		folder), NULL if not known
 */
struct vtrace_qemu_ports {
	char	*name;
	char	*prefix;
	char	*ctl;
	int	ctl_is_file;
	int	ctl_fd;
	char	**cpu;
	int	nr_cpus;
	char	*home;
};

int vtrace_qemu_ports_parse(char *const *argv, int argc, const char *cwd,
			    struct vtrace_qemu_ports *p);
int vtrace_qemu_ports_of_pid(int pid, struct vtrace_qemu_ports *p);
void vtrace_qemu_ports_free(struct vtrace_qemu_ports *p);
int vtrace_qemu_has_ports(int pid);
int vtrace_qemu_vcpus(int pid, struct vtrace_capture_vcpu **vcpus, int *nr);

#endif /* _VTRACE_CAPTURE_H */
