/* output.c: see output.h. */
#include "output.h"
#include "emit.h"
#include "../../common/diag.h"
#include "../../common/elf_write.h"
#include "../../common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* $BTFPIPE_EMIT_LOG names a file that gets a line "OUTPUT<TAB>BASE" (both
 * absolute, BASE empty without --btf-base, OUTPUT.base with a distilled
 * base; an ELF with .BTF.base is not logged) for each BTF written: a test
 * harness or a build system can check every output (tests/run.sh has
 * libbpf deduplicate each). One O_APPEND write per line, so the lines of
 * emits running at once never mix. Best effort: the BTF is written
 * whatever becomes of the log. */
static void log_output(const char *path, const char *base)
{
	const char *log = getenv("BTFPIPE_EMIT_LOG");
	if (!log || !*log)
		return;
	char *out = realpath(path, NULL), *b = base ? realpath(base, NULL) : NULL;
	char *line = NULL;
	int fd = -1;
	if (out && asprintf(&line, "%s\t%s\n", out, b ? b : "") < 0)
		line = NULL; /* asprintf() leaves it undefined then */
	if (line && (fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) >= 0) {
		ssize_t n = write(fd, line, strlen(line));
		(void)n; /* best effort, as said */
		close(fd);
	}
	free(line);
	free(out);
	free(b);
}

/* path's outfile written with buf and prepared (outfile.h): 0, or -errno
 * with *f already aborted. */
static int write_prepared(struct outfile *f, const char *path, const void *buf, size_t n, struct diag *d)
{
	int err = outfile__open(f, path, d);
	if (!err && (err = outfile__write(f, buf, n, d)))
		outfile__abort(f);
	return err ? err : outfile__prepare(f, d);
}

/* Every file of the set is written and prepared before any is published:
 * the split BTF -o and its distilled OUT.base belong together, and -o and
 * --elf-out are one run's output. So a failure anywhere before the renames
 * (out of memory, a full disk) leaves every previous file as it was: never
 * a new OUT beside an old OUT.base. Only a rename itself failing can leave
 * the set half new. */
int output__write(const struct emit_opts *o, const void *raw, uint32_t size, const void *dbase, uint32_t dbase_size,
		  struct diag *d)
{
	struct outfile f[3]; /* -o, OUT.base, --elf-out: those given, in order */
	const char *said[3]; /* each one's file in messages (OUT.base's is -o: bpath is ours) */
	int n = 0, err = 0;
	char *bpath = NULL;
	/* The distilled base beside -o: OUT.base (kernel 7.x names
	 * resolve_btfids' F.BTF.base so). */
	if (o->cli.output && dbase && asprintf(&bpath, "%s.base", o->cli.output) < 0)
		return -ENOMEM;
	if (o->cli.output) {
		diag_file(d, said[n] = o->cli.output);
		err = write_prepared(&f[n++], o->cli.output, raw, size, d);
		if (!err && bpath) {
			said[n] = o->cli.output;
			err = write_prepared(&f[n++], bpath, dbase, dbase_size, d);
		}
	}
	if (!err && o->elf_out) {
		diag_file(d, said[n] = o->elf_out);
		err = elf_write__btf_prepare(o->elf, o->elf_out, raw, size, dbase, dbase_size, &f[n++], d);
	}
	for (int i = 0; i < n; i++) {
		if (err) {
			outfile__abort(&f[i]); /* (again for the one that failed: safe) */
			continue;
		}
		diag_file(d, said[i]);
		err = outfile__publish(&f[i], d);
	}
	if (!err && o->cli.output) /* split BTF over its distilled base, else over --btf-base */
		log_output(o->cli.output, bpath ? bpath : o->base);
	/* (Not with a distilled base: the ELF's .BTF is over its own
	 * .BTF.base, which the log's readers cannot take as a base.) */
	if (!err && o->elf_out && !dbase)
		log_output(o->elf_out, o->base);
	free(bpath);
	return err;
}
