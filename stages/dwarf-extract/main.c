/* dwarf-extract: read an ELF's DWARF and write per-CU type records (.cus).
 *
 *   dwarf-extract [-j N] -o OUT.cus ELF
 *   dwarf-extract --dump FILE.cus
 *
 * main() is the pipeline: options, open the input, extract every CU on N
 * workers with results committed in unit order, write atomically. Messages
 * and exit codes are made here and nowhere below.
 */
#include "extract.h"
#include "cache.h"
#include "../../common/cli.h"
#include "../../common/diag.h"
#include "../../common/pool.h"
#include "../../common/stats.h"
#include "../../common/version.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "dwarf-extract"

static void usage(FILE *o)
{
	fprintf(o,
		"usage: " TOOL " [-j N] [--cache DIR] -o OUT.cus ELF\n"
		"       " TOOL " --dump FILE.cus\n"
		"       " TOOL " --cache DIR --cache-stats\n"
		"\n"
		"Reads the DWARF of ELF (an executable, a .o or .ko, a vmlinux) and writes\n"
		"its per-CU type records to OUT.cus (format/CU-RECORDS.md). The output is\n"
		"the same bytes for every N.\n"
		"\n"
		"  -j, --jobs N   worker threads (default: the number of CPUs)\n"
		"      --stats[=json]  counts and phase times on stderr at the end\n"
		"  -q, --quiet    no progress line (shown only on a terminal anyway)\n"
		"  -v, --verbose  the --stats text too\n"
		"  -o, --output   the .cus file to write (atomically)\n"
		"      --dump     print a .cus file as canonical text and exit\n"
		"      --cache DIR     reuse extracted CUs from DIR and store new ones there\n"
		"                      (default: $BTFPIPE_CACHE_DIR; format/CU-CACHE.md)\n"
		"      --no-cache      ignore $BTFPIPE_CACHE_DIR\n"
		"      --cache-max-size SIZE  evict the least recently used entries past\n"
		"                      SIZE (like 500M, 2G; 0 no limit; default $BTFPIPE_CACHE_MAX_SIZE\n"
		"                      or 2G)\n"
		"      --cache-readonly  look up only: never store, touch or evict\n"
		"                      (or $BTFPIPE_CACHE_READONLY=1)\n"
		"      --cache-stats   print the cache's counters on stderr at the end; alone\n"
		"                      with --cache DIR, print them and exit\n"
		"      --cache-verify  extract cache hits too and fail if they differ\n"
		"                      (or $BTFPIPE_CACHE_VERIFY=1; for testing)\n"
		"  -h, --help     this text\n"
		"      --version  print the version\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error.\n");
}

