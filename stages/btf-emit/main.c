/* btf-emit: encode a type graph as BTF.
 *
 *   btf-emit [--elf ELF] [--no-floats] [--skip-report FILE] -o OUT.btf IN.graph
 *
 * main() is the pipeline: options, read the graph (fully validated), read
 * the ELF's symbols and sections, add types, functions, variables, write the
 * raw BTF atomically. Messages and exit codes are made here only.
 */
#include "emit.h"
#include "../../common/buf.h"
#include "../../common/cachedir.h"
#include "../../common/cli.h"
#include "../../common/diag.h"
#include "../../common/mapfile.h"
#include "../../common/memo.h"
#include "../../common/memtune.h"
#include "../../common/outfile.h"
#include "../../common/pool.h"
#include "../../common/version.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOOL "btf-emit"

static void usage(FILE *o)
{
	fprintf(o,
		"usage: " TOOL " [options] -o OUT.btf IN.graph\n"
		"       " TOOL " [options] --elf ELF --elf-out OUT.elf IN.graph\n"
		"\n"
		"Encodes a type graph (format/TYPE-GRAPH.md) as BTF.\n"
		"\n"
		"  -j, --jobs N           threads (default: the number of CPUs); from 2 on, the\n"
		"                         --elf file is read while the graph is, functions are\n"
		"                         sorted and judged on up to N threads, one per 16384\n"
		"                         candidates, and the BTF is written in pieces on up to\n"
		"                         N threads, one per 30000 nodes and functions; the graph\n"
		"                         is decoded on up to N threads (less one reading --elf),\n"
		"                         one per 4 MB. The output does not depend on it\n"
		"  -o, --output FILE      raw BTF to write (atomically)\n"
		"      --elf ELF          the binary the graph came from: its symbol table\n"
		"                         decides which functions and variables exist\n"
		"      --elf-out FILE     write a copy of --elf with the BTF as its .BTF section\n"
		"                         (FILE may be the --elf file itself: replaced atomically)\n"
		"      --btf-base BASE    split BTF over BASE (raw BTF, or an ELF with .BTF):\n"
		"                         only what BASE lacks is added, ids continue BASE's\n"
		"      --features LIST    pahole's --btf_features: \"default\", \"+feat,...\" or\n"
		"                         \"feat,...\" (default: default)\n"
		"      --features-strict  an unknown feature name is an error\n"
		"      --supported-features  print the features this build can encode and exit\n"
		"      --no-floats        write floating-point types as INT (feature float off)\n"
		"      --libbpf-dedup     over a base, let libbpf's btf__dedup() find the types\n"
		"                         the base has (slower; the reference for our own)\n"
		"      --arrays MODE      multi-dimensional arrays: nested (ARRAY of ARRAY),\n"
		"                         flat (one ARRAY, as pahole), or auto (default):\n"
		"                         nested, but over a base, whatever the base does\n"
		"      --skip-report F    one line per function, variable or type left out, why\n"
		"      --stats[=json]     counts (types per BTF kind, skips) and phase times on stderr\n"
		"  -q, --quiet            accepted, as by the other stages\n"
		"  -v, --verbose          the --stats text too\n"
		"      --explain NAME     print why function or variable NAME is or is not\n"
		"                         encoded (its DWARF descriptions, symbols, the rule)\n"
		"  -h, --help             this text\n"
		"      --version          print the version\n"
		"\n"
		"With a cache, the BTF is reused when the graph, the ELF, the base and the\n"
		"options are those of a cached run (not with --skip-report or --explain):\n"
		CACHEDIR_HELP
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error.\n");
}

static int parse_opts(int argc, char **argv, struct emit_opts *o)
{
	static const struct option longs[] = {
		{ "elf", required_argument, NULL, 'E' },
		{ "elf-out", required_argument, NULL, 'W' },
		{ "btf-base", required_argument, NULL, 'B' },
		{ "features", required_argument, NULL, 'f' },
		{ "features-strict", no_argument, NULL, 's' },
		{ "supported-features", no_argument, NULL, 'L' },
		{ "no-floats", no_argument, NULL, 'F' },
		{ "arrays", required_argument, NULL, 'A' },
		{ "libbpf-dedup", no_argument, NULL, 'D' },
		{ "skip-report", required_argument, NULL, 'S' },
		{ "explain", required_argument, NULL, 'X' },
		CLI_LONG_OPTIONS,
		CACHEDIR_LONG_OPTIONS,
		{ 0 },
	};
	const char *features = "default";
	int c, strict = 0, no_floats = 0;
	cli_common_init(&o->cli);
	while ((c = getopt_long(argc, argv, CLI_SHORT_OPTIONS, longs, NULL)) != -1) {
		int took = cli_common_opt(&o->cli, TOOL, c, optarg, usage);
		if (took < 0)
			return EXIT_USAGE;
		if (took || cachedir_cli_opt(&o->cache, c, optarg))
			continue;
		switch (c) {
		case 'E': o->elf = optarg; break;
		case 'W': o->elf_out = optarg; break;
		case 'B': o->base = optarg; break;
		case 'f': features = optarg; break;
		case 's': strict = 1; break;
		case 'L': features_print_supported(stdout); exit(EXIT_OK);
		case 'F': no_floats = 1; break;
		case 'D': o->libbpf_dedup = 1; break;
		case 'A':
			if (!strcmp(optarg, "nested")) o->arrays = ARRAYS_NESTED;
			else if (!strcmp(optarg, "flat")) o->arrays = ARRAYS_FLAT;
			else if (!strcmp(optarg, "auto")) o->arrays = ARRAYS_AUTO;
			else {
				diag_error(TOOL, "--arrays %s: expected nested, flat or auto", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S': o->skip_report = optarg; break;
		case 'X': o->explain = optarg; break;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || (!o->cli.output && !o->elf_out && !o->explain)) {
		diag_error(TOOL, "need exactly one input .graph and -o OUT.btf or --elf-out (see --help)");
		return EXIT_USAGE;
	}
	if (o->elf_out && !o->elf) {
		diag_error(TOOL, "--elf-out needs --elf (the file to copy)");
		return EXIT_USAGE;
	}
	if (cachedir_cli_finish(&o->cache, TOOL))
		return EXIT_USAGE;
	struct diag d = { 0 };
	if (features_parse(features, strict, &o->features, &d))
		return diag_report(&d, TOOL, -EINVAL) ? EXIT_USAGE : EXIT_USAGE;
	if (no_floats)
		o->features &= ~(1u << FEAT_FLOAT);
	o->input = argv[optind];
	return EXIT_OK;
}

/* Does written node i refer to a left-out one (which made a pointer to it
 * void *, so that two such pointers are now alike)? A left-out node that
 * nothing refers to (a DW_TAG_dwarf_procedure) changes nothing. */
static int refers_to_dropped(const struct graph *g, const struct type_map *map, size_t i)
{
	const struct graph_node *n = &g->nodes[i];
	if (map->dropped[i])
		return 0;
	if (n->type && map->dropped[n->type] == 1)
		return 1;
	for (uint32_t k = 0; k < n->item_count; k++) {
		uint32_t t = g->items[n->item_first + k].type;
		if (t && map->dropped[t] == 1)
			return 1;
	}
	return 0;
}

static enum btf_endianness host_endianness(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one ? BTF_LITTLE_ENDIAN : BTF_BIG_ENDIAN;
}

/* The base BTF as libbpf's object, for what libbpf does over it (split BTF
 * it deduplicates, --libbpf-dedup, the other byte order) and for what
 * base_view.c cannot read. A raw BTF file is mapped and given to btf__new(), which
 * copies it once; btf__parse() would read it into a buffer and copy that
 * (for a vmlinux base, 8 MB of fresh pages per module, a tenth of a small
 * module's encoding). Anything else (an ELF with .BTF, a file that is too
 * short or cannot be mapped) goes to btf__parse(), whose errors stand.
 * Returns NULL with errno set, as libbpf does. */
static struct btf *read_base(const char *path)
{
	const void *m;
	size_t size;
	if (mapfile_open(path, 4, "base BTF", &m, &size, NULL))
		return btf__parse(path, NULL);
	const uint8_t *b = m;
	/* BTF_MAGIC 0xeB9F in either byte order, as btf__parse_raw() accepts. */
	int raw = size <= UINT32_MAX && ((b[0] == 0x9f && b[1] == 0xeb) || (b[0] == 0xeb && b[1] == 0x9f));
	struct btf *btf = raw ? btf__new(m, (uint32_t)size) : NULL;
	int err = errno;
	munmap((void *)m, size);
	if (!raw)
		return btf__parse(path, NULL);
	errno = err;
	return btf;
}

/* Why read_base() failed, in words: libbpf answers "no .BTF in this ELF"
 * with ENOENT (strerror: "No such file or directory", of a file that is
 * there) and "neither raw BTF nor ELF" with its own code 4001, which
 * strerror() does not know. */
static const char *base_error(const char *path, int e, char *buf, size_t size)
{
	struct stat st;
	if (e == ENOENT && stat(path, &st) == 0)
		return "an ELF file without a .BTF section";
	if (e == LIBBPF_ERRNO__FORMAT)
		return "neither raw BTF (magic 0xeB9F) nor an ELF file";
	if (e >= __LIBBPF_ERRNO__START && !libbpf_strerror(e, buf, size))
		return buf;
	return strerror(e);
}

/* libbpf's parse of the base into *base, or the error, naming it. */
static int need_libbpf_base(const struct emit_opts *o, struct btf **base, struct diag *d, const char **where)
{
	*where = o->base;
	if (!(*base = read_base(o->base))) {
		char why[128];
		return diag_fail(d, EINVAL, "%s: cannot read base BTF (raw BTF or an ELF with .BTF): %s",
				 o->base, base_error(o->base, errno, why, sizeof(why)));
	}
	*where = o->cli.output ? o->cli.output : o->elf_out;
	return 0;
}

static const struct btf_type *btf_type_of(const void *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

/* types_flatten() of libbpf's object. */
static int base_flattens_btf(const struct btf *base)
{
	return types_flatten(NULL, btf__type_cnt(base), btf_type_of, base);
}

void skip_log__add(struct skip_log *s, const char *what, const char *name, const char *why,
		   const struct graph *g, uint32_t cu)
{
	s->count++;
	if (!s->f)
		return;
	fprintf(s->f, "%s %s: %s (CU %s)\n", what, name, why,
		cu < g->ncus ? graph_str(g, g->cus[cu].name) : "?");
}

/* libbpf's own messages would interleave with ours; errors come back as codes. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

/* libbpf's btf__dedup() until nothing changes (a fwd the base defines is
 * resolved only after the structs are compared: two passes in practice, at
 * most four). It recurses once per type along a chain of references
 * (typedef to pointer to typedef...): 100,000 levels overflowed the main
 * thread's 8 MiB stack, in libbpf, at about 80 bytes a type. So it runs on
 * a thread of its own whose stack has room for a chain through every type.
 * Returns 0 or libbpf's -errno; *started is 0 when the thread could not be
 * started (then nothing was done). */
struct dedup_job {
	struct btf *btf;
	int err;
};

static void *dedup_thread(void *arg)
{
	struct dedup_job *j = arg;
	for (int pass = 0; pass < 4; pass++) {
		uint32_t before = btf__type_cnt(j->btf);
		if ((j->err = btf__dedup(j->btf, NULL)) || btf__type_cnt(j->btf) == before)
			break;
	}
	return NULL;
}

static int libbpf_dedup(struct btf *btf, int *started)
{
	struct dedup_job j = { .btf = btf };
	uint64_t want = (uint64_t)btf__type_cnt(btf) * 256 + (8u << 20);
	size_t stack = want < SIZE_MAX / 2 ? ((size_t)want + 4095) & ~(size_t)4095 : SIZE_MAX / 2;
	pthread_attr_t attr;
	pthread_t t;
	*started = 0;
	if (pthread_attr_init(&attr))
		return 0;
	int e = pthread_attr_setstacksize(&attr, stack);
	if (!e)
		e = pthread_create(&t, &attr, dedup_thread, &j);
	pthread_attr_destroy(&attr);
	if (e)
		return 0;
	*started = 1;
	pthread_join(t, NULL);
	return j.err;
}

/* The types of the BTF written (without its base's) per kind, into n[]
 * (n[0]: unknown kinds): of libbpf's object btf, or else of raw, split BTF
 * in the host's byte order that split_check() passed. Returns the total. */
static uint64_t kinds_of(const struct btf *btf, const void *raw, uint64_t n[20])
{
	uint64_t total = 0;
	memset(n, 0, 20 * sizeof(*n));
	if (btf) {
		uint32_t first = 1, end = btf__type_cnt(btf);
		const struct btf *base = btf__base_btf(btf);
		if (base)
			first = btf__type_cnt(base);
		for (uint32_t id = first; id < end; id++, total++) {
			unsigned k = btf_kind(btf__type_by_id(btf, id));
			n[k < 20 ? k : 0]++;
		}
	} else {
		const struct btf_header *h = raw;
		const uint8_t *types = (const uint8_t *)raw + h->hdr_len + h->type_off;
		for (uint32_t at = 0; at < h->type_len; total++) {
			const struct btf_type *t = (const void *)(types + at);
			n[btf_kind(t)]++;
			at += (uint32_t)btf_type_bytes(t);
		}
	}
	return total;
}

static void count_kinds(struct stats *st, uint64_t total, const uint64_t n[20])
{
	static const char *const names[] = {
		"UNKN", "INT", "PTR", "ARRAY", "STRUCT", "UNION", "ENUM", "FWD", "TYPEDEF", "VOLATILE",
		"CONST", "RESTRICT", "FUNC", "FUNC_PROTO", "VAR", "DATASEC", "FLOAT", "DECL_TAG",
		"TYPE_TAG", "ENUM64",
	};
	stats_count(st, "btf_types", total);
	for (int k = 1; k < 20; k++)
		if (n[k])
			stats_count(st, names[k], n[k]);
}

/* $BTFPIPE_EMIT_LOG names a file that gets a line "OUTPUT<TAB>BASE" (both
 * absolute, BASE empty without --btf-base) for each BTF written: a test
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

/* The BTF to where the options say: -o, --elf-out, or both. */
static int write_outputs(const struct emit_opts *o, const void *raw, uint32_t size, struct diag *d,
			 const char **where)
{
	int err = 0;
	if (o->cli.output && (err = outfile__write_all(o->cli.output, raw, size, d)))
		return err;
	if (o->cli.output)
		log_output(o->cli.output, o->base);
	if (o->elf_out) {
		*where = o->elf_out;
		if (!(err = elf_write_btf(o->elf, o->elf_out, raw, size, d)))
			log_output(o->elf_out, o->base);
	}
	return err;
}

/* memo: the key of this run (its graph, ELF and base bytes, and the options
 * that change the BTF), and where a miss stores its BTF. */
struct emit_memo {
	struct cachedir *cache;
	struct key128 key;
};

/* With a cache and a base: the base's digest, and the cache's base indexes. */
struct emit_base_cache {
	struct key128 digest;
	struct cachedir *cache;	/* kind base-v1, or NULL */
};

static int memo_key_of(const struct emit_opts *o, const struct key128 *base_digest, struct key128 *out)
{
	struct memo_key k;
	memo_key_begin(&k, "btf-emit: raw BTF");
	memo_key_u64(&k, o->features);
	memo_key_u64(&k, (uint64_t)o->arrays);
	memo_key_u64(&k, (uint64_t)o->libbpf_dedup);
	memo_key_file(&k, o->input);
	memo_key_str(&k, o->elf ? "elf" : NULL);
	if (o->elf)
		memo_key_file(&k, o->elf);
	memo_key_str(&k, o->base ? "base" : NULL);
	if (o->base) {
		memo_key_u64(&k, base_digest->lo);
		memo_key_u64(&k, base_digest->hi);
	}
	return memo_key_end(&k, out);
}

/* Threads to decode the graph on: one per 4 MB of it (a module's graph is
 * a few hundred KB, the cloud vmlinux's 12.6 MB), less the one that reads
 * the --elf file meanwhile. (At -j2 with --elf the two reads already keep
 * both busy; a third thread made the vmlinux's emit 11% slower.) */
static unsigned graph_read_threads(const struct emit_opts *o)
{
	unsigned jobs = o->cli.jobs > 1 && o->elf ? o->cli.jobs - 1 : o->cli.jobs;
	struct stat st;
	if (o->cli.jobs_exact || stat(o->input, &st))
		return o->cli.jobs_exact ? jobs : 1;
	return pool_threads_for(jobs, (unsigned long long)st.st_size, 4u << 20);
}

/* The ELF's symbols and sections, read on a thread of their own. */
struct elf_read {
	const char *path;
	struct elf_info ei;
	struct diag d;
	int err;
};

static void *elf_read_main(void *arg)
{
	struct elf_read *r = arg;
	r->err = elf_info__read(&r->ei, r->path, &r->d);
	return NULL;
}

/* The graph, and the --elf file's symbols when there is one. The two are
 * independent and on a vmlinux take about 0.05 s each, so from -j2 on the
 * ELF is read on a second thread meanwhile. The results and the error
 * reported (the graph's first, as one after the other) are the same at
 * any -j. On failure *ei may hold a partial read: elf_info__free() it. */
static int read_inputs(const struct emit_opts *o, struct graph *g, struct elf_info *ei, struct diag *d,
		       const char **where)
{
	struct elf_read er = { .path = o->elf };
	pthread_t tid;
	int threaded = o->elf && o->cli.jobs > 1 && pthread_create(&tid, NULL, elf_read_main, &er) == 0;
	*where = o->input;
	int err = graph__read_flags(g, o->input, GRAPH_READ_FIRST_PROV, graph_read_threads(o), d);
	if (threaded)
		pthread_join(tid, NULL);
	else if (!err && o->elf)
		er.err = elf_info__read(&er.ei, o->elf, &er.d);
	*ei = er.ei;
	if (err)
		return err;
	if (er.err) {
		*where = o->elf;
		*d = er.d;
		graph__free(g);
		return er.err;
	}
	return 0;
}

static int emit(const struct emit_opts *o, const struct emit_memo *memo, const struct emit_base_cache *bc,
		struct diag *d, const char **where)
{
	struct stats st;
	stats_init(&st, TOOL);
	stats_count(&st, "memtune", (uint64_t)memtune__active());
	struct graph g;
	struct elf_info ei = { 0 };
	struct type_map map = { 0 };
	struct skip_log skips = { 0 };
	struct btf *btf = NULL, *base = NULL;	/* base: libbpf's, when it is needed */
	struct base_view view = { 0 };		/* the base read in place, when it can be */
	struct base_index bi = { 0 };
	const struct base_index *bip = NULL;
	struct buf split = { 0 };
	struct buf ours = { 0 };	/* our BTF, standalone, from encode_btf() */
	uint32_t *picks = NULL;
	size_t npicks = 0;
	char *report = NULL;
	size_t report_len = 0;
	int err = read_inputs(o, &g, &ei, d, where);
	if (err) {
		elf_info__free(&ei);
		return err;
	}
	stats_phase(&st, "read");
	*where = o->cli.output ? o->cli.output : o->elf_out;
	if (o->skip_report && !(skips.f = open_memstream(&report, &report_len))) {
		err = -ENOMEM;
		goto out;
	}
	int big = g.ninputs && g.inputs[0].ei_data == 2; /* BTF for a big-endian target */
	int have_view = 0;
	if (o->base) {
		/* Our own matching reads the base in place (base_view.c: a base
		 * in our byte order); libbpf parses it only for its own dedup,
		 * or when the view cannot read it (and says what is wrong). */
		have_view = !o->libbpf_dedup && !base_view_open(&view, o->base);
		if (!have_view && (err = need_libbpf_base(o, &base, d, where)))
			goto out;
		/* Without it (no cache), base_dedup() makes what this module
		 * needs of the base for itself. */
		if (have_view && bc->cache && !base_index_get(&bi, &view, bc->digest, bc->cache))
			bip = &bi;
	}
	/* A module's types only match the base's when written as the base's
	 * were: flat when its encoder flattened multi-dimensional arrays. */
	map.flat_arrays = o->arrays == ARRAYS_FLAT ||
			  (o->arrays == ARRAYS_AUTO && o->base &&
			   (bip ? bip->flattens : have_view ? view.flattens : base_flattens_btf(base)));
	const struct elf_info *eip = o->elf ? &ei : NULL;
	if (o->explain) {
		err = types_prepare(&g, &map);
		if (!err)
			err = explain(stdout, &g, eip, o, map.dropped, o->explain);
		goto out;
	}
	if ((err = types_prepare(&g, &map)) ||
	    (err = select_funcs(&g, eip, map.dropped, o, &skips, &picks, &npicks)))
		goto out;
	stats_phase(&st, "select");
	/* Split BTF: what the base already has is replaced by the base's own
	 * types. base_dedup() finds them (the graph has no duplicates of its
	 * own), from our types written standalone. When types were left out
	 * (C++), a pointer to a left-out type became void *, and such pointers
	 * are now alike: then, and with --libbpf-dedup, the types go straight
	 * into split BTF and libbpf's btf__dedup() runs (libbpf_dedup()). */
	int lossy = 0;
	for (size_t i = 1; i <= g.nnodes && !lossy; i++)
		lossy = refers_to_dropped(&g, &map, i);
	int own_dedup = have_view && !lossy;
	if (o->base && !own_dedup && !base && (err = need_libbpf_base(o, &base, d, where)))
		goto out;
	struct encode_in ein = { &g, eip, o, picks, npicks, &map, &skips };
	uint32_t nr_types = 0;
	unsigned encode_threads = 1;
	if ((err = types_plan(&g, o, picks, npicks, &map, &skips, d)))
		goto out;
	stats_phase(&st, "plan");
	if ((err = encode_btf(&ein, &encode_threads, &ours, &nr_types, d)))
		goto out;
	if (o->cli.stats)
		stats_count(&st, "encode_threads", encode_threads);
	/* libbpf's object, for what is done with libbpf after: matching
	 * against the base, its dedup, the other byte order. Split, its types
	 * are ours appended to an empty split BTF, with the ids and the
	 * strings libbpf would have given them added one by one. */
	if (own_dedup || base || lossy || big) {
		struct btf *standalone = btf__new(ours.data, (uint32_t)ours.len);
		if (!standalone) {
			int e = errno ? errno : EINVAL;
			err = DIAG_BUG(d, "libbpf cannot read the BTF just written: %s", strerror(e));
			goto out;
		}
		if (base && !own_dedup) {
			/* (libbpf 1.1's btf__add_btf() of no types fails: -ENOMEM.) */
			btf = btf__new_empty_split(base);
			int r = !btf ? -ENOMEM : nr_types ? btf__add_btf(btf, standalone) : 0;
			btf__free(standalone);
			if (r < 0) {
				err = diag_fail(d, -r, "cannot make split BTF over base %s: %s", o->base, strerror(-r));
				goto out;
			}
		} else {
			btf = standalone;
		}
	}
	stats_phase(&st, "encode");
	if (own_dedup) {
		uint32_t removed;
		if ((err = base_dedup(btf, &view, bip, &removed, &split, d)))
			goto out;
		if (o->cli.stats)
			stats_count(&st, "matched_in_base", removed);
	}
	/* Every split BTF that base_dedup() did not make is libbpf's to
	 * deduplicate: with --libbpf-dedup, and over a base the view cannot
	 * read (another byte order), which would otherwise repeat the base. */
	if (lossy || (base && !own_dedup)) {
		int started;
		err = libbpf_dedup(btf, &started);
		if (!started) {
			err = diag_fail(d, EAGAIN, "cannot start a thread for libbpf's dedup");
			goto out;
		}
		if (err) {
			err = diag_fail(d, -err, "deduplicating%s%s failed: %s", o->base ? " against base " : "",
					o->base ? o->base : "", strerror(-err));
			goto out;
		}
	}
	/* Its own phase: on a small module, matching against the base is most
	 * of the emit, and would otherwise count as writing. */
	if (o->base)
		stats_phase(&st, "base");
	if (big && !own_dedup && btf__set_endianness(btf, BTF_BIG_ENDIAN)) {
		err = -EINVAL;
		goto out;
	}
	/* Counted before the bytes may be swapped for a big-endian target. */
	uint64_t kinds[20], nkinds = 0;
	if (o->cli.stats)
		nkinds = kinds_of(own_dedup ? NULL : btf, own_dedup ? split.data : ours.data, kinds);
	if (big && own_dedup && host_endianness() != BTF_BIG_ENDIAN)
		split_bswap(split.data);
	uint32_t size = (uint32_t)(own_dedup ? split.len : ours.len);
	const void *raw = own_dedup ? split.data : btf ? btf__raw_data(btf, &size) : ours.data;
	if (!raw) {
		err = -ENOMEM;
		goto out;
	}
	if (skips.f) {
		fclose(skips.f);
		skips.f = NULL;
		if ((err = outfile__write_all(o->skip_report, report, report_len, d)))
			goto out;
	}
	if ((err = write_outputs(o, raw, size, d, where)))
		goto out;
	if (memo)
		cachedir__put(memo->cache, memo->key, raw, size, NULL, 0);
	stats_phase(&st, "write");
	if (!err && o->cli.stats) {
		stats_count(&st, "graph_nodes", g.nnodes);
		count_kinds(&st, nkinds, kinds);
		stats_count(&st, "left_out", skips.count);
		stats_print(&st, stderr, o->cli.stats == 2);
	}
out:
	if (skips.f)
		fclose(skips.f);
	free(report);
	free(picks);
	btf__free(btf);
	btf__free(base);
	base_index_free(&bi);
	base_view_close(&view);
	buf_free(&split);
	buf_free(&ours);
	type_map__free(&map);
	elf_info__free(&ei);
	graph__free(&g);
	return err;
}

int main(int argc, char **argv)
{
	memtune__reexec(argv); /* first: nothing is printed twice */
	struct emit_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	libbpf_set_print(quiet);
	struct diag d = { 0 };
	const char *where = o.input;
	struct emit_memo memo = { 0 };
	struct emit_base_cache bc = { 0 };
	int err = 0, hit = 0;
	/* A base that cannot be read has no key: then neither cache is used,
	 * and emit says why. */
	int base_keyed = !o.base || (o.cache.dir && !base_digest(o.base, &bc.digest));
	/* Not with side outputs (--skip-report, --explain): the memo holds the BTF only. */
	if (!o.skip_report && !o.explain && base_keyed && (memo.cache = cachedir_cli_open(&o.cache, "out-v1", TOOL))) {
		uint8_t *raw;
		size_t size;
		if (memo_key_of(&o, &bc.digest, &memo.key)) {
			cachedir__close(memo.cache); /* an input it cannot hash: emit says why */
			memo.cache = NULL;
		} else if ((hit = memo_fetch(memo.cache, memo.key, &raw, &size))) {
			err = size > UINT32_MAX ? -EFBIG : write_outputs(&o, raw, (uint32_t)size, &d, &where);
			free(raw);
		}
	}
	/* The base's index is its own kind (base_index.c). Not opened when
	 * the stage outputs' kind could not be: its warning is enough. */
	if (!err && !hit && o.base && base_keyed && !o.libbpf_dedup && (memo.cache || o.skip_report || o.explain))
		bc.cache = cachedir_cli_open(&o.cache, "base-v1", TOOL);
	if (!err && !hit)
		err = emit(&o, memo.cache ? &memo : NULL, &bc, &d, &where);
	if (memo.cache && !err)
		cachedir__finish(memo.cache);
	if (bc.cache && !err)
		cachedir__finish(bc.cache);
	cachedir_cli_report(memo.cache, &o.cache, TOOL, !err, "stage outputs");
	cachedir_cli_report(bc.cache, &o.cache, TOOL, !err, "base indexes");
	cachedir__close(memo.cache);
	cachedir__close(bc.cache);
	return err ? diag_report(&d, where, err) : EXIT_OK;
}
