/* dedup-merge: build one deduplicated type graph from .cus files.
 *
 *   dedup-merge [-j N] -o OUT.graph IN.cus...
 *   dedup-merge --dump FILE.graph [--provenance]
 *
 * main() is the pipeline of merge.h: open the inputs, note cross-CU targets,
 * scan every CU on N workers with results inserted in CU order, resolve,
 * refine, build, write. Messages and exit codes are made here only.
 */
#include "merge.h"
#include "../../common/cachedir.h"
#include "../../common/cli.h"
#include "../../common/diag.h"
#include "../../common/fatal.h"
#include "../../common/mapfile.h"
#include "../../common/memo.h"
#include "../../common/memtune.h"
#include "../../common/pool.h"
#include "../../common/strtab.h"
#include "../../common/version.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#define TOOL "dedup-merge"

static void usage(FILE *o)
{
	fprintf(o,
		"usage: " TOOL " [-j N] -o OUT.graph IN.cus...\n"
		"       " TOOL " --dump FILE.graph [--provenance] [--json]\n"
		"\n"
		"Reads per-CU type records (.cus, from dwarf-extract) and writes one\n"
		"deduplicated type graph (.graph; both formats: man dedup-merge): structurally equal types\n"
		"become one node, cross-CU references are resolved, forward declarations\n"
		"resolve to their one definition. The output is the same bytes for every N.\n"
		"\n"
		"  -j, --jobs N     worker threads, at most (default: the number of CPUs); a\n"
		"                   small input gets fewer: one per MB of .cus\n"
		"  -o, --output     the .graph file to write (atomically)\n"
		"      --dump       print a .graph file as canonical text and exit\n"
		"\n"
		"With a cache, a .graph is made again from the last one when every CU's\n"
		"records and the options are a cached run's, whatever the addresses (a\n"
		"relink after an edit that changed no type):\n"
		CACHEDIR_HELP
		"      --cache-verify  merge in full on a hit too, and fail if the bytes differ\n"
		"                      (or $BTFPIPE_CACHE_VERIFY=1; for testing)\n"
		"      --provenance with --dump: list every CU each node came from\n"
		"      --json       with --dump: JSON lines, every field by name, for programs\n"
		"      --stats[=json]  counts and phase times on stderr at the end\n"
		"  -q, --quiet      no progress line (shown only on a terminal anyway)\n"
		"  -v, --verbose    the --stats text too\n"
		"      --lang-exclude L  leave out CUs of these languages (comma list: rust,\n"
		"                       or DW_LANG numbers), as pahole's --lang_exclude\n"
		"  -h, --help       this text\n"
		"      --version    print the version\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error.\n");
}

/* "rust,c" or DW_LANG numbers into o->exclude_langs. */
static int parse_langs(const char *list, struct merge_opts *o)
{
	static const struct { const char *name; uint32_t lang[4]; } known[] = {
		{ "rust", { 0x1c } },
		{ "c", { 0x1, 0x2, 0xc, 0x1d } },
		{ "c++", { 0x4, 0x1a, 0x21, 0x2b } },
		{ "go", { 0x16 } },
	};
	char *copy = strdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(t, &end, 0);
		int found = !*end;
		if (found && o->nexclude < 8)
			o->exclude_langs[o->nexclude++] = (uint32_t)v;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !found; i++) {
			if (strcasecmp(t, known[i].name))
				continue;
			found = 1;
			for (int k = 0; k < 4 && known[i].lang[k] && o->nexclude < 8; k++)
				o->exclude_langs[o->nexclude++] = known[i].lang[k];
		}
		if (!found) {
			diag_error(TOOL, "--lang-exclude: unknown language '%s'", t);
			free(copy);
			return -1;
		}
	}
	free(copy);
	return 0;
}

