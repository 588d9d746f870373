/* mapfile.h: map a whole input file read-only, refusing what is not a
 * regular file (a directory, a FIFO: opened without blocking) or is shorter
 * than `min_size` bytes. `what` names the expected content in messages
 * (".cus header"). Unmap with munmap(map, size). */
#ifndef BTFPIPE_MAPFILE_H
#define BTFPIPE_MAPFILE_H

#include <stddef.h>

struct diag;

/* Tell the kernel a part of a mapping is done with for now: its pages leave
 * this process's resident set (and come back from the page cache if read
 * again). Only whole pages inside [p, p + n) are dropped. */
void mapfile_done_with(const void *p, size_t n);

/* Returns: 0, or a negative errno with the detail (naming path) in d. */
int mapfile_open(const char *path, size_t min_size, const char *what, const void **map, size_t *size,
		 struct diag *d);

#endif
