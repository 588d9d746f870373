/* outfile.h: atomic output files.
 *
 * Every file btfpipe writes goes through here: the bytes go to an unnamed
 * file (O_TMPFILE) in the target's directory, and only outfile__commit()
 * gives it a name, by linking it under a temporary name and renaming that over
 * the target. So a stage that fails, is interrupted or is killed (even by
 * SIGKILL) leaves the previous target intact and no partial file behind.
 * Where the file system has no O_TMPFILE, a named temp file is used instead
 * and removed on error and on SIGINT/SIGTERM/SIGHUP.
 * A SIGKILL between the link and the rename (or during a named temp's write)
 * leaves .NAME.tmp.PID.XXXXXX behind; the next outfile__open() of the same
 * target removes those whose process is gone.
 * A target that exists and is not a regular file (/dev/null, a FIFO) is
 * never replaced: its bytes are made in an unnamed file in $TMPDIR and
 * copied into it when published.
 */
#ifndef BTFPIPE_OUTFILE_H
#define BTFPIPE_OUTFILE_H

#include <stddef.h>
#include <stdint.h>

struct diag;

struct outfile {
	char *path;	/* the target (owned copy) */
	char *tmp;	/* a named temp file, when O_TMPFILE was unavailable */
	int fd;
	unsigned mode;	/* permissions at commit; 0 means 0644 (less umask) */
	int copy;	/* the target is not a regular file: publish copies into it */
};

/* Returns: 0, or a negative errno with the detail in d. */
int outfile__open(struct outfile *o, const char *path, struct diag *d);
/* Write all of buf at the current position / at off. */
int outfile__write(struct outfile *o, const void *buf, size_t n, struct diag *d);
int outfile__pwrite(struct outfile *o, const void *buf, size_t n, uint64_t off, struct diag *d);
/* Bytes [0, n) of the file open as fd put at [0, n) of the output, copied
 * by the kernel (copy_file_range(): no pass through our memory); where the
 * kernel cannot (another file system on an old kernel, a special file),
 * read and written through a small buffer. */
int outfile__copy_head(struct outfile *o, int fd, uint64_t n, struct diag *d);
/* Name the file: mode 0644 less umask, rename over the target. */
int outfile__commit(struct outfile *o, struct diag *d);
/* The two halves of commit, for outputs that belong together (a split BTF
 * and its distilled base): prepare sets the mode and gives the complete
 * file its hidden temp name, and is where anything can fail but a rename
 * (it allocates); publish renames it over the target. Prepare every file
 * of the set, then publish each: a failure before the first publish leaves
 * every previous target intact. Abort after prepare removes the temp. */
int outfile__prepare(struct outfile *o, struct diag *d);
int outfile__publish(struct outfile *o, struct diag *d);
/* Drop the output. Safe to call again, and after a failed open or a commit. */
void outfile__abort(struct outfile *o);

/* Write a whole buffer to path atomically. */
int outfile__write_all(const char *path, const void *buf, size_t n, struct diag *d);

#endif
