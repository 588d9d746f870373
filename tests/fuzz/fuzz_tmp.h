/* tests/fuzz/fuzz_tmp.h: what every fuzz harness needs around its reader.
 * Included (not linked) by each tests/fuzz/fuzz_*.c, which is built alone. */
#ifndef BTFPIPE_FUZZ_TMP_H
#define BTFPIPE_FUZZ_TMP_H
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- the temporary file: one per process, unlinked at once, reached
 * through /proc/self/fd so a crashing run leaves nothing behind ---- */

static int tmp_fd = -1;
static char tmp_path[64];

static __attribute__((unused)) const char *tmp_write(const uint8_t *data, size_t size)
{
	if (tmp_fd < 0) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
		char tmpl[4096];
		snprintf(tmpl, sizeof(tmpl), "%s/btfpipe-fuzz-XXXXXX", dir && *dir ? dir : "/tmp");
		tmp_fd = mkstemp(tmpl);
		if (tmp_fd < 0) {
			perror("fuzz: mkstemp");
			abort();
		}
		unlink(tmpl);
		snprintf(tmp_path, sizeof(tmp_path), "/proc/self/fd/%d", tmp_fd);
	}
	if (ftruncate(tmp_fd, 0) < 0) {
		perror("fuzz: ftruncate");
		abort();
	}
	for (size_t done = 0; done < size;) {
		ssize_t n = pwrite(tmp_fd, data + done, size - done, (off_t)done);
		if (n <= 0) {
			perror("fuzz: pwrite");
			abort();
		}
		done += (size_t)n;
	}
	return tmp_path;
}

/* The lowest free descriptor: it grows when a run leaks one. */
static __attribute__((unused)) int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd;
}

static __attribute__((unused)) FILE *devnull(void)
{
	static FILE *f;
	if (!f && !(f = fopen("/dev/null", "w"))) {
		perror("fuzz: /dev/null");
		abort();
	}
	return f;
}

#endif
