/* btfpipe: the one front door. DWARF to BTF as the three stages, from our
 * command line or from pahole's.
 *
 *   btfpipe [options] (-o OUT.btf | --elf-out FILE) ELF     ours
 *   btfpipe [pahole options] (-J | --btf_encode_detached F) ELF...   pahole's
 *   btfpipe-pahole ..., pipeline.sh ...   the same program (a symlink, and a
 *                      script that execs it); --version answers as pahole
 *
 * A kernel build starts pahole once for vmlinux and once per module, and
 * for a small module most of the time was not the work but starting
 * processes, and with a warm cache three stages each starting only to find
 * its answer there. So this is C, it answers a run it has seen from its
 * memo before any stage starts, and it links no stage: it runs them, and
 * they talk through their files, which --keep leaves for a developer.
 *
 * main() is its pipeline, over one struct run:
 *   options      either dialect (front.c), into one set of options with
 *                the same defaults in both; --help, --version and
 *                --supported_btf_features are answered here. A command
 *                line that cannot run is refused before anything is made.
 *   setup        the stages' directory ($BTFPIPE_BIN, else this program's;
 *                --supported_btf_features is btf-emit's answer from there);
 *                glibc's malloc tunables in their environment
 *                (common/memtune.h); the signals caught, so that from here
 *                every way out goes through cleanup; --keep's directory.
 *   inputs       every input readable, before any is written (-J rewrites
 *                each input in place).
 *   each input   memo lookup: with a cache and no side output, the key of
 *                the whole run (runmemo.c); on a hit the stored BTF is
 *                written atomically, as btf-emit would have, and no stage
 *                runs. Else the stages (chain.c) as children, the first
 *                that fails ending the run with its exit code; then the
 *                BTF into the memo, -o -'s BTF to stdout, --stats=json's
 *                object, pahole --verbose's skip lines.
 *   cleanup      the temp directory removed (with what a killed stage left
 *                there), the cache's counters, and a caught signal raised
 *                again, so the caller sees how this run ended.
 * Exit codes: the stages' (man btfpipe, EXIT STATUS), or 128 + a signal.
 */
#include "chain.h"
#include "front.h"
#include "runmemo.h"
#include "skips.h"
#include "spawn.h"
#include "statsjson.h"
#include "version.h"
#include "../../common/btf_file.h"
#include "../../common/cachedir.h"
#include "../../common/cli.h"
#include "../../common/diag.h"
#include "../../common/elf_write.h"
#include "../../common/mapfile.h"
#include "../../common/memo.h"
#include "../../common/memtune.h"
#include "../../common/outfile.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TOOL "btfpipe"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: btfpipe [options] (-o OUT.btf | --elf-out FILE) ELF\n"
		"       btfpipe [pahole options] (-J ELF... | --btf_encode_detached FILE ELF)\n"
		"\n"
		"DWARF to BTF as three stages: dwarf-extract ELF -> NAME.cus, dedup-merge ->\n"
		"NAME.graph, btf-emit -> BTF. Run as btfpipe-pahole or pipeline.sh (the same\n"
		"program), it stands in for pahole -J in a kernel build (PAHOLE=btfpipe-pahole).\n"
		"\n"
		"Output (one of):\n"
		"  -o, --output FILE        raw BTF (\"-\": stdout)\n"
		"      --elf-out FILE       a copy of ELF with the BTF as its .BTF section\n"
		"  -J, --btf_encode         pahole's: .BTF into each ELF, in place\n"
		"      --btf_encode_detached FILE  pahole's: raw BTF into FILE\n"
		"Options (both command lines):\n"
		"  -j N, -jN, --jobs=N      threads per stage, 1-1024 (default: the CPUs); the\n"
		"                           output is the same. In pahole's command line the\n"
		"                           number is attached: a bare -j is the CPUs, and a\n"
		"                           word after it an input file, as in pahole\n"
		"      --features LIST      the BTF features, as pahole's --btf_features:\n"
		"                           \"default\", \"+feat,...\" or \"feat,...\" (also\n"
		"                           --btf_features); without it, what pahole -J encodes\n"
		"                           without options: var,decl_tag,type_tag,enum64\n"
		"      --features-strict    an unknown feature is an error (--btf_features_strict LIST)\n"
		"      --btf-base BASE      split BTF over BASE's (also --btf_base)\n"
		"      --lang-exclude LIST  leave out CUs in these languages, e.g. rust\n"
		"                           (also --lang_exclude; default $PAHOLE_LANG_EXCLUDE)\n"
		"      --keep DIR           keep the checkpoints DIR/NAME.cus and DIR/NAME.graph\n"
		"      --from cus|graph     start from the checkpoint kept in --keep DIR\n"
		"      --stats[=text|json]  each stage's counts and times (text: stderr; json:\n"
		"                           one object on stdout; $BTFPIPE_STATS=1: text)\n"
		"  -v                       print each stage's command line on stderr\n"
		"  -V, --verbose            pahole's lines for the functions not encoded (stdout)\n"
		"  -q, --quiet              no progress lines\n"
		CACHEDIR_HELP
		"      --supported_btf_features  the features this build encodes\n"
		"      --version            btfpipe's version and commit (as btfpipe-pahole or\n"
		"                           pipeline.sh: the pahole version it matches, " PAHOLE_COMPAT_VERSION ")\n"
		"pahole's legacy flags are taken: --btf_gen_floats, --btf_gen_all,\n"
		"--btf_gen_optimized, --skip_encoding_btf_inconsistent_proto,\n"
		"--skip_encoding_btf_{vars,decl_tag,type_tag,enum64}, --btf_encode_force,\n"
		"--reproducible_build.\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error (a bug),\n"
		"128+N killed by signal N. See man btfpipe.\n");
}

