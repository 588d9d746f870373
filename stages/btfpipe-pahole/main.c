/* btfpipe-pahole: pahole -J's command line, run as the three stages.
 *
 *   btfpipe-pahole PAHOLE-OPTIONS... ELF     (what PAHOLE= runs in a kernel build)
 *
 * A kernel build starts pahole once for vmlinux and once per module, and
 * for a small module most of the time was not the work: bash reading
 * pipeline.sh and starting three processes through it, and, with a warm
 * cache, three stages each starting only to find its answer in the cache.
 * This program is that chain without bash, and with the whole run's answer
 * looked up before any stage starts. pipeline.sh hands its pahole mode to
 * it. It links no stage: it runs them, and they talk through their files
 * in a private temp directory, exactly as pipeline.sh runs them.
 *
 * main() is its pipeline, over one struct run:
 *   options      pahole's options, as pahole reads them (front.c); --version,
 *                --help and --supported_btf_features are answered here.
 *   find stages  $BTFPIPE_BIN, else the directory this program is in.
 *   memo lookup  with a cache ($BTFPIPE_CACHE_DIR) and no side output
 *                (--verbose, $BTFPIPE_STATS): the key of the whole run
 *                (runmemo.c); on a hit the stored BTF is written,
 *                atomically, detached or into the ELF as btf-emit
 *                writes it, and no stage runs.
 *   stages       dwarf-extract, dedup-merge, btf-emit as children, with
 *                glibc's malloc tunables in their environment
 *                (common/memtune.h); the first that fails ends the run with
 *                its exit code, and its own message already printed.
 *   memo store   the BTF just written goes into the cache under the key
 *                made before the stages ran (with -J, the input is the
 *                output: its bytes before the run are what the key holds).
 *   skips        with --verbose, pahole's lines for the functions skipped.
 * The temp directory is removed on every way out, a signal included: a
 * SIGINT, SIGTERM or SIGHUP is passed to the running stage, and raised
 * again here once the directory is gone. Exit codes are the stages'
 * (README "Exit codes").
 */
#include "front.h"
#include "runmemo.h"
#include "skips.h"
#include "spawn.h"
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

#define TOOL "btfpipe-pahole"

/* The answer to --version: the highest pahole whose every BTF feature
 * btfpipe implements. The kernel's scripts/pahole-version.sh turns "v1.32"
 * into 132 and passes the flags of that version. */
#define PAHOLE_COMPAT_VERSION "v1.32"

struct run {
	struct front_opts o;
	char bindir[PATH_MAX];
	char feats[1024];	/* btf-emit --features */
	const char *output;	/* the detached BTF, or the input itself (-J) */
	int stats;		/* $BTFPIPE_STATS: each stage's --stats text */
	struct cachedir_cli cli;
	struct cachedir *cache;	/* NULL: no whole-run memo */
	struct key128 key;
	struct workdir w;
	char cus[PATH_MAX], graph[PATH_MAX], skips[PATH_MAX];
	struct diag d;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " TOOL " [pahole options] ELF\n"
		"\n"
		"pahole -J's command line as kernel Makefiles write it (-J, -j, --btf_base,\n"
		"--btf_encode_detached, --btf_features[_strict], --lang_exclude, the legacy\n"
		"--btf_gen_* and --skip_encoding_btf_* flags, --verbose, --version,\n"
		"--supported_btf_features), run as btfpipe's three stages. With\n"
		"$BTFPIPE_CACHE_DIR, a run whose inputs are in the cache costs one process.\n"
		"See pipeline.sh --help and README \"In a kernel build\".\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error.\n");
}

static int find_stages(struct run *r)
{
	const char *env = getenv("BTFPIPE_BIN");
	if (env && *env) {
		int w = snprintf(r->bindir, sizeof(r->bindir), "%s", env);
		return w < 0 || (size_t)w >= sizeof(r->bindir) ? diag_fail(&r->d, ENAMETOOLONG, "$BTFPIPE_BIN is too long") : 0;
	}
	ssize_t n = readlink("/proc/self/exe", r->bindir, sizeof(r->bindir) - 1);
	if (n <= 0)
		return diag_fail(&r->d, errno, "cannot find where this program is (/proc/self/exe)");
	r->bindir[n] = 0;
	char *slash = strrchr(r->bindir, '/');
	if (slash)
		*slash = 0;
	return 0;
}

/* 1 on a hit (the output written), 0 to run the stages, or -errno. */
static int memo_lookup(struct run *r)
{
	/* Not with side outputs, nor with a distilled base (a second output
	 * the memo does not hold: out-of-tree modules only). */
	if (r->o.verbose || r->stats || strstr(r->feats, "distilled_base") ||
	    cachedir_cli_finish(&r->cli, TOOL) || !r->cli.dir)
		return 0;
	if (!(r->cache = cachedir_cli_open(&r->cli, "out-v1", TOOL)))
		return 0;
	if (runmemo_key(&r->o, r->bindir, r->feats, &r->key)) {
		cachedir__close(r->cache); /* an input it cannot read: the stage that reads it says why */
		r->cache = NULL;
		return 0;
	}
	uint8_t *raw;
	size_t size;
	if (!memo_fetch(r->cache, r->key, &raw, &size))
		return 0;
	/* -J: the input again with this .BTF, as btf-emit --elf-out writes it. */
	int err = r->o.detached ? outfile__write_all(r->output, raw, size, &r->d)
				: elf_write__btf(r->o.input, r->output, raw, size, NULL, 0, &r->d);
	free(raw);
	return err ? err : 1;
}

