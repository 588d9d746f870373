/* dwarf-extract: read an ELF's DWARF and write per-CU type records (.cus).
 *
 *   dwarf-extract [-j N] -o OUT.cus ELF
 *   dwarf-extract --dump FILE.cus
 *
 * main() is the pipeline: options, then extract_units()'s passes over one
 * struct run: open (the input, its DWARF hash's plan, the walkers, the
 * cache), extract (every CU on N workers, each placed in the output in
 * unit order, the offsets and the index being the only part on one thread,
 * and written there by the workers), write (the identity, address table,
 * index and header, then an atomic commit). Messages and exit codes are
 * made here and nowhere below.
 */
#include "extract.h"
#include "cached.h"
#include "cu_walk.h"
#include "input.h"
#include "dwarf_hash.h"
#include "../../common/claim.h"
#include "../../common/mapfile.h"
#include "../../common/memo.h"
#include "../../common/memtune.h"
#include "../../common/outfile.h"
#include "../../common/cli.h"
#include "../../common/diag.h"
#include "../../common/fatal.h"
#include "../../common/pool.h"
#include "../../common/stats.h"
#include "../../common/version.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "dwarf-extract"

static void usage(FILE *o)
{
	fprintf(o,
		"usage: " TOOL " [-j N] [--cache DIR] -o OUT.cus ELF\n"
		"       " TOOL " --dump FILE.cus [--json]\n"
		"       " TOOL " --cache DIR --cache-stats\n"
		"\n"
		"Reads the DWARF of ELF (an executable, a .o or .ko, a vmlinux) and writes\n"
		"its per-CU type records to OUT.cus (its format: man dwarf-extract). The output is\n"
		"the same bytes for every N.\n"
		"\n"
		"  -j, --jobs N   worker threads, at most (default: the number of CPUs); a\n"
		"                 small input gets fewer: one per 512 KB of .debug_info\n"
		"      --stats[=json]  counts and phase times on stderr at the end\n"
		"  -q, --quiet    no progress line (shown only on a terminal anyway)\n"
		"  -v, --verbose  the --stats text too\n"
		"  -o, --output   the .cus file to write (atomically)\n"
		"      --dump     print a .cus file as canonical text and exit\n"
		"      --json     with --dump: JSON lines, every field by name, for programs\n"
		"\n"
		"The cache reuses extracted CUs (and the whole .cus of an unchanged .o/.ko);\n"
		"--cache DIR --cache-stats alone prints its totals:\n"
		CACHEDIR_HELP
		"      --cache-verify  extract cache hits too and fail if they differ\n"
		"                      (or $BTFPIPE_CACHE_VERIFY=1; for testing)\n"
		"\n"
		"      --libdw-only  read every DIE through libdw, not the DIE reader, and\n"
		"                    relocate a .o/.ko through libdwfl, not reloc.c\n"
		"                    (slower, same output: a check of the reader)\n"
		"  -h, --help     this text\n"
		"      --version  print the version\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error.\n");
}

