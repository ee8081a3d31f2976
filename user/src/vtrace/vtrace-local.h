/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-local.h: subcommands of the vtrace command. */
#ifndef _VTRACE_LOCAL_H
#define _VTRACE_LOCAL_H

int vtrace_cmd_agent(int argc, char **argv);
int vtrace_cmd_dat(int argc, char **argv);
int vtrace_cmd_libvirt_pid(int argc, char **argv);
int vtrace_cmd_qemu_args(int argc, char **argv);
int vtrace_cmd_record(int argc, char **argv);

#endif /* _VTRACE_LOCAL_H */
