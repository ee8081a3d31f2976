// SPDX-License-Identifier: GPL-2.0
/* fuzz.c: helpers shared by the libFuzzer targets. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>

#include "fuzz.h"
#include "vtrace-dump.h"

volatile uint64_t fuzz_sink;
static char dir[PATH_MAX];

static void remove_dir(void)
{
	char cmd[PATH_MAX + 16];

	if (dir[0] && snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) < (int)sizeof(cmd))
		if (system(cmd))
			fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/vtrace-fuzz.XXXXXX", tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	return path;
}

void fuzz_write(const char *name, const void *buf, size_t len)
{
	int fd = open(fuzz_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0) {
		perror("fuzz: open");
		abort();
	}
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("fuzz: write");
			abort();
		}
		done += w;
	}
	close(fd);
}

void fuzz_unlink(const char *name)
{
	if (unlink(fuzz_path(name)) && errno != ENOENT) {
		perror("fuzz: unlink");
		abort();
	}
}

unsigned int fuzz_dump_flags(void)
{
	return getenv("FUZZ_NO_PROBE") ? VTRACE_DUMP_NO_PROBE : 0;
}

unsigned long fuzz_contained;

void fuzz_note_contained(const uint8_t *data, size_t size)
{
	const char *keep = getenv("FUZZ_CONTAINED");
	uint64_t h = 0xcbf29ce484222325ULL;
	char path[PATH_MAX];
	int fd;

	if (!strstr(vtrace_last_error(), "(in a child process)"))
		return;
	fuzz_contained++;
	if (!keep)
		return;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	snprintf(path, sizeof(path), "%s/contained-%016llx", keep, (unsigned long long)h);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;		/* kept already */
	if (write(fd, data, size) != (ssize_t)size)
		perror("fuzz: write");
	close(fd);
}

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	return 0;
}
