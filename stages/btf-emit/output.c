/* output.c: see output.h. */
#include "output.h"
#include "emit.h"
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

int output__write(const struct emit_opts *o, const void *raw, uint32_t size, const void *dbase, uint32_t dbase_size,
		  struct diag *d, const char **where)
{
	int err = 0;
	if (o->cli.output && (err = outfile__write_all(o->cli.output, raw, size, d)))
		return err;
	if (o->cli.output && dbase) {
		/* The distilled base beside it: OUT.base (kernel 7.x names
		 * resolve_btfids' F.BTF.base so). */
		char *bpath = NULL;
		if (asprintf(&bpath, "%s.base", o->cli.output) < 0)
			return -ENOMEM;
		*where = bpath;
		err = outfile__write_all(bpath, dbase, dbase_size, d);
		*where = o->cli.output;
		if (!err) /* split BTF over its distilled base */
			log_output(o->cli.output, bpath);
		free(bpath);
		if (err)
			return err;
	} else if (o->cli.output) {
		log_output(o->cli.output, o->base);
	}
	if (o->elf_out) {
		*where = o->elf_out;
		/* (Not with a distilled base: the ELF's .BTF is over its own
		 * .BTF.base, which the log's readers cannot take as a base.) */
		if (!(err = elf_write__btf(o->elf, o->elf_out, raw, size, dbase, dbase_size, d)) && !dbase)
			log_output(o->elf_out, o->base);
	}
	return err;
}
