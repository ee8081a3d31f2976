/* SPDX-License-Identifier: GPL-2.0 */
/* The debugfs folder vtrace/ that vtrace_host and vtrace_guest share. */
#ifndef _VTRACE_DEBUGFS_H
#define _VTRACE_DEBUGFS_H
/*
 * A host that is itself a guest (a nested L1) loads both modules; each
 * puts its own files in /sys/kernel/debug/vtrace/ (the host tsc_offsets,
 * vms, stats, tsc_khz; the guest enable, events, status: no name in
 * common).  Whichever loads first creates the folder, the other finds it;
 * at unload each removes its own files by name, and the folder goes with
 * the last files.
 *
 * Both modules loading or unloading at the same instant is the one race
 * left: an unload that finds the folder empty removes it just as the other
 * module's load adds files to it.  Module loads run one after the other
 * from modprobe and the test bed; the folder has no other user.
 */
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>

#define VTRACE_DEBUGFS_DIR	"vtrace"

/* The shared folder, created if needed; a reference the caller drops with _put. */
static inline struct dentry *vtrace_debugfs_dir_get(void)
{
	struct dentry *dir = debugfs_lookup(VTRACE_DEBUGFS_DIR, NULL);

	if (dir)
		return dir;
	dir = debugfs_create_dir(VTRACE_DEBUGFS_DIR, NULL);
	if (IS_ERR(dir)) {
		/* the other module created it meanwhile */
		struct dentry *found = debugfs_lookup(VTRACE_DEBUGFS_DIR, NULL);

		return found ?: dir;
	}
	return dget(dir);
}

/* Remove the caller's files @names (NULL-terminated), and the folder if now empty. */
static inline void vtrace_debugfs_dir_put(struct dentry *dir, const char *const *names)
{
	bool empty;

	for (; *names; names++)
		debugfs_lookup_and_remove(*names, dir);
	inode_lock_shared(d_inode(dir));
	empty = simple_empty(dir);
	inode_unlock_shared(d_inode(dir));
	dput(dir);
	if (empty)
		debugfs_lookup_and_remove(VTRACE_DEBUGFS_DIR, NULL);
}

#endif /* _VTRACE_DEBUGFS_H */
