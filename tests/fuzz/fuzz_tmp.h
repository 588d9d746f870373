/* tests/fuzz/fuzz_tmp.h: what every fuzz harness needs around its reader.
 * Included (not linked) by each tests/fuzz/fuzz_*.c, which is built alone. */
#ifndef BTFPIPE_FUZZ_TMP_H
#define BTFPIPE_FUZZ_TMP_H
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One run of a reader of a checksummed file: the input as given, then (if it
 * differs) with its header repaired by REPAIR, so that mutations get past the
 * checksums to the decoder. Aborts when a run leaks a file descriptor. */
static __attribute__((unused)) void
fuzz_read_as_given_and_repaired(const char *who, const uint8_t *data, size_t size,
				void (*read)(const char *path), void (*repair)(uint8_t *m, size_t size))
{
	tmp_write(NULL, 0); /* the file and /dev/null are opened once, before counting */
	devnull();
	int fd0 = lowest_free_fd();
	read(tmp_write(data, size));
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	repair(copy, size);
	if (size && memcmp(copy, data, size))
		read(tmp_write(copy, size));
	free(copy);
	int fd1 = lowest_free_fd();
	if (fd1 != fd0) {
		fprintf(stderr, "%s: file descriptor leaked (lowest free fd %d, was %d)\n", who, fd1, fd0);
		abort();
	}
}

#endif
