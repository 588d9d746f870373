/* chain.h: one input through the three stages, as child processes
 * (chain.c). */
#ifndef BTFPIPE_CHAIN_H
#define BTFPIPE_CHAIN_H

#include <limits.h>

struct diag;
struct front_opts;
struct statsjson;

/* What every run of the stages shares. */
struct chain {
	char bindir[PATH_MAX];	/* where dwarf-extract, dedup-merge, btf-emit are */
	char feats[1024];	/* btf-emit --features */
};

/* One input's files. */
struct chain_io {
	const char *input;	/* the ELF */
	const char *output;	/* the BTF's file: detached, or an ELF (elf) */
	int elf;		/* output is an ELF with .BTF (-J, --elf-out) */
	int to_stdout;		/* -o -: output is a file in the work dir, copied out */
	char cus[PATH_MAX], graph[PATH_MAX], skips[PATH_MAX], err[PATH_MAX], btf[PATH_MAX];
};

/* io for input under options o, before its work directory is known:
 * enough for the memo. */
void chain_io_init(struct chain_io *io, const struct front_opts *o, const char *input);
/* The checkpoints and side files in dir (NAME.cus, NAME.graph, ...). 0 or
 * -ENAMETOOLONG. */
int chain_io_paths(struct chain_io *io, const char *dir);

/* dwarf-extract, dedup-merge and btf-emit over io (from --from's stage on).
 * json: --stats=json, each stage's object gathered there. Returns 0, the
 * exit code of the first stage that failed (its message printed, and a
 * line naming it), or -errno (d). */
int chain_run(const struct chain *c, const struct front_opts *o, struct chain_io *io, struct diag *d,
	      struct statsjson *json);

#endif