static int parse_opts(int argc, char **argv, struct extract_opts *o)
{
	static const struct option longs[] = {
		{ "dump", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'J' },
		CLI_LONG_OPTIONS,
		CACHEDIR_LONG_OPTIONS,
		{ "cache-verify", no_argument, NULL, 'Y' },
		{ "libdw-only", no_argument, NULL, 'L' },
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
		case 'J': o->dump_json = 1; break;
		case 'Y': o->cache_verify = 1; break;
		case 'L': o->libdw_only = 1; break;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (cachedir_cli_finish(&o->cache, TOOL))
		return EXIT_USAGE;
	if (cli_env_flag("BTFPIPE_CACHE_VERIFY"))
		o->cache_verify = 1;
	if (o->cache.stats && optind == argc && !o->cli.output && !o->dump)
		return EXIT_OK; /* print the cache's totals only */
	if (o->dump) {
		if (optind != argc || o->cli.output) {
			diag_error(TOOL, "--dump takes one .cus file and nothing else");
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	if (o->dump_json) {
		diag_error(TOOL, "--json goes with --dump");
		return EXIT_USAGE;
	}
	if (optind + 1 != argc || !o->cli.output) {
		diag_error(TOOL, "need exactly one input ELF and -o OUT.cus (see --help)");
		return EXIT_USAGE;
	}
	o->input = argv[optind];
	return EXIT_OK;
}

static int run_dump(const char *path, int json)
{
	struct diag d = { 0 };
	struct cus_file f;
	int err = cus_file__open(&f, path, &d);
	if (!err) {
		err = json ? cus_file__dump_json(&f, stdout, &d) : cus_file__dump(&f, stdout, &d);
		cus_file__close(&f);
	}
	return err ? diag_report(&d, path, err) : EXIT_OK;
}

/* One unit's result, handed from a worker to the in-order writer, which
 * gives it its place in the output; then written there by whichever worker
 * claims it (write_placed()). */
struct slot {
	uint8_t *blob;		/* owned until written */
	size_t size;
	struct key128 key;	/* key128_of(blob, size), hashed where it was made */
	struct key128 content;	/* and its content and address pairs (cus_blob__content) */
	struct cus_addr *addrs;	/* owned until placed */
	uint32_t naddrs, nexterns;
	uint64_t off;		/* its place in the output, from emit_unit() */
	int werr;		/* its write failed: the error, the detail in d */
	size_t nrecs;
	uint16_t language;
	struct diag d;
};

struct run {
	struct input in;
	struct stats st;
	struct progress pr;
	uint64_t records, bytes;
	unsigned jobs;		/* workers: in.ndw, what -j gave at most (input__open()) */
	struct cu_walk *walkers; /* one per worker */
	struct cachedir *cache;	/* NULL without --cache; kind "cu-v1" */
	struct cachedir *whole;	/* ET_REL inputs: the whole .cus (kind "out-v1") */
	struct key128 whole_key;
	struct cached cached;
	struct cached_worker *cws; /* one per worker */
	struct slot *slots;	/* one per unit, then one per DWARF hash piece */
	uint8_t **hbufs;	/* per worker: a DWARF hash piece is read through it */
	/* The input's DWARF hash (dwarf_hash.c): its sections listed once the
	 * input is open, its pieces hashed by the workers or up front. The run
	 * owns it; it reads the input. */
	struct dwarf_hash dh;
	struct cus_writer writer;
	struct diag d; /* the writer's errors */
	/* Which units have their place and which are written (claim.h):
	 * emit_unit() publishes each place, write_placed() claims. */
	struct claim cl;
};

/* Write the placed blobs nobody has claimed yet: from every worker between
 * its units, so the copy into the output is not the in-order writer's, and
 * from the calling thread at the end. A failed write stays in its slot;
 * only placed units are written, and those come before any unit that
 * failed, so the lowest slot with a detail is the error a serial run meets
 * first. */
static void write_placed(struct run *r)
{
	size_t k;
	while (claim_next(&r->cl, &k)) {
		struct slot *s = &r->slots[k];
		s->werr = cus_writer__write_at(&r->writer, s->blob, s->size, s->off, &s->d);
		free(s->blob);
		s->blob = NULL;
	}
}

/* The DWARF hash pieces the walkers do not hash come after the units, as
 * pool items of their own (dwarf_hash.c): a worker picks one up where it
 * would wait for the last units. Read HASH_BUF bytes at a time. */
#define HASH_BUF ((size_t)256 << 10)

static int hash_piece(struct run *r, unsigned worker, size_t k, struct diag *d)
{
	if (!r->hbufs[worker] && !(r->hbufs[worker] = malloc(HASH_BUF)))
		return -ENOMEM;
	return dwarf_hash__piece(&r->dh, &r->in, r->dh.todo[k], r->hbufs[worker], HASH_BUF, d);
}

static int work_unit(void *ctx, unsigned worker, size_t i)
{
	struct run *r = ctx;
	struct cu_walk *w = &r->walkers[worker];
	struct slot *s = &r->slots[i];
	write_placed(r);
	if (i >= r->in.nunits)
		return hash_piece(r, worker, i - r->in.nunits, &s->d);
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
	if (w->blob.err)
		return w->blob.err;
	/* The unit's bytes, just walked, are still in this CPU's cache. */
	if (r->dh.units_by_walkers && !(r->in.units[i].offset & CUS_ALT_BIT))
		dwarf_hash__unit(&r->dh, i, r->in.info_map + r->in.units[i].offset);
	/* The slot takes the walker's buffer as it is (copying 169 MB of
	 * blobs per vmlinux showed in profiles), and the walker starts the
	 * next unit in a new one as big: write_placed() has just freed a
	 * written slot's buffer of about that size, which malloc hands out
	 * again. */
	s->naddrs = (uint32_t)w->naddr;
	if (!(s->addrs = malloc((w->naddr + 1) * sizeof(*s->addrs))))
		return -ENOMEM;
	if (cus_blob__content(w->blob.data, w->blob.len, w->addr_at, w->naddr, &s->content, s->addrs,
			      &s->nexterns))
		return DIAG_BUG(&s->d, "CU at 0x%llx: the blob just made has an address pair out of place",
				(unsigned long long)r->in.units[i].offset);
	size_t cap = w->blob.cap;
	s->blob = w->blob.data;
	s->size = w->blob.len;
	s->key = key128_of(s->blob, s->size); /* here, not in emit_unit()'s CU order */
	w->blob = (struct buf){ 0 };
	return buf_reserve(&w->blob, cap);
}

static int emit_unit(void *ctx, size_t i)
{
	struct run *r = ctx;
	if (i >= r->in.nunits)
		return 0; /* a DWARF hash piece: nothing to write */
	struct slot *s = &r->slots[i];
	const struct unit *u = &r->in.units[i];
	struct cus_index_entry meta = {
		.cu_offset = u->offset, .unit_type = u->unit_type, .dwarf_version = u->version,
		.language = s->language, .key = s->key, .content = s->content, .addr_count = s->naddrs,
		.nexterns = s->nexterns,
	};
	int err = cus_writer__place(&r->writer, s->size, &meta, s->addrs, &s->off, &s->d);
	free(s->addrs);
	s->addrs = NULL;
	if (err)
		return err;
	claim_publish(&r->cl, i + 1);
	r->records += s->nrecs;
	r->bytes += s->size;
	input__done_with_unit(&r->in, u);
	progress_step(&r->pr, i + 1);
	return 0;
}

static int extract_units(const struct extract_opts *o, struct run *r);

/* Is path an ELF relocatable file (.o, .ko)? Read from its header alone. */
static int is_relocatable(const char *path)
{
	unsigned char h[18];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd >= 0 ? pread(fd, h, sizeof(h), 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return 0;
	unsigned type = h[EI_DATA] == ELFDATA2MSB ? (unsigned)(h[16] << 8 | h[17]) : (unsigned)(h[16] | h[17] << 8);
	return type == ET_REL;
}

/* A relocatable input (a module) unchanged since a cached run: its whole
 * .cus is in the cache, and nothing is opened, relocated or walked. The key
 * is the file's bytes and its base name (the .cus names its input); under
 * --cache-verify the hit's bytes are kept in *verify and compared with a
 * real extraction instead. Returns 1 when the output is written. */
static int whole_hit(const struct extract_opts *o, struct run *r, uint8_t **verify, size_t *vsize)
{
	struct diag quiet = { 0 }; /* a cache that cannot open fails below, with the CU cache */
	if (!is_relocatable(o->input) || cachedir__open(&r->whole, &o->cache.opts, "out-v1", &quiet))
		return 0;
	struct memo_key k;
	const char *base = strrchr(o->input, '/');
	memo_key_begin(&k, "dwarf-extract: the .cus of a relocatable file");
	memo_key_str(&k, base ? base + 1 : o->input);
	memo_key_file(&k, o->input);
	if (memo_key_end(&k, &r->whole_key)) {
		cachedir__close(r->whole);
		r->whole = NULL;
		return 0;
	}
	uint8_t *data;
	size_t size;
	if (!memo_fetch(r->whole, r->whole_key, &data, &size))
		return 0;
	if (o->cache_verify) {
		*verify = data;
		*vsize = size;
		return 0;
	}
	int err = outfile__write_all(o->cli.output, data, size, &r->d);
	free(data);
	return err ? err : 1;
}

/* --cache-verify of a whole-file hit: the extraction just written must
 * have the same bytes. */
static int whole_verify(const char *out, const uint8_t *want, size_t n, struct diag *d)
{
	const void *got;
	size_t size;
	int err = mapfile_open(out, 1, ".cus", &got, &size, d);
	if (err)
		return err;
	int same = size == n && !memcmp(got, want, n);
	munmap((void *)got, size);
	return VERIFY(d, same, "%s: the cached .cus of this file differs from a fresh "
		      "extraction (its key misses an input)", out);
}

static int extract(const struct extract_opts *o, struct run *r)
{
	uint8_t *verify = NULL;
	size_t vsize = 0;
	diag_phase(&r->d, "cache");
	int err = o->cache.dir ? whole_hit(o, r, &verify, &vsize) : 0;
	if (err) {
		stats_phase(&r->st, "cache");
		if (err > 0 && r->whole)
			cachedir__finish(r->whole);
		return err < 0 ? err : 0;
	}
	err = extract_units(o, r);
	if (!err && verify)
		err = whole_verify(o->cli.output, verify, vsize, &r->d);
	else if (!err && r->whole)
		memo_store_file(r->whole, r->whole_key, o->cli.output);
	free(verify);
	if (!err && r->whole)
		cachedir__finish(r->whole);
	return err;
}

/* open: the input (its Dwarf handles, sections and unit list), the DWARF
 * hash's sections, a walker per worker, the cache; with a cache, the DWARF
 * hash made now (some units' keys fold it in, cached.c), else planned for
 * the workers. */
static int open_pass(const struct extract_opts *o, struct run *r)
{
	int err = input__open(&r->in, o->input, o->cli.jobs, o->cli.jobs_exact ? 0 : INFO_PER_WORKER,
			      o->libdw_only, &r->d);
	/* The DWARF hash's sections as the file stores them (compressed ones
	 * already plain: inflate.c's copy); hashed later, in pieces. */
	if (!err)
		err = dwarf_hash__sections(&r->dh, &r->in, &r->d);
	if (err)
		return err;
	r->jobs = r->in.ndw;
	r->walkers = calloc(r->jobs, sizeof(*r->walkers));
	r->hbufs = calloc(r->jobs, sizeof(*r->hbufs));
	if (!r->walkers || !r->hbufs)
		return -ENOMEM;
	for (unsigned i = 0; i < r->jobs; i++) {
		if ((err = cu_walk__init(&r->walkers[i], &r->in, r->in.dw[i], &r->d)))
			return err;
		r->walkers[i].libdw_only = o->libdw_only;
	}
	r->cache = cachedir_cli_open(&o->cache, "cu-v1", TOOL);
	if ((err = dwarf_hash__plan(&r->dh, &r->in, !r->cache, &r->d)))
		return err;
	if (r->cache) {
		for (size_t k = 0; k < r->dh.ntodo && !err; k++)
			err = hash_piece(r, 0, k, &r->d);
		if (err)
			return err;
		r->dh.ntodo = 0;
		r->in.ident.dwarf_hash = dwarf_hash__digest(&r->dh);
	}
	return 0;
}

/* extract: every unit on the workers (from the cache, or walked), each
 * placed in unit order and written by whichever worker claims it, and the
 * DWARF hash's remaining pieces beside them. On failure, the lowest
 * failing item's message: the same at any -j. */
static int extract_pass(const struct extract_opts *o, struct run *r)
{
	int err;
	size_t nitems = r->in.nunits + r->dh.ntodo;
	r->slots = calloc(nitems ? nitems : 1, sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	if (r->cache) {
		if ((err = cached__init(&r->cached, r->cache, &r->in, o->cache_verify)))
			return diag_fail(&r->d, -err, "cannot hash this program for the cache key: %s",
					 strerror(-err));
		r->cws = calloc(r->jobs, sizeof(*r->cws));
		if (!r->cws)
			return -ENOMEM;
	}
	if ((err = cus_writer__open(&r->writer, o->cli.output, &r->in.ident, &r->d)))
		return err;
	progress_init(&r->pr, TOOL, "CU", r->in.nunits, o->cli.quiet);
	err = pool_ordered(r->jobs, nitems, 4 * (size_t)r->jobs, work_unit, emit_unit, r);
	write_placed(r); /* what the workers left, also after a failure: see write_placed() */
	progress_end(&r->pr);
	for (size_t i = 0; i < r->cl.placed && !err; i++)
		err = r->slots[i].werr;
	for (size_t i = 0; err && i < nitems; i++)
		if (r->slots[i].d.set) {
			diag_take(&r->d, &r->slots[i].d);
			break;
		}
	return err;
}

/* write: the identity block's DWARF hash (when the workers made it), the
 * address table, index and header, the file committed; the cache's size
 * kept. */
static int write_pass(struct run *r)
{
	int err;
	if (!r->cache) {
		r->in.ident.dwarf_hash = dwarf_hash__digest(&r->dh);
		if ((err = cus_writer__set_ident(&r->writer, &r->in.ident, &r->d)))
			return err;
	}
	return cus_writer__finish(&r->writer, &r->d);
}

static void count_stats(struct run *r)
{
	stats_count(&r->st, "units", r->in.nunits);
	stats_count(&r->st, "records", r->records);
	stats_count(&r->st, "blob_bytes", r->bytes);
	uint64_t reader_units = 0;
	for (unsigned i = 0; i < r->jobs; i++)
		reader_units += r->walkers[i].reader_units;
	stats_count(&r->st, "reader_units", reader_units);
	/* A relocatable file: 1 when reloc.c relocated it, 0 when libdwfl did. */
	if (r->in.is_rel)
		stats_count(&r->st, "reloc_own", r->in.rel_elf != NULL);
	if (r->in.rel_elf)
		stats_count(&r->st, "reloc_threads", r->in.reloc_threads);
	stats_count(&r->st, "jobs", r->jobs);
}

/* The passes in order, each on what the ones before guarantee. */
static int extract_units(const struct extract_opts *o, struct run *r)
{
	diag_phase(&r->d, "open");
	int err = open_pass(o, r);
	stats_phase(&r->st, "open");
	if (!err) {
		diag_phase(&r->d, "extract");
		err = extract_pass(o, r);
		stats_phase(&r->st, "extract");
	}
	if (!err) {
		diag_phase(&r->d, "write");
		err = write_pass(r);
		stats_phase(&r->st, "write");
	}
	if (!err && r->cache) {
		cachedir__finish(r->cache);
		stats_phase(&r->st, "cache");
	}
	if (!err)
		count_stats(r);
	return err;
}

/* --cache DIR --cache-stats alone: the directory's totals. */
static int run_cache_stats(const struct extract_opts *o)
{
	struct diag d = { 0 };
	struct cachedir *c;
	struct cachedir_opts co = o->cache.opts;
	co.readonly = 1;
	int err = cachedir__open(&c, &co, "cu-v1", &d);
	if (err)
		return diag_report(&d, o->cache.dir, err);
	cachedir__print_stats(c, stdout, 0, "extracted CUs");
	cachedir__close(c);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	memtune__reexec(argv); /* first: nothing is printed twice */
	struct extract_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	if (o.dump)
		return run_dump(o.dump, o.dump_json);
	if (!o.input)
		return run_cache_stats(&o);

	struct run r = { 0 };
	stats_init(&r.st, TOOL);
	stats_count(&r.st, "memtune", (uint64_t)memtune__active());
	fatal__init(&o.input, &r.d);
	int err = extract(&o, &r);
	cli_warn_threads(o.input, o.cli.jobs);
	rc = err ? diag_report(&r.d, o.input, err) : EXIT_OK;
	if (!err && o.cli.stats)
		stats_print(&r.st, stderr, o.cli.stats == 2);
	cachedir_cli_report(r.cache, &o.cache, TOOL, !err, "extracted CUs");
	cachedir_cli_report(r.whole, &o.cache, TOOL, !err, "stage outputs");

	cus_writer__abort(&r.writer);
	if (!cli_free_at_exit())
		return rc;
	if (r.walkers)
		for (unsigned i = 0; i < r.jobs; i++)
			cu_walk__free(&r.walkers[i]);
	if (r.cws)
		for (unsigned i = 0; i < r.jobs; i++)
			cached_worker__free(&r.cws[i]);
	free(r.cws);
	cachedir__close(r.cache);
	cachedir__close(r.whole);
	if (r.slots)
		for (size_t i = 0; i < r.in.nunits; i++) {
			free(r.slots[i].blob);
			free(r.slots[i].addrs);
		}
	if (r.hbufs)
		for (unsigned i = 0; i < r.jobs; i++)
			free(r.hbufs[i]);
	free(r.hbufs);
	free(r.walkers);
	free(r.slots);
	dwarf_hash__free(&r.dh);
	input__close(&r.in);
	return rc;
}