/* The BTF just written into the cache: the detached file, or the .BTF of
 * the ELF -J rewrote (a module's whole ELF would be a copy of every module
 * in the cache; its BTF is a few KB). A failure only counts (cachedir.h). */
static void memo_store(struct run *r)
{
	uint64_t off = 0, len;
	if (r->o.detached) {
		memo_store_file(r->cache, r->key, r->output);
		return;
	}
	const void *m;
	size_t size;
	if (btf_file__elf_section(r->output, &off, &len) ||
	    mapfile_open(r->output, 1, "ELF", &m, &size, NULL))
		return;
	if (off <= size && len <= size - off)
		cachedir__put(r->cache, r->key, (const uint8_t *)m + off, (size_t)len, NULL, 0);
	munmap((void *)m, size);
}

/* Put glibc's malloc tunables in the stages' environment (memtune.h), as
 * pipeline.sh does, so that none of them starts itself again for them. */
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

/* Run stage name with args (NULL-terminated, after the common ones).
 * 0, the stage's exit code (its message printed), or -errno (r->d). */
static int stage(struct run *r, const char *name, const char **args)
{
	char path[PATH_MAX], jobs[16];
	const char *argv[40];
	int n = 0;
	if (path_join(path, sizeof(path), r->bindir, name, ""))
		return diag_fail(&r->d, ENAMETOOLONG, "%s/%s: path too long", r->bindir, name);
	argv[n++] = path;
	if (r->o.jobs) {
		snprintf(jobs, sizeof(jobs), "%u", r->o.jobs % 1000);
		argv[n++] = "-j";
		argv[n++] = jobs;
	}
	if (r->stats)
		argv[n++] = "--stats=text";
	while (*args && n < 39)
		argv[n++] = *args++;
	argv[n] = NULL;
	int rc = spawn_wait((char *const *)argv, &r->d);
	if (rc > 0 && !spawn_pending_signal())
		fprintf(stderr, "btfpipe: " TOOL ": stage %s failed (exit %d)\n", name, rc);
	return rc;
}

static int run_stages(struct run *r)
{
	int err = workdir_make(&r->w, &r->d);
	if (err)
		return err;
	const char *name = strrchr(r->o.input, '/') ? strrchr(r->o.input, '/') + 1 : r->o.input;
	if (path_join(r->cus, sizeof(r->cus), r->w.path, name, ".cus") ||
	    path_join(r->graph, sizeof(r->graph), r->w.path, name, ".graph") ||
	    path_join(r->skips, sizeof(r->skips), r->w.path, ".skips", ""))
		return diag_fail(&r->d, ENAMETOOLONG, "%s/%s: path too long", r->w.path, name);
	memtune_env();

	const char *x[] = { "-o", r->cus, r->o.input, NULL };
	if ((err = stage(r, "dwarf-extract", x)))
		return err;
	const char *m[6];
	int k = 0;
	if (r->o.langx) {
		m[k++] = "--lang-exclude";
		m[k++] = r->o.langx;
	}
	m[k++] = "-o";
	m[k++] = r->graph;
	m[k++] = r->cus;
	m[k] = NULL;
	if ((err = stage(r, "dedup-merge", m)))
		return err;
	const char *e[16];
	int n = 0;
	e[n++] = "--elf";
	e[n++] = r->o.input;
	e[n++] = "--features";
	e[n++] = r->feats;
	if (r->o.strict)
		e[n++] = "--features-strict";
	if (r->o.base) {
		e[n++] = "--btf-base";
		e[n++] = r->o.base;
	}
	e[n++] = r->o.detached ? "-o" : "--elf-out";
	e[n++] = r->output;
	if (r->o.verbose) {
		e[n++] = "--skip-report";
		e[n++] = r->skips;
	}
	e[n++] = r->graph;
	e[n] = NULL;
	return stage(r, "btf-emit", e);
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	int rc = front_parse(argc, argv, &r.o, TOOL);
	if (rc)
		return rc;
	if (r.o.help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (r.o.version) {
		puts(PAHOLE_COMPAT_VERSION);
		return EXIT_OK;
	}
	int err = find_stages(&r);
	if (!err && r.o.supported) {
		char path[PATH_MAX];
		if (!(err = path_join(path, sizeof(path), r.bindir, "btf-emit", ""))) {
			execl(path, path, "--supported-features", (char *)NULL);
			err = diag_fail(&r.d, errno, "%s: cannot start: %s", path, strerror(errno));
		}
	}
	front_feature_string(&r.o, r.feats, sizeof(r.feats));
	r.output = r.o.detached ? r.o.detached : r.o.input;
	r.stats = cli_env_flag("BTFPIPE_STATS");

	int hit = err ? 0 : memo_lookup(&r);
	if (hit < 0)
		err = hit;
	if (!err && hit != 1)
		err = run_stages(&r);
	if (!err && hit != 1 && r.cache)
		memo_store(&r);
	if (!err && r.o.verbose && (err = skips_print(r.skips, stdout)))
		diag_fail(&r.d, -err, "%s: cannot read the skip report", r.skips);
	workdir_remove(&r.w);
	if (r.cache && !err)
		cachedir__finish(r.cache);
	cachedir_cli_report(r.cache, &r.cli, TOOL, !err, "whole runs");
	cachedir__close(r.cache);

	int sig = spawn_pending_signal();
	if (sig) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	if (err > 0)
		return err; /* a stage's exit code; it said why */
	return err ? diag_report(&r.d, r.o.input, err) : EXIT_OK;
}
