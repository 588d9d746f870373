/* runmemo.h: a whole run of the stages, reused when nothing it reads changed
 * (runmemo.c; format/CU-CACHE.md, "Stage outputs"). */
#ifndef BTFPIPE_RUNMEMO_H
#define BTFPIPE_RUNMEMO_H

#include "../../common/hash.h"

struct front_opts;
struct diag;

/* The key of a run over input with options o, its stages in bindir, the
 * features string feats, the BTF going into an ELF (elf) or detached: 0,
 * or -errno when an input cannot be read (the run then goes on without the
 * memo, and the stage that reads it says why). */
int runmemo_key(const struct front_opts *o, const char *input, int elf, const char *bindir, const char *feats,
		struct key128 *out);

#endif
