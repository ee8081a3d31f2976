// SPDX-License-Identifier: GPL-2.0
/* vtrace_host: placeholder until the real module lands. */
#include <linux/module.h>
#include <linux/vtrace.h>

static int __init vtrace_host_init(void)
{
	BUILD_BUG_ON(sizeof(struct vtrace_msg_hdr) != 24);
	return 0;
}

static void __exit vtrace_host_exit(void)
{
}

module_init(vtrace_host_init);
module_exit(vtrace_host_exit);
MODULE_LICENSE("GPL");
