/* runmemo.c: the key of a whole run of the three stages.
 *
 * A kernel build runs pahole once per module, and a rebuild of a tree
 * whose vmlinux did not change hands it the same module bytes and the same
 * base: the answer is then in the cache, and finding it should cost one
 * process, not three. The key is an xxh3-128 over what decides the output
 * bytes: this program and its libraries (memo_key_begin()), the three
 * stages (their build ids), the features, whether the output is an ELF or
 * detached BTF, --lang_exclude, the base's digest (its .BTF only: the key
 * of a module never reads vmlinux's DWARF) and the input's bytes (a
 * vmlinux's on -j threads). Not -j: every stage writes the same bytes at
 * any thread count.
 * The stored value is the BTF, which main.c writes detached or into the
 * ELF (-J).
 */
#include "runmemo.h"
#include "front.h"
#include "spawn.h"
#include "../../common/btf_file.h"
#include "../../common/memo.h"
#include "../../common/pool.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

int runmemo_key(const struct front_opts *o, const char *input, int elf, const char *bindir, const char *feats,
		struct key128 *out)
{
	static const char *const stages[] = { "dwarf-extract", "dedup-merge", "btf-emit" };
	struct memo_key k;
	memo_key_begin(&k, "btfpipe: a run");
	k.jobs = o->jobs ? o->jobs : pool_ncpus(); /* (the stages' default too) */
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		char path[PATH_MAX];
		if (path_join(path, sizeof(path), bindir, stages[i], ""))
			return -ENAMETOOLONG;
		memo_key_program(&k, path);
	}
	memo_key_str(&k, feats);
	memo_key_u64(&k, (uint64_t)o->strict);
	memo_key_str(&k, elf ? "elf" : "detached");
	memo_key_str(&k, o->langx);
	memo_key_str(&k, o->base ? "base" : NULL);
	if (o->base) {
		struct key128 digest;
		int err = btf_file__digest(o->base, &digest);
		if (err)
			return err;
		memo_key_u64(&k, digest.lo);
		memo_key_u64(&k, digest.hi);
	}
	memo_key_file(&k, input);
	return memo_key_end(&k, out);
}