static int parse_opts(int argc, char **argv, struct extract_opts *o)
{
	static const struct option longs[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "dump", required_argument, NULL, 'D' },
		{ "stats", optional_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "cache", required_argument, NULL, 'C' },
		{ "no-cache", no_argument, NULL, 'N' },
		{ "cache-max-size", required_argument, NULL, 'M' },
		{ "cache-readonly", no_argument, NULL, 'R' },
		{ "cache-stats", no_argument, NULL, 'T' },
		{ "cache-verify", no_argument, NULL, 'Y' },
		{ 0 },
	};
	int c, no_cache = 0;
	const char *size = NULL;
	o->jobs = pool_ncpus();
	while ((c = getopt_long(argc, argv, "j:o:hqv", longs, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (cli_parse_jobs(TOOL, optarg, &o->jobs))
				return EXIT_USAGE;
			break;
		case 'o': o->output = optarg; break;
		case 'D': o->dump = optarg; break;
		case 'S':
			if (cli_parse_stats(TOOL, optarg, &o->stats))
				return EXIT_USAGE;
			break;
		case 'q': o->quiet = 1; break;
		case 'v': o->stats = o->stats ? o->stats : 1; break;
		case 'C': o->cache_dir = optarg; break;
		case 'N': no_cache = 1; break;
		case 'M': size = optarg; break;
		case 'R': o->cache_readonly = 1; break;
		case 'T': o->cache_stats = 1; break;
		case 'Y': o->cache_verify = 1; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': printf(TOOL " (btfpipe) " BTFPIPE_VERSION "\n"); exit(EXIT_OK);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	/* The environment is how a Makefile that only calls pipeline.sh (or
	 * pipeline.sh as PAHOLE) turns the cache on. */
	const char *env;
	if (!o->cache_dir && !no_cache && (env = getenv("BTFPIPE_CACHE_DIR")) && *env)
		o->cache_dir = env;
	if (no_cache)
		o->cache_dir = NULL;
	if (!size && (env = getenv("BTFPIPE_CACHE_MAX_SIZE")) && *env)
		size = env;
	o->cache_max = 2ull << 30;
	if (size && cache_parse_size(size, &o->cache_max)) {
		diag_error(TOOL, "cache size '%s' is not a size (like 500M, 2G, or 0 for no limit)", size);
		return EXIT_USAGE;
	}
	if ((env = getenv("BTFPIPE_CACHE_READONLY")) && *env && strcmp(env, "0"))
		o->cache_readonly = 1;
	if ((env = getenv("BTFPIPE_CACHE_VERIFY")) && *env && strcmp(env, "0"))
		o->cache_verify = 1;
	if (o->cache_stats && !o->cache_dir) {
		diag_error(TOOL, "--cache-stats needs --cache DIR (or $BTFPIPE_CACHE_DIR)");
		return EXIT_USAGE;
	}
	if (o->cache_stats && optind == argc && !o->output && !o->dump)
		return EXIT_OK; /* print the cache's totals only */
	if (o->dump) {
		if (optind != argc || o->output) {
			diag_error(TOOL, "--dump takes one .cus file and nothing else");
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	if (optind + 1 != argc || !o->output) {
		diag_error(TOOL, "need exactly one input ELF and -o OUT.cus (see --help)");
		return EXIT_USAGE;
	}
	o->input = argv[optind];
	return EXIT_OK;
}

static int run_dump(const char *path)
{
	struct diag d = { 0 };
	struct cus_file f;
	int err = cus_file__open(&f, path, &d);
	if (!err) {
		err = cus_file__dump(&f, stdout, &d);
		cus_file__close(&f);
	}
	return err ? diag_report(&d, path, err) : EXIT_OK;
}

/* One unit's result, handed from a worker to the in-order writer. */
struct slot {
	uint8_t *blob;
	size_t size;
	size_t nrecs;
	uint16_t language;
	struct diag d;
};

struct run {
	struct input in;
	struct stats st;
	struct progress pr;
	uint64_t records, bytes;
	struct cu_walk *walkers; /* one per worker */
	struct cache *cache;	/* NULL without --cache */
	struct cached cached;
	struct cached_worker *cws; /* one per worker */
	struct slot *slots;
	struct cus_writer writer;
	struct diag d; /* the writer's errors */
};

static int work_unit(void *ctx, unsigned worker, size_t i)
{
	struct run *r = ctx;
	struct cu_walk *w = &r->walkers[worker];
	struct slot *s = &r->slots[i];
	w->d = &s->d;
	int err;
	if (r->cache) {
		err = cached__unit(&r->cached, &r->cws[worker], w, &r->in.units[i], &s->language, &s->nrecs);
	} else {
		err = cu_walk__extract(w, &r->in.units[i]);
		s->language = (uint16_t)w->cu.language;
		s->nrecs = w->cu.nrecs;
	}
	if (err)
		return err;
	s->blob = malloc(w->blob.len);
	if (!s->blob)
		return -ENOMEM;
	if (w->blob.len)
		memcpy(s->blob, w->blob.data, w->blob.len);
	s->size = w->blob.len;
	return 0;
}

static int emit_unit(void *ctx, size_t i)
{
	struct run *r = ctx;
	struct slot *s = &r->slots[i];
	const struct unit *u = &r->in.units[i];
	struct cus_index_entry meta = {
		.cu_offset = u->offset, .unit_type = u->unit_type, .dwarf_version = u->version,
		.language = s->language,
	};
	int err = cus_writer__add(&r->writer, s->blob, s->size, &meta, &r->d);
	r->records += s->nrecs;
	r->bytes += s->size;
	input__done_with_unit(&r->in, u);
	progress_step(&r->pr, i + 1);
	free(s->blob);
	s->blob = NULL;
	return err;
}

static int extract(const struct extract_opts *o, struct run *r)
{
	int err = input__open(&r->in, o->input, o->jobs, &r->d);
	if (err)
		return err;
	stats_phase(&r->st, "open");
	r->walkers = calloc(o->jobs, sizeof(*r->walkers));
	r->slots = calloc(r->in.nunits ? r->in.nunits : 1, sizeof(*r->slots));
	if (!r->walkers || !r->slots)
		return -ENOMEM;
	for (unsigned i = 0; i < o->jobs; i++)
		if ((err = cu_walk__init(&r->walkers[i], &r->in, r->in.dw[i], &r->d)))
			return err;
	if (o->cache_dir) {
		struct cache_opts co = { .dir = o->cache_dir, .max_size = o->cache_max,
					 .readonly = o->cache_readonly };
		if ((err = cache__open(&r->cache, &co, &r->d)))
			return err;
		if ((err = cached__init(&r->cached, r->cache, &r->in, o->cache_verify)))
			return diag_fail(&r->d, -err, "cannot hash this program for the cache key: %s",
					 strerror(-err));
		r->cws = calloc(o->jobs, sizeof(*r->cws));
		if (!r->cws)
			return -ENOMEM;
	}
	if ((err = cus_writer__open(&r->writer, o->output, &r->in.ident, &r->d)))
		return err;
	progress_init(&r->pr, TOOL, "CU", r->in.nunits, o->quiet);
	err = pool_ordered(o->jobs, r->in.nunits, 4 * (size_t)o->jobs, work_unit, emit_unit, r);
	progress_end(&r->pr);
	stats_phase(&r->st, "extract");
	if (err) {
		/* Report the lowest failing unit's own message: the same at any -j. */
		for (size_t i = 0; i < r->in.nunits; i++)
			if (r->slots[i].d.set) {
				r->d = r->slots[i].d;
				break;
			}
		return err;
	}
	err = cus_writer__finish(&r->writer, &r->d);
	stats_phase(&r->st, "write");
	if (!err && r->cache) {
		cache__finish(r->cache);
		stats_phase(&r->st, "cache");
	}
	stats_count(&r->st, "units", r->in.nunits);
	stats_count(&r->st, "records", r->records);
	stats_count(&r->st, "blob_bytes", r->bytes);
	stats_count(&r->st, "jobs", o->jobs);
	return err;
}

/* --cache DIR --cache-stats alone: the directory's totals. */
static int run_cache_stats(const struct extract_opts *o)
{
	struct diag d = { 0 };
	struct cache *c;
	struct cache_opts co = { .dir = o->cache_dir, .max_size = o->cache_max, .readonly = 1 };
	int err = cache__open(&c, &co, &d);
	if (err)
		return diag_report(&d, o->cache_dir, err);
	cache__print_stats(c, stdout, 0);
	cache__close(c);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct extract_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	if (o.dump)
		return run_dump(o.dump);
	if (!o.input)
		return run_cache_stats(&o);

	struct run r = { 0 };
	stats_init(&r.st, TOOL);
	int err = extract(&o, &r);
	rc = err ? diag_report(&r.d, o.input, err) : EXIT_OK;
	if (!err && o.stats)
		stats_print(&r.st, stderr, o.stats == 2);
	if (r.cache && cache__warning(r.cache))
		diag_warn(TOOL, "cache %s: %s (the output is not affected)", o.cache_dir,
			  cache__warning(r.cache));
	if (!err && r.cache && o.cache_stats)
		cache__print_stats(r.cache, stderr, 1);

	cus_writer__abort(&r.writer);
	if (r.walkers)
		for (unsigned i = 0; i < o.jobs; i++)
			cu_walk__free(&r.walkers[i]);
	if (r.cws)
		for (unsigned i = 0; i < o.jobs; i++)
			cached_worker__free(&r.cws[i]);
	free(r.cws);
	cache__close(r.cache);
	if (r.slots)
		for (size_t i = 0; i < r.in.nunits; i++)
			free(r.slots[i].blob);
	free(r.walkers);
	free(r.slots);
	input__close(&r.in);
	return rc;
}
