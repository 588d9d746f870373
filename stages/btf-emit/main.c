/* btf-emit: encode a type graph as BTF.
 *
 *   btf-emit [--elf ELF] [--btf-base BASE] [--skip-report FILE] -o OUT.btf IN.graph
 *
 * main() is the stage: options, parsed and checked in one place; the
 * --elf file checked against the graph (elf_match.c); the answer from the
 * cache when it has one; else emit__run(), whose passes run.h lists with
 * what each guarantees. Messages and exit codes are made here only.
 */
#include "emit.h"
#include "base_index.h"
#include "btf_raw.h"
#include "elf_match.h"
#include "output.h"
#include "run.h"
#include "../../common/btf_file.h"
#include "../../common/cachedir.h"
#include "../../common/cli.h"
#include "../../common/diag.h"
#include "../../common/fatal.h"
#include "../../common/memo.h"
#include "../../common/memtune.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "btf-emit"

static void usage(FILE *o)
{
	fprintf(o,
		"usage: " TOOL " [options] -o OUT.btf IN.graph\n"
		"       " TOOL " [options] --elf ELF --elf-out OUT.elf IN.graph\n"
		"\n"
		"Encodes a type graph (a .graph, from dedup-merge) as BTF.\n"
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
		"                         decides which functions and variables exist. A graph\n"
		"                         of one input must have been made from ELF, else it\n"
		"                         is refused (exit 1): by GNU build id, or where either\n"
		"                         lacks one, by machine and .debug_info unit offsets\n"
		"                         (not checked when ELF's DWARF is absent or compressed)\n"
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
		case 'L': features__print_supported(stdout); exit(EXIT_OK);
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
	if (features__parse(features, strict, &o->features, &d))
		return diag_report(&d, TOOL, -EINVAL) ? EXIT_USAGE : EXIT_USAGE;
	if (no_floats)
		o->features &= ~(1u << FEAT_FLOAT);
	o->input = argv[optind];
	return EXIT_OK;
}

/* libbpf's own messages would interleave with ours; errors come back as codes. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

static int memo_key_of(const struct emit_opts *o, const struct key128 *base_digest, struct key128 *out)
{
	struct memo_key k;
	memo_key_begin(&k, "btf-emit: raw BTF");
	k.jobs = o->cli.jobs;
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

int main(int argc, char **argv)
{
	memtune__reexec(argv); /* first: nothing is printed twice */
	struct emit_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	libbpf_set_print(quiet);
	struct diag d = { 0 };
	const char *where = o.input; /* the default file of messages: d's file names another */
	struct emit_memo memo = { 0 };
	struct emit_base_cache bc = { 0 };
	int err = 0, hit = 0;
	fatal__init(&where, &d);
	/* Before the cache: a refused pair is refused whatever it holds. */
	diag_phase(&d, "check");
	if (o.elf && (err = elf_match__check(o.input, o.elf, &d)))
		return diag_report(&d, o.elf, err);
	diag_phase(&d, "cache");
	/* A base that cannot be read has no key: then neither cache is used,
	 * and emit says why. */
	int base_keyed = !o.base || (o.cache.dir && !btf_file__digest(o.base, &bc.digest));
	/* Not with side outputs (--skip-report, --explain): the memo holds the BTF only. */
	if (!o.skip_report && !o.explain && base_keyed && (memo.cache = cachedir_cli_open(&o.cache, "out-v1", TOOL))) {
		uint8_t *raw;
		size_t size;
		if (memo_key_of(&o, &bc.digest, &memo.key)) {
			cachedir__close(memo.cache); /* an input it cannot hash: emit says why */
			memo.cache = NULL;
		} else if ((hit = memo_fetch(memo.cache, memo.key, &raw, &size))) {
			/* The BTF, then a distilled base if there was one (run.c). */
			size_t first = btf_raw__size(raw, size);
			if (size > UINT32_MAX || !first)
				err = size > UINT32_MAX ? -EFBIG : DIAG_BUG(&d, "a memoized BTF that checked out has no header");
			else
				err = output__write(&o, raw, (uint32_t)first, first < size ? raw + first : NULL,
						    (uint32_t)(size - first), &d);
			free(raw);
		}
	}
	/* The base's index is its own kind (base_index.c). Not opened when
	 * the stage outputs' kind could not be: its warning is enough. */
	if (!err && !hit && o.base && base_keyed && !o.libbpf_dedup && (memo.cache || o.skip_report || o.explain))
		bc.cache = cachedir_cli_open(&o.cache, "base-v1", TOOL);
	if (!err && !hit)
		err = emit__run(&o, memo.cache ? &memo : NULL, &bc, &d);
	if (memo.cache && !err)
		cachedir__finish(memo.cache);
	if (bc.cache && !err)
		cachedir__finish(bc.cache);
	cachedir_cli_report(memo.cache, &o.cache, TOOL, !err, "stage outputs");
	cachedir_cli_report(bc.cache, &o.cache, TOOL, !err, "base indexes");
	cachedir__close(memo.cache);
	cachedir__close(bc.cache);
	cli_warn_threads(d.file ? d.file : where, o.cli.jobs);
	return err ? diag_report(&d, where, err) : EXIT_OK;
}