struct run {
	struct front_opts o;
	struct chain c;		/* what the stages are run with (chain.h) */
	struct cachedir *cache;	/* NULL: no whole-run memo */
	struct workdir w;	/* the temp directory, made when first needed */
	struct statsjson json;
	struct diag d;
};

/* Where the stages are: $BTFPIPE_BIN, else where this program is (through
 * any symlink: btfpipe-pahole is one). */
static int find_stages(struct run *r)
{
	char *bindir = r->c.bindir;
	size_t n = sizeof(r->c.bindir);
	const char *env = getenv("BTFPIPE_BIN");
	if (env && *env) {
		int w = snprintf(bindir, n, "%s", env);
		return w < 0 || (size_t)w >= n ? diag_fail(&r->d, ENAMETOOLONG, "$BTFPIPE_BIN is too long") : 0;
	}
	ssize_t len = readlink("/proc/self/exe", bindir, n - 1);
	if (len <= 0)
		return diag_fail(&r->d, errno, "cannot find where this program is (/proc/self/exe)");
	bindir[len] = 0;
	char *slash = strrchr(bindir, '/');
	if (slash)
		*slash = 0;
	return 0;
}

/* Put glibc's malloc tunables in the stages' environment (memtune.h), so
 * that none of them starts itself again for them. */
static void memtune_env(void)
{
	const char *off = getenv("BTFPIPE_MEMTUNE"), *cur = getenv("GLIBC_TUNABLES");
	if ((off && !strcmp(off, "0")) || memtune__limited())
		return;
	if (cur && strstr(cur, MEMTUNE_TUNABLES))
		return;
	char buf[4096];
	int w = snprintf(buf, sizeof(buf), "%s%s%s", MEMTUNE_TUNABLES, cur && *cur ? ":" : "", cur && *cur ? cur : "");
	if (w > 0 && (size_t)w < sizeof(buf)) /* else the stages start themselves again */
		setenv("GLIBC_TUNABLES", buf, 1);
}

/* The directory the checkpoints and side files go in: --keep's, else the
 * temp directory, made on first use. 0 or -errno (r->d). */
