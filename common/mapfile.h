/* mapfile.h: open an input file to read it, or map it whole read-only,
 * refusing what is not a regular file (a directory, a FIFO: opened without
 * blocking) or is shorter than `min_size` bytes. `what` names the expected
 * content in messages (".cus header"). Unmap with munmap(map, size). */
#ifndef BTFPIPE_MAPFILE_H
#define BTFPIPE_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

struct diag;

/* Tell the kernel a part of a mapping is done with for now: its pages leave
 * this process's resident set (and come back from the page cache if read
 * again). Only whole pages inside [p, p + n) are dropped. */
void mapfile_done_with(const void *p, size_t n);

/* Is [p, p + n) inside one read-only mapping of a file (per /proc/self/maps)?
 * mapfile_done_with() on anything else (a heap copy a library made when it
 * could not map, a writable private page) would lose its contents, so
 * memory another library hands out is checked with this first. */
int mapfile_is_file_backed(const void *p, size_t n);

/* The opposite of mapfile_done_with(): [p, p + n) of a private mapping is
 * about to be written, so every page of it (rounded out to whole pages,
 * copied unchanged) is made writable now, in one call, rather than by one
 * copy-on-write fault per page. A hint: when the kernel cannot (before
 * Linux 5.14, or memory that is not a mapping), the writes fault as before. */
void mapfile_will_write(void *p, size_t n);

/* Open path for reading with pread(); *fd is the caller's to close.
 * Returns: 0, or a negative errno with the detail (naming path) in d. */
int inputfile_open(const char *path, size_t min_size, const char *what, int *fd, size_t *size,
		   struct diag *d);
/* Read exactly n bytes at off. Returns: 0, -ENODATA when the file ends
 * first (it shrank since it was opened), or another negative errno. */
int inputfile_pread(int fd, void *buf, size_t n, uint64_t off);
/* Why inputfile_pread() failed (its return), for a message. */
const char *inputfile_pread_failure(int err);

/* Returns: 0, or a negative errno with the detail (naming path) in d. */
int mapfile_open(const char *path, size_t min_size, const char *what, const void **map, size_t *size,
		 struct diag *d);

#endif
