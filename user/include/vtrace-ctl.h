/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-ctl.h: a live connection to a guest's vtrace.ctl port (QEMU's unix socket). */
/*
 * Shared by "vtrace agent" and "vtrace record":
 *
 *   ctl = vtrace_ctl_open(sock_path, out_fd);    (out_fd: every byte received, or -1)
 *   seq = vtrace_ctl_send(ctl, VTRACE_MSG_START, NULL, 0);
 *   while (vtrace_ctl_recv(ctl, ms) >= 0)
 *           while (vtrace_ctl_next(ctl, &msg) > 0) { ...; vtrace_ctl_consume(ctl); }
 *   vtrace_ctl_close(ctl);
 */
#ifndef _VTRACE_CTL_H
#define _VTRACE_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "vtrace-proto.h"

struct vtrace_ctl;

struct vtrace_ctl *vtrace_ctl_open(const char *path, int out_fd, const char *who);
void vtrace_ctl_close(struct vtrace_ctl *ctl);
int vtrace_ctl_fd(const struct vtrace_ctl *ctl);
bool vtrace_ctl_closed(const struct vtrace_ctl *ctl);
uint64_t vtrace_ctl_send(struct vtrace_ctl *ctl, uint16_t type, const void *p, uint32_t len);
int vtrace_ctl_send_raw(struct vtrace_ctl *ctl, const void *p, size_t len);
int vtrace_ctl_recv(struct vtrace_ctl *ctl, int ms);
int vtrace_ctl_next(struct vtrace_ctl *ctl, struct vtrace_msg *msg);
void vtrace_ctl_consume(struct vtrace_ctl *ctl);
long long vtrace_now_ms(void);

#endif /* _VTRACE_CTL_H */
