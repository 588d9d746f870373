/* mapfile.c: see mapfile.h. */
#include "mapfile.h"
#include "diag.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void mapfile_done_with(const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void mapfile_will_write(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
	if (n)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

int mapfile_is_file_backed(const void *p, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	uintptr_t lo = (uintptr_t)p, hi = lo + n;
	char line[512];
	int ok = 0;
	while (!ok && fgets(line, sizeof(line), f)) {
		unsigned long long a, b, inode;
		char perms[8];
		/* start-end perms offset dev inode [path] */
		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu", &a, &b, perms, &inode) == 4)
			ok = lo >= a && hi <= b && inode != 0 && perms[1] == '-';
	}
	fclose(f);
	return ok;
}

int inputfile_open(const char *path, size_t min_size, const char *what, int *fd, size_t *size,
		   struct diag *d)
{
	int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (f < 0) {
		int err = errno;
		return diag_fail(d, err, "%s: cannot open: %s", path, strerror(err));
	}
	struct stat st;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(f);
		return diag_fail(d, EINVAL, "%s: not a regular file", path);
	}
	*size = (size_t)st.st_size;
	if (*size < min_size || !*size) {
		close(f);
		return diag_fail(d, EBADMSG, "%s: %zu bytes, too small for a %s (%zu bytes)", path, *size,
				 what, min_size);
	}
	*fd = f;
	return 0;
}

int inputfile_pread(int fd, void *buf, size_t n, uint64_t off)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		got += (size_t)r;
	}
	return 0;
}

const char *inputfile_pread_failure(int err)
{
	return err == -ENODATA ? "the file got shorter since it was opened" : strerror(-err);
}

int mapfile_open(const char *path, size_t min_size, const char *what, const void **map, size_t *size,
		 struct diag *d)
{
	int fd = -1;
	int err = inputfile_open(path, min_size, what, &fd, size, d);
	if (err)
		return err;
	void *m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (m == MAP_FAILED)
		return diag_fail(d, err, "%s: cannot map: %s", path, strerror(err));
	*map = m;
	return 0;
}