static int parse_opts(int argc, char **argv, struct merge_opts *o)
{
	static const struct option longs[] = {
		{ "dump", required_argument, NULL, 'D' },
		{ "provenance", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'J' },
		{ "lang-exclude", required_argument, NULL, 'X' },
		{ "cache-verify", no_argument, NULL, 'Y' },
		CLI_LONG_OPTIONS,
		CACHEDIR_LONG_OPTIONS,
		{ 0 },
	};
	int c;
	cli_common_init(&o->cli);
	while ((c = getopt_long(argc, argv, CLI_SHORT_OPTIONS, longs, NULL)) != -1) {
		int took = cli_common_opt(&o->cli, TOOL, c, optarg, usage);
		if (took < 0)
			return EXIT_USAGE;
		if (took || cachedir_cli_opt(&o->cache, c, optarg))
			continue;
		switch (c) {
		case 'D': o->dump = optarg; break;
		case 'P': o->provenance = 1; break;
		case 'J': o->dump_json = 1; break;
		case 'Y': o->cache_verify = 1; break;
		case 'X':
			if (parse_langs(optarg, o))
				return EXIT_USAGE;
			break;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (cli_env_flag("BTFPIPE_CACHE_VERIFY"))
		o->cache_verify = 1;
	if (cachedir_cli_finish(&o->cache, TOOL))
		return EXIT_USAGE;
	if (o->dump) {
		if (optind != argc || o->cli.output) {
			diag_error(TOOL, "--dump takes one .graph file and nothing else");
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	if (o->dump_json) {
		diag_error(TOOL, "--json goes with --dump");
		return EXIT_USAGE;
	}
	if (optind >= argc || !o->cli.output) {
		diag_error(TOOL, "need -o OUT.graph and at least one input .cus (see --help)");
		return EXIT_USAGE;
	}
	o->inputs = (const char *const *)argv + optind;
	o->ninputs = (size_t)(argc - optind);
	return EXIT_OK;
}

static int run_dump(const struct merge_opts *o)
{
	struct diag d = { 0 };
	struct graph g;
	int err = graph__read(&g, o->dump, &d);
	if (!err) {
		err = o->dump_json ? graph__dump_json(&g, stdout, o->provenance, &d)
				   : graph__dump(&g, stdout, o->provenance, &d);
		graph__free(&g);
	}
	return err ? diag_report(&d, o->dump, err) : EXIT_OK;
}

/* The lowest CU's message of the per-CU ds[] into m->d: what one thread
 * going in CU order would have reported, at any -j. */
static void first_diag(struct merge *m, const struct diag *ds)
{
	for (size_t i = 0; i < m->ncus; i++)
		if (ds[i].set) {
			diag_take(m->d, &ds[i]);
			diag_file(m->d, m->files[m->cu_input[i]].path); /* the input it is about */
			return;
		}
}

/* Per-CU diagnostics, so the lowest failing CU's message wins at any -j.
 * Each worker decodes into its own cus[worker], reused from CU to CU. */
struct scan_run {
	struct merge *m;
	struct diag *ds;
	struct cus_cu *cus;
	struct import_scratch *imp;	/* per worker */
};

/* --lang-exclude: CU ci is left out (scanned for its name only). */
static int cu_excluded(const struct merge *m, size_t ci)
{
	uint16_t lang = m->files[m->cu_input[ci]].index[m->cu_index[ci]].language;
	for (size_t i = 0; i < m->o->nexclude; i++)
		if (lang == m->o->exclude_langs[i])
			return 1;
	return 0;
}

static int work_cu(void *ctx, unsigned worker, size_t ci)
{
	struct scan_run *r = ctx;
	struct merge *m = r->m;
	uint32_t in = m->cu_input[ci];
	if (cu_excluded(m, ci))
		return scan__cu_excluded(&m->files[in], m->cu_index[ci], in, &m->keep[worker], &m->scans[ci],
					 &r->ds[ci]);
	const struct scan_env env = {
		.wanted = &m->wanted[in], .xt = &m->xt[in], .imp = &r->imp[worker], .wt = m->wt,
		.base = m->cu_base[ci], .nrecs = m->cu_nrecs[ci], .weak = m->weak + m->cu_base[ci],
		.arena = &m->arenas[worker], .keep = &m->keep[worker],
	};
	return scan__cu(&m->files[in], m->cu_index[ci], in, &env, &r->cus[worker], &m->scans[ci], &r->ds[ci]);
}

static int insert_cu(void *ctx, size_t ci)
{
	struct scan_run *r = ctx;
	int err = classes__insert_cu(r->m, ci);
	/* The keys are in the weak table now (once per class): the rest go. */
	cu_scan__drop_keys(&r->m->scans[ci]);
	progress_step(&r->m->pr, ci + 1);
	if (err && !r->ds[ci].set && r->m->d->set)
		r->ds[ci] = *r->m->d;
	return err;
}

/* Each CU's blob checked against its checksum and its head (the extern
 * table, the record count) decoded, in parallel; in CU order, the externs go
 * into the wanted set and the count gives the CU's first gid. Per-CU
 * diagnostics, so the lowest failing CU's message wins. */
struct head_run {
	struct merge *m;
	size_t window;
	struct cus_cu *heads;	/* window slots */
	struct diag *ds;	/* per CU */
};

static int head_work(void *ctx, unsigned worker, size_t ci)
{
	struct head_run *r = ctx;
	struct merge *m = r->m;
	const struct cus_file *f = &m->files[m->cu_input[ci]];
	size_t k = m->cu_index[ci];
	(void)worker;
	return cus_file__decode_head(f, k, 1, &r->heads[ci % r->window], &r->ds[ci]);
}

static int head_add(void *ctx, size_t ci)
{
	struct head_run *r = ctx;
	struct merge *m = r->m;
	const struct cus_cu *head = &r->heads[ci % r->window];
	int err = 0;
	/* Every CU's first gid, before any scan: the scans then make gids. */
	m->cu_base[ci] = m->nnodes + 1;
	m->cu_nrecs[ci] = cu_excluded(m, ci) ? 0 : head->head_nrecs;
	m->nnodes += m->cu_nrecs[ci];
	/* Below STOP_XREF: a candidate's type is a gid or STOP_XREF | extern. */
	if (m->nnodes >= STOP_XREF - 1)
		return diag_fail(&r->ds[ci], E2BIG, "%s: more than 2 billion type records",
				 m->files[m->cu_input[ci]].path);
	for (size_t x = 0; x < head->nexterns && !err; x++)
		err = offset_set__add(&m->wanted[m->cu_input[ci]], head->externs[x]);
	return err;
}

/* Open every input, list its CUs, and note which DIE offsets some CU
 * refers to across CUs (from each blob's extern table) and where each CU's
 * gids start. The blobs' checksums are checked here too, by head_work(),
 * before anything else reads them. */
static int open_inputs(struct merge *m)
{
	const struct merge_opts *o = m->o;
	m->files = calloc(o->ninputs, sizeof(*m->files));
	m->wanted = calloc(o->ninputs, sizeof(*m->wanted));
	m->exports = exports__new(o->ninputs);
	if (!m->files || !m->wanted || !m->exports)
		return -ENOMEM;
	int err = 0;
	for (size_t i = 0; i < o->ninputs && !err; i++) {
		diag_file(m->d, o->inputs[i]);
		if ((err = cus_file__open_unchecked(&m->files[i], o->inputs[i], m->d)))
			return err;
		m->ncus += m->files[i].count;
	}
	/* One thread per MB of records: each pass starts its threads anew,
	 * which on a small module costs more than a second thread saves
	 * (bench/README.md). */
	uint64_t bytes = 0;
	for (size_t i = 0; i < o->ninputs; i++)
		bytes += m->files[i].size;
	m->jobs = pool_threads_for(o->cli.jobs, bytes, o->cli.jobs_exact ? 0 : 1u << 20);
	m->cu_input = calloc(m->ncus + 1, sizeof(uint32_t));
	m->cu_index = calloc(m->ncus + 1, sizeof(uint32_t));
	m->cu_base = calloc(m->ncus + 1, sizeof(uint64_t));
	m->cu_nrecs = calloc(m->ncus + 1, sizeof(uint32_t));
	m->scans = calloc(m->ncus + 1, sizeof(*m->scans));
	if (!m->cu_input || !m->cu_index || !m->cu_base || !m->cu_nrecs || !m->scans)
		return -ENOMEM;
	size_t ci = 0;
	for (size_t i = 0; i < o->ninputs; i++)
		for (size_t k = 0; k < m->files[i].count; k++, ci++) {
			m->cu_input[ci] = (uint32_t)i;
			m->cu_index[ci] = (uint32_t)k;
		}
	struct head_run r = { .m = m, .window = 4 * (size_t)m->jobs };
	r.heads = calloc(r.window, sizeof(*r.heads));
	r.ds = calloc(m->ncus + 1, sizeof(*r.ds));
	err = r.heads && r.ds ? pool_ordered(m->jobs, m->ncus, r.window, head_work, head_add, &r) : -ENOMEM;
	if (err && r.ds)
		first_diag(m, r.ds);
	for (size_t i = 0; r.heads && i < r.window; i++)
		cus_cu__free(&r.heads[i]);
	free(r.heads);
	free(r.ds);
	m->xt = calloc(o->ninputs, sizeof(*m->xt));
	if (!m->xt)
		return -ENOMEM;
	for (size_t i = 0, first = 0; i < o->ninputs && !err; first += m->files[i++].count) {
		diag_file(m->d, o->inputs[i]);
		err = xtargets__collect(&m->files[i], &m->wanted[i], m->cu_base + first, &m->xt[i], m->d);
	}
	if (!err)
		diag_file(m->d, NULL); /* from here on, the output's */
	return err;
}

/* What the graph's nodes and candidates were made from (cu_scan's keep). */
static void drop_kept(struct merge *m)
{
	if (m->scans)
		for (size_t i = 0; i < m->ncus; i++)
			cu_scan__drop_kept(&m->scans[i]);
	for (unsigned i = 0; m->keep && i < m->narenas; i++)
		arena_free(&m->keep[i]);
	free(m->keep);
	m->keep = NULL;
}

/* What the build needed and the write does not. merge_free() may follow. */
static void drop_work(struct merge *m)
{
	drop_kept(m);
	classes__free(m);
	strtab__free(m->strs);
	m->strs = NULL;
	if (m->scans)
		for (size_t i = 0; i < m->ncus; i++)
			cu_scan__free(&m->scans[i]);
	free(m->scans);
	m->scans = NULL;
	free(m->node_of_class); /* build__finish() frees it; not when the build failed */
	m->node_of_class = NULL;
}

/* Records from which the scan's scratch is given back to the kernel
 * (merge_run()): a vmlinux has millions, a module thousands. */
#define TRIM_RECORDS ((uint64_t)1 << 20)

static int merge_run(struct merge *m)
{
	diag_phase(m->d, "open");
	int err = open_inputs(m);
	if (err)
		return err;
	stats_phase(m->st, "open");
	diag_phase(m->d, "scan");
	/* Every gid's weak class, written by the scans (each its CU's part)
	 * and by the inserts, never moved: its size is known now. */
	m->weak = malloc((m->nnodes + 2) * sizeof(uint32_t));
	if (!m->weak)
		return -ENOMEM;
	m->weak[0] = m->weak[m->nnodes + 1] = NO_CLASS;
	m->narenas = m->jobs;
	m->arenas = calloc(m->narenas, sizeof(*m->arenas));
	m->keep = calloc(m->narenas, sizeof(*m->keep));
	if (!m->arenas || !m->keep)
		return -ENOMEM;
	if ((err = classes__init(m)))
		return err;
	m->strs = strtab__new();
	unsigned nw = m->jobs;
	struct scan_run r = { .m = m, .ds = calloc(m->ncus + 1, sizeof(struct diag)),
			      .cus = calloc(nw, sizeof(struct cus_cu)),
			      .imp = calloc(nw, sizeof(struct import_scratch)) };
	if (!m->strs || !r.ds || !r.cus || !r.imp) {
		free(r.ds);
		free(r.cus);
		free(r.imp);
		return -ENOMEM;
	}
	progress_init(&m->pr, TOOL, "CU", m->ncus, m->o->cli.quiet);
	err = pool_ordered(m->jobs, m->ncus, 4 * (size_t)m->jobs, work_cu, insert_cu, &r);
	progress_end(&m->pr);
	stats_phase(m->st, "scan");
	if (err)
		first_diag(m, r.ds);
	free(r.ds);
	for (unsigned i = 0; i < nw; i++) {
		cus_cu__free(&r.cus[i]);
		import_scratch__free(&r.imp[i]);
	}
	free(r.cus);
	free(r.imp);
	if (err)
		return err; /* each failure returns at once: its message names the phase it was in */
	/* The scan threads' malloc heaps now hold only freed scratch, which
	 * nothing after the scan allocates again; kept resident (memtune's top
	 * pad keeps 64 MiB), it would sit under the refinement's peak. Only
	 * on a big input: what is given back and asked for again faults in
	 * anew, which on a module cost more than the merge's whole build. */
	if (m->nnodes >= TRIM_RECORDS)
		malloc_trim(0);
	diag_phase(m->d, "resolve");
	if ((err = classes__resolve_xrefs(m)))
		return err;
	stats_phase(m->st, "resolve");
	diag_phase(m->d, "refine");
	if ((err = classes__refine(m)) || (err = fwds__absorb(m)) || (err = classes__settle(m)))
		return err;
	stats_phase(m->st, "refine");
	/* cands__build() also makes the graph's strings. */
	diag_phase(m->d, "build");
	if ((err = build__graph(m)) || (err = cands__build(m)))
		return err;
	drop_kept(m); /* before the provenance's arrays, or they come on top */
	if ((err = build__finish(m)))
		return err;
	stats_phase(m->st, "build");
	uint64_t types = m->ntypes;
	size_t npend = classes__cross_refs(m);
	/* From here on only the graph is needed: the scans' and the classes'
	 * arrays go before the write, or they would be its peak RSS. */
	drop_work(m);
	diag_phase(m->d, "write");
	if ((err = graph__write(&m->g, m->o->cli.output, m->jobs, m->d)))
		return err;
	stats_phase(m->st, "write");
	stats_count(m->st, "inputs", m->o->ninputs);
	stats_count(m->st, "cus", m->ncus);
	stats_count(m->st, "type_records", types);
	stats_count(m->st, "weak_classes", m->nweak);
	stats_count(m->st, "classes", m->ncls);
	stats_count(m->st, "nodes", m->g.nnodes);
	stats_count(m->st, "dedup_ratio_x100", m->g.nnodes ? types * 100 / m->g.nnodes : 0);
	stats_count(m->st, "funcs", m->g.nfuncs);
	stats_count(m->st, "vars", m->g.nvars);
	stats_count(m->st, "cross_cu_refs", npend);
	stats_count(m->st, "jobs", m->jobs);
	return 0;
}

static void merge_free(struct merge *m)
{
	drop_work(m);
	graph__free(&m->g);
	if (m->files)
		for (size_t i = 0; i < m->o->ninputs; i++) {
			cus_file__close(&m->files[i]);
			if (m->wanted) /* its calloc may be what failed */
				offset_set__free(&m->wanted[i]);
			if (m->xt)
				xtargets__free(&m->xt[i]);
		}
	free(m->files);
	free(m->wanted);
	free(m->xt);
	free(m->cu_input);
	free(m->cu_index);
	free(m->cu_base);
	free(m->cu_nrecs);
	free(m->func_ord);
	free(m->var_ord);
}

/* The memo's lookup (memo.c): the inputs' indexes opened, not their blobs,
 * and the key made of them. Returns 1 on a hit (the output written), 0 on
 * a miss with *keyed set when the key was made (an input that does not
 * open has none: the merge then says what is wrong with it), or -errno
 * when a hit's output cannot be written. */
static int memo_lookup(const struct merge_opts *o, struct cachedir *cache, unsigned jobs, struct key128 *key,
		       int *keyed, struct diag *d)
{
	struct cus_file *files = calloc(o->ninputs + 1, sizeof(*files));
	if (!files)
		return 0;
	struct diag quiet = { 0 };
	int err = 0, hit = 0;
	size_t opened = 0;
	while (opened < o->ninputs && !err)
		if (!(err = cus_file__open_unchecked(&files[opened], o->inputs[opened], &quiet)))
			opened++;
	if (!err && !merge_memo__key(o, files, key)) {
		*keyed = 1;
		hit = merge_memo__fetch(cache, *key, files, o->ninputs, o->cli.output, jobs, d);
	}
	for (size_t i = 0; i < opened; i++)
		cus_file__close(&files[i]);
	free(files);
	return hit;
}

/* --cache-verify: the hit's bytes, just written, must be a full merge's. */
static int verify_hit(struct merge *m, const char *out)
{
	const void *p;
	size_t size;
	int err = mapfile_open(out, 1, "the memo's graph", &p, &size, m->d);
	if (err)
		return err;
	size_t hit_size = size;
	uint8_t *hit = malloc(hit_size + 1);
	if (hit)
		memcpy(hit, p, hit_size);
	munmap((void *)p, size);
	if (!hit)
		return -ENOMEM;
	if (!(err = merge_run(m))) {
		if ((err = mapfile_open(out, 1, "the merged graph", &p, &size, m->d)))
			goto out;
		int same = size == hit_size && !memcmp(p, hit, size);
		munmap((void *)p, size);
		if (!same)
			err = DIAG_BUG(m->d, "the merge memo's graph differs from a full merge's "
					     "(its key misses an input)");
	}
out:
	free(hit);
	return err;
}

int main(int argc, char **argv)
{
	memtune__reexec(argv); /* first: nothing is printed twice */
	struct merge_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	if (o.dump)
		return run_dump(&o);
	struct diag d = { 0 };
	struct stats st;
	stats_init(&st, TOOL);
	stats_count(&st, "memtune", (uint64_t)memtune__active());
	struct merge m = { .o = &o, .d = &d, .st = &st };
	struct cachedir *cache = NULL;
	struct key128 key;
	int err = 0, hit = 0;
	fatal__init(&o.cli.output, &d);
	diag_phase(&d, "cache");
	int keyed = 0;
	unsigned jobs = pool_threads_for(o.cli.jobs, 0, 0);
	if ((cache = cachedir_cli_open(&o.cache, "out-v1", TOOL))) {
		hit = memo_lookup(&o, cache, jobs, &key, &keyed, &d);
		err = hit < 0 ? hit : 0;
	}
	if (!err && hit == 1 && o.cache_verify)
		err = verify_hit(&m, o.cli.output);
	if (!err && hit != 1) {
		err = merge_run(&m);
		if (!err && cache && keyed && !o.cache.readonly)
			merge_memo__store(cache, key, &m, m.jobs);
	}
	stats_count(&st, "memo_hit", hit == 1);
	cli_warn_threads(o.cli.output, o.cli.jobs);
	rc = err ? diag_report(&d, o.cli.output, err) : EXIT_OK;
	if (!err && o.cli.stats)
		stats_print(&st, stderr, o.cli.stats == 2);
	if (cache && !err)
		cachedir__finish(cache);
	cachedir_cli_report(cache, &o.cache, TOOL, !err, "stage outputs");
	cachedir__close(cache);
	merge_free(&m);
	return rc;
}