static int work_dir(struct run *r, const char **dir)
{
	*dir = r->o.keep ? r->o.keep : r->w.path;
	return r->o.keep || r->w.path[0] ? 0 : workdir_make(&r->w, &r->d);
}

/* --supported_btf_features: btf-emit's list, from btf-emit itself. Returns
 * only when it could not be started (-errno, r->d). */
static int supported_features(struct run *r)
{
	char path[PATH_MAX];
	int err = path_join(path, sizeof(path), r->c.bindir, "btf-emit", "");
	if (err)
		return diag_fail(&r->d, -err, "%s/btf-emit: path too long", r->c.bindir);
	execl(path, path, "--supported-features", (char *)NULL);
	return diag_fail(&r->d, errno, "%s: cannot start: %s", path, strerror(errno));
}

static int setup(struct run *r)
{
	int err;
	front_feature_string(&r->o, r->c.feats, sizeof(r->c.feats));
	memtune_env();
	spawn_catch_signals();
	/* --keep DIR is made; with --from it must hold the checkpoints
	 * already, and a missing one is the stage's error, nothing made. */
	if (r->o.keep && !r->o.from && (err = mkdir_parents(r->o.keep)))
		return diag_fail(&r->d, -err, "%s: cannot make the directory: %s", r->o.keep, strerror(-err));
	/* The memo: not with side outputs (checkpoints, commands, counts,
	 * skip lines), nor with a distilled base (a second output it does
	 * not hold: out-of-tree modules only). */
	if (r->o.cache.dir && !r->o.keep && !r->o.echo && !r->o.verbose && !r->o.stats &&
	    !strstr(r->c.feats, "distilled_base"))
		r->cache = cachedir_cli_open(&r->o.cache, "out-v1", TOOL);
	return 0;
}

/* Each input there and readable before the first is rewritten. The exit
 * code after saying which (3, as a stage that cannot open its input), or
 * 0. pahole 1.32 exits 0 on a missing input, having done nothing. */
static int check_inputs(const struct front_opts *o)
{
	for (int i = 0; i < o->ninputs; i++) {
		const char *in = o->inputs[i];
		if (!access(in, R_OK))
			continue;
		int err = errno;
		diag_error(in, "cannot open: %s%s", strerror(err),
			   o->bare_j ? " (pahole's -j takes its number attached, -j4: a word after a bare -j is an input)" : "");
		return diag_exit_code(-err);
	}
	return 0;
}

/* 1 on a hit (the output written), 0 to run the stages, or -errno. *keyed:
 * whether *key was made, and so whether the run may be stored under it. */
static int memo_lookup(struct run *r, struct chain_io *io, struct key128 *key, int *keyed)
{
	*keyed = r->cache && !runmemo_key(&r->o, io->input, io->elf, r->c.bindir, r->c.feats, key);
	if (!*keyed)
		return 0; /* no cache, or an input it cannot read: the stage that reads it says why */
	uint8_t *raw;
	size_t size;
	if (!memo_fetch(r->cache, *key, &raw, &size))
		return 0;
	int err = io->elf ? elf_write__btf(io->input, io->output, raw, size, NULL, 0, &r->d)
			  : outfile__write_all(io->output, raw, size, &r->d);
	free(raw);
	return err ? err : 1;
}

/* The BTF just written into the cache: the raw file, or the .BTF of the
 * ELF written (a module's whole ELF would be a copy of every module in the
 * cache; its BTF is a few KB). A failure only counts (cachedir.h). */
static void memo_store(struct run *r, const struct chain_io *io, struct key128 key)
{
	uint64_t off = 0, len;
	if (!io->elf) {
		memo_store_file(r->cache, key, io->output);
		return;
	}
	const void *m;
	size_t size;
	if (btf_file__elf_section(io->output, &off, &len) || mapfile_open(io->output, 1, "ELF", &m, &size, NULL))
		return;
	if (off <= size && len <= size - off)
		cachedir__put(r->cache, key, (const uint8_t *)m + off, (size_t)len, NULL, 0);
	munmap((void *)m, size);
}

