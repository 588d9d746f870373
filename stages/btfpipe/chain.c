/* chain.c: the three stages for one input, each a child process, talking
 * through their files exactly as a developer runs them by hand (-v prints
 * the command lines):
 *
 *   dwarf-extract -o DIR/NAME.cus ELF
 *   dedup-merge -o DIR/NAME.graph DIR/NAME.cus
 *   btf-emit --elf ELF --features F (-o OUT | --elf-out OUT) DIR/NAME.graph
 *
 * Every stage gets the same -j, --stats, -q and cache options; a stage
 * that fails has printed why, and the line here names which stage it was.
 */
#include "chain.h"
#include "front.h"
#include "spawn.h"
#include "statsjson.h"
#include "../../common/diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { ARGV_MAX = 48 };

struct args {
	const char *v[ARGV_MAX + 1];
	int n;
	char jobs[16];
};

static void add(struct args *a, const char *s)
{
	if (a->n < ARGV_MAX) /* (the most any stage is given is about 25) */
		a->v[a->n++] = s;
}

/* The options every stage takes, after its path. */
static void common(struct args *a, const struct front_opts *o, const char *path)
{
	a->n = 0;
	add(a, path);
	if (o->jobs) {
		snprintf(a->jobs, sizeof(a->jobs), "%u", o->jobs);
		add(a, "-j");
		add(a, a->jobs);
	}
	if (o->stats)
		add(a, o->stats == 2 ? "--stats=json" : "--stats=text");
	if (o->quiet)
		add(a, "-q");
	/* The cache as the options resolved it (cachedir_cli_finish(): the
	 * environment's directory included, or none after --no-cache). */
	const struct cachedir_cli *c = &o->cache;
	if (c->dir) {
		add(a, "--cache");
		add(a, c->dir);
	} else if (c->no_cache) {
		add(a, "--no-cache"); /* the stages too ignore $BTFPIPE_CACHE_DIR */
	}
	if (c->size) {
		add(a, "--cache-max-size");
		add(a, c->size);
	}
	if (c->readonly)
		add(a, "--cache-readonly");
	if (c->stats)
		add(a, "--cache-stats");
}

static int run(const struct front_opts *o, struct chain_io *io, struct args *a, const char *name, struct diag *d,
	       struct statsjson *json)
{
	a->v[a->n] = NULL;
	if (o->echo) {
		fputs("+", stderr);
		for (int i = 0; i < a->n; i++)
			fprintf(stderr, " %s", a->v[i]);
		fputs("\n", stderr);
	}
	int rc = spawn_wait((char *const *)a->v, json ? io->err : NULL, d);
	if (json && rc >= 0) {
		int err = statsjson_take(json, io->err, stderr);
		if (err && !rc)
			return diag_fail(d, -err, "%s: %s", io->err, strerror(-err));
	}
	if (rc > 0 && !spawn_pending_signal())
		fprintf(stderr, "btfpipe: stage %s failed (exit %d)\n", name, rc);
	return rc;
}

static int stage_path(const struct chain *c, const char *name, char *path, struct diag *d)
{
	if (path_join(path, PATH_MAX, c->bindir, name, ""))
		return diag_fail(d, ENAMETOOLONG, "%s/%s: path too long", c->bindir, name);
	return 0;
}

int chain_run(const struct chain *c, const struct front_opts *o, struct chain_io *io, struct diag *d,
	      struct statsjson *json)
{
	char path[PATH_MAX];
	struct args a;
	int rc;
	if (o->from == FROM_START) {
		if ((rc = stage_path(c, "dwarf-extract", path, d)))
			return rc;
		common(&a, o, path);
		add(&a, "-o");
		add(&a, io->cus);
		add(&a, io->input);
		if ((rc = run(o, io, &a, "dwarf-extract", d, json)))
			return rc;
	}
	if (o->from != FROM_GRAPH) {
		if ((rc = stage_path(c, "dedup-merge", path, d)))
			return rc;
		common(&a, o, path);
		if (o->langx) {
			add(&a, "--lang-exclude");
			add(&a, o->langx);
		}
		add(&a, "-o");
		add(&a, io->graph);
		add(&a, io->cus);
		if ((rc = run(o, io, &a, "dedup-merge", d, json)))
			return rc;
	}
	if ((rc = stage_path(c, "btf-emit", path, d)))
		return rc;
	common(&a, o, path);
	add(&a, "--elf");
	add(&a, io->input);
	add(&a, "--features");
	add(&a, c->feats);
	if (o->strict)
		add(&a, "--features-strict");
	if (o->base) {
		add(&a, "--btf-base");
		add(&a, o->base);
	}
	add(&a, io->elf ? "--elf-out" : "-o");
	add(&a, io->output);
	if (o->verbose) {
		add(&a, "--skip-report");
		add(&a, io->skips);
	}
	add(&a, io->graph);
	return run(o, io, &a, "btf-emit", d, json);
}

void chain_io_init(struct chain_io *io, const struct front_opts *o, const char *input)
{
	memset(io, 0, sizeof(*io));
	io->input = input;
	if (o->detached) {
		io->output = o->detached;
	} else if (o->out) {
		io->output = o->out;
		io->to_stdout = !strcmp(o->out, "-");
	} else if (o->elfout) {
		io->output = o->elfout;
		io->elf = 1;
	} else { /* -J */
		io->output = input;
		io->elf = 1;
	}
}

int chain_io_paths(struct chain_io *io, const char *dir)
{
	const char *name = strrchr(io->input, '/') ? strrchr(io->input, '/') + 1 : io->input;
	if (path_join(io->cus, sizeof(io->cus), dir, name, ".cus") ||
	    path_join(io->graph, sizeof(io->graph), dir, name, ".graph") ||
	    path_join(io->skips, sizeof(io->skips), dir, name, ".skips") ||
	    path_join(io->err, sizeof(io->err), dir, name, ".stage-stderr") ||
	    path_join(io->btf, sizeof(io->btf), dir, name, ".btf"))
		return -ENAMETOOLONG;
	if (io->to_stdout)
		io->output = io->btf;
	return 0;
}
