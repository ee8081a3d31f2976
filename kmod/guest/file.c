// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: reading and writing files with ->read/->write only, through the borrowed mm. */
/*
 * Tracefs control files, procfs seq files and virtio_console ports offer
 * ->read/->write with user pointers and no ->read_iter/->write_iter, so
 * kernel_read()/kernel_write() refuse them.  The control thread runs with
 * the mm borrowed at load (kthread_use_mm) and owns a bounce buffer mapped
 * in it (vtg.ubuf): data goes kernel buffer -> copy_to_user -> ->write,
 * and ->read -> copy_from_user -> kernel buffer.  Only the control thread
 * calls these helpers (the drain threads, with the same mm adopted, call
 * ->read themselves for the last page at the stop).
 *
 * Files are closed with __fput_sync(): a kernel thread's fput() would be
 * deferred to a workqueue, and the instance can only be destroyed once its
 * files are released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "vtg.h"

/**
 * vtg_open_path() - open an absolute path under the root of the process that loaded us
 * @path:	absolute path
 * @flags:	open flags
 *
 * Context: process context; the kernel thread's credentials.
 * Return: the file or an ERR_PTR().
 */
struct file *vtg_open_path(const char *path, int flags)
{
	return file_open_root(&vtg.root, path, flags, 0);
}

/**
 * vtg_open_tracefs() - open a file of the module's tracefs mount
 * @rel:	path relative to the mount's top
 * @flags:	open flags
 *
 * Return: the file or an ERR_PTR().
 */
struct file *vtg_open_tracefs(const char *rel, int flags)
{
	return file_open_root_mnt(vtg.tracefs, rel, flags, 0);
}

/**
 * vtg_open_instance() - open a file of the "vtrace" instance
 * @rel:	path relative to the instance's folder
 * @flags:	open flags
 *
 * Return: the file or an ERR_PTR().
 */
struct file *vtg_open_instance(const char *rel, int flags)
{
	char path[128];

	snprintf(path, sizeof(path), "instances/%s/%s", VTG_INSTANCE, rel);
	return vtg_open_tracefs(path, flags);
}

/**
 * vtg_close() - close a file at once (__fput_sync())
 * @f:		the file; NULL and ERR_PTR() values are ignored
 *
 * Context: a kernel thread (the module's), process context.
 */
void vtg_close(struct file *f)
{
	if (f && !IS_ERR(f))
		__fput_sync(f);
}

/**
 * vtg_read_text() - read a small text file (sysfs, a sysctl) into @buf
 * @path:	absolute path
 * @buf:	where the text goes, NUL-terminated and trimmed
 * @size:	bytes of @buf; a longer text is cut
 *
 * Such files have ->read_iter only: kernel_read(), not ->read.
 *
 * Return: 0 or a negative errno.
 */
int vtg_read_text(const char *path, char *buf, size_t size)
{
	struct file *f = vtg_open_path(path, O_RDONLY);
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, size - 1, &pos);
	vtg_close(f);
	if (n < 0)
		return n;
	buf[n] = '\0';
	strim(buf);
	return 0;
}

/**
 * vtg_write_user() - ->write of user bytes, looping over short writes
 * @f:		the file
 * @ubuf:	the bytes, in the borrowed mm
 * @len:	their number
 *
 * Context: a task using the borrowed mm.
 * Return: @len, or a negative errno (-EIO: the file took nothing).
 */
ssize_t vtg_write_user(struct file *f, const char __user *ubuf, size_t len)
{
	size_t done = 0;
	loff_t pos = 0;
	ssize_t ret;

	if (!f->f_op->write)
		return -EINVAL;
	while (done < len) {
		ret = f->f_op->write(f, ubuf + done, len - done, &pos);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -EIO;
		done += ret;
	}
	return done;
}

/**
 * vtg_write_kbuf() - ->write of kernel bytes through vtg.ubuf
 * @f:		the file
 * @buf:	the bytes
 * @len:	their number, at most %VTG_UBUF_SIZE
 *
 * Context: the control thread.
 * Return: @len, or a negative errno.
 */
ssize_t vtg_write_kbuf(struct file *f, const void *buf, size_t len)
{
	if (len > VTG_UBUF_SIZE)
		return -E2BIG;
	if (copy_to_user(vtg.ubuf, buf, len))
		return -EFAULT;
	return vtg_write_user(f, vtg.ubuf, len);
}

/*
 * Make room for @need bytes in *@buf (*@size now): at least twice the old
 * size, so a large file costs a few copies, but a small one (the per-CPU
 * stats a STATUS_REQ reads) only its own size.
 */
static int vtg_grow(char **buf, size_t *size, size_t need)
{
	size_t nsize = max(need, *size * 2);
	char *n;

	if (need <= *size)
		return 0;
	n = kvmalloc(nsize, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	if (*buf)
		memcpy(n, *buf, *size);
	kvfree(*buf);
	*buf = n;
	*size = nsize;
	return 0;
}

/**
 * vtg_read_whole() - read a whole file with ->read through vtg.ubuf
 * @f:		the file
 * @lenp:	set to the bytes read
 *
 * The buffer grows with what the reads return, so it is sized to the file
 * (within a factor of two), not to the bounce buffer.
 *
 * Context: the control thread.
 * Return: a kvmalloc'ed buffer, NUL-terminated (the NUL not counted in
 * *@lenp), or an ERR_PTR().
 */
void *vtg_read_whole(struct file *f, size_t *lenp)
{
	size_t size = 0, len = 0;
	char *buf = NULL;
	loff_t pos = 0;
	ssize_t ret;

	if (!f->f_op->read)
		return ERR_PTR(-EINVAL);
	for (;;) {
		ret = f->f_op->read(f, vtg.ubuf, VTG_UBUF_SIZE, &pos);
		if (ret <= 0)
			break;
		if (vtg_grow(&buf, &size, len + ret + 1)) {
			ret = -ENOMEM;
			break;
		}
		if (copy_from_user(buf + len, vtg.ubuf, ret)) {
			ret = -EFAULT;
			break;
		}
		len += ret;
	}
	if (!ret && vtg_grow(&buf, &size, 1))
		ret = -ENOMEM;
	if (ret) {
		kvfree(buf);
		return ERR_PTR(ret);
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/**
 * vtg_read_instance() - read a whole file of the "vtrace" instance
 * @rel:	path relative to the instance's folder
 * @lenp:	set to the bytes read
 *
 * Context: the control thread.
 * Return: as vtg_read_whole().
 */
void *vtg_read_instance(const char *rel, size_t *lenp)
{
	struct file *f = vtg_open_instance(rel, O_RDONLY);
	void *buf;

	if (IS_ERR(f))
		return ERR_CAST(f);
	buf = vtg_read_whole(f, lenp);
	vtg_close(f);
	return buf;
}

/**
 * vtg_write_instance() - write @text to a file of the "vtrace" instance
 * @rel:	path relative to the instance's folder
 * @text:	the text, NUL-terminated; empty: open (and truncate) only
 * @trunc:	as "echo -n TEXT > FILE"; else as ">> FILE"
 *
 * Context: the control thread.
 * Return: 0 or a negative errno.
 */
int vtg_write_instance(const char *rel, const char *text, bool trunc)
{
	struct file *f = vtg_open_instance(rel, O_WRONLY | (trunc ? O_TRUNC : 0));
	ssize_t ret = 0;

	if (IS_ERR(f))
		return PTR_ERR(f);
	if (*text)
		ret = vtg_write_kbuf(f, text, strlen(text));
	vtg_close(f);
	return ret < 0 ? ret : 0;
}