/* path's bytes to stdout (-o -). 0 or -errno (EPIPE: the reader left). */
static int copy_to_stdout(struct run *r, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return diag_fail(&r->d, errno, "%s: %s", path, strerror(errno));
	char buf[1 << 16];
	size_t n;
	int err = 0;
	while (!err && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, stdout) != n)
			err = -errno;
	if (!err && fflush(stdout))
		err = -errno;
	fclose(f);
	return err ? diag_fail(&r->d, -err, "stdout: %s", strerror(-err)) : 0;
}

/* One input, start to end. 0, a stage's exit code (it said why), or
 * -errno (r->d). */
static int one_input(struct run *r, const char *input)
{
	struct chain_io io;
	const char *dir = NULL;
	int err, keyed = 0, hit = 0;
	chain_io_init(&io, &r->o, input);
	struct key128 key;
	if (!io.to_stdout && (hit = memo_lookup(r, &io, &key, &keyed)) < 0)
		return hit;
	if (hit)
		return 0;
	if ((err = work_dir(r, &dir)))
		return err;
	if ((err = chain_io_paths(&io, dir)))
		return diag_fail(&r->d, -err, "%s: path too long", dir);
	if ((err = chain_run(&r->c, &r->o, &io, &r->d, r->o.stats == 2 ? &r->json : NULL)))
		return err;
	if (keyed)
		memo_store(r, &io, key);
	if (io.to_stdout && (err = copy_to_stdout(r, io.output)))
		return err;
	if (r->o.stats == 2 && (err = statsjson_print(&r->json, stdout)))
		return diag_fail(&r->d, -err, "stdout: %s", strerror(-err));
	if (r->o.verbose && (err = skips_print(io.skips, stdout)))
		return diag_fail(&r->d, -err, "%s: cannot read the skip report", io.skips);
	return 0;
}

static int is_pahole_name(const char *name)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	return !strcmp(base, "btfpipe-pahole") || !strcmp(base, "pipeline.sh") || !strcmp(base, "pahole");
}

/* Whether this run answers as pahole: by the name it was started under,
 * or by $BTFPIPE_AS, which pipeline.sh sets because a POSIX shell's exec
 * cannot give a program another argv[0] (bash's exec -a can, but bash
 * costs a step more to start than the rest of a cached module's step).
 * It is taken out of the environment at once, so that nothing this run
 * starts inherits the name. */
static int as_pahole_name(const char *argv0)
{
	const char *as = getenv("BTFPIPE_AS");
	int r = is_pahole_name(argv0) || (as && is_pahole_name(as));
	unsetenv("BTFPIPE_AS");
	return r;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	int rc = front_parse(argc, argv, as_pahole_name(argv[0]), &r.o, TOOL);
	if (rc)
		return rc;
	if (r.o.help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (r.o.version) {
		version_print(stdout, r.o.as_pahole);
		return EXIT_OK;
	}
	int err = find_stages(&r);
	if (!err && r.o.supported)
		err = supported_features(&r);
	if (!err)
		err = setup(&r);
	if (!err && (rc = check_inputs(&r.o)))
		err = rc;
	for (int i = 0; !err && i < r.o.ninputs && !spawn_pending_signal(); i++)
		err = one_input(&r, r.o.inputs[i]);

	/* cleanup */
	workdir_remove(&r.w);
	if (r.cache && !err)
		cachedir__finish(r.cache);
	cachedir_cli_report(r.cache, &r.o.cache, TOOL, !err, "whole runs");
	cachedir__close(r.cache);
	free(r.json.text);
	int sig = spawn_pending_signal();
	if (sig) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	if (err > 0)
		rc = err; /* a stage's exit code (it said why), or check_inputs()' */
	else
		rc = err ? diag_report(&r.d, r.o.ninputs == 1 ? r.o.inputs[0] : TOOL, err) : EXIT_OK;
	return rc;
}
