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

int mapfile_open(const char *path, size_t min_size, const char *what, const void **map, size_t *size,
		 struct diag *d)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int err = errno;
		return diag_fail(d, err, "%s: cannot open: %s", path, strerror(err));
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return diag_fail(d, EINVAL, "%s: not a regular file", path);
	}
	*size = (size_t)st.st_size;
	if (*size < min_size || !*size) {
		close(fd);
		return diag_fail(d, EBADMSG, "%s: %zu bytes, too small for a %s (%zu bytes)", path, *size,
				 what, min_size);
	}
	void *m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	int err = errno;
	close(fd);
	if (m == MAP_FAILED)
		return diag_fail(d, err, "%s: cannot map: %s", path, strerror(err));
	*map = m;
	return 0;
}
