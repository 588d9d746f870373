/* btf-emit: encode a type graph as BTF.
 *
 *   btf-emit [--elf ELF] [--no-floats] [--skip-report FILE] -o OUT.btf IN.graph
 *
 * main() is the pipeline: options, read the graph (fully validated), read
 * the ELF's symbols and sections, add types, functions, variables, write the
 * raw BTF atomically. Messages and exit codes are made here only.
 */
#include "emit.h"
#include "../../common/diag.h"
#include "../../common/outfile.h"
#include "../../common/version.h"

#include <bpf/btf.h>
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
		"usage: " TOOL " [--elf ELF] [--no-floats] [--skip-report FILE] -o OUT.btf IN.graph\n"
		"\n"
		"Encodes a type graph (format/TYPE-GRAPH.md) as raw BTF with libbpf.\n"
		"\n"
		"  -o, --output FILE    the raw BTF to write (atomically)\n"
		"      --elf ELF        the binary the graph came from: its symbol table\n"
		"                       decides which functions and per-CPU variables exist\n"
		"      --no-floats      write floating-point types as INT (pahole without\n"
		"                       --btf_gen_floats)\n"
		"      --skip-report F  write one line per function, variable or type left out,\n"
		"                       with the reason\n"
		"  -h, --help           this text\n"
		"      --version        print the version\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input, 2 usage, 3 I/O error, 4 internal error.\n");
}

static int parse_opts(int argc, char **argv, struct emit_opts *o)
{
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "elf", required_argument, NULL, 'E' },
		{ "no-floats", no_argument, NULL, 'F' },
		{ "skip-report", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'E': o->elf = optarg; break;
		case 'F': o->no_floats = 1; break;
		case 'S': o->skip_report = optarg; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': printf(TOOL " (btfpipe) " BTFPIPE_VERSION "\n"); exit(EXIT_OK);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !o->output) {
		diag_error(TOOL, "need exactly one input .graph and -o OUT.btf (see --help)");
		return EXIT_USAGE;
	}
	o->input = argv[optind];
	return EXIT_OK;
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

static int emit(const struct emit_opts *o, struct diag *d, const char **where)
{
	struct graph g;
	struct elf_info ei = { 0 };
	struct type_map map = { 0 };
	struct skip_log skips = { 0 };
	struct btf *btf = NULL;
	uint32_t *picks = NULL;
	size_t npicks = 0;
	char *report = NULL;
	size_t report_len = 0;
	*where = o->input;
	int err = graph__read(&g, o->input, d);
	if (err)
		return err;
	if (o->elf) {
		*where = o->elf;
		if ((err = elf_info__read(&ei, o->elf, d)))
			goto out;
	}
	*where = o->output;
	if (o->skip_report && !(skips.f = open_memstream(&report, &report_len))) {
		err = -ENOMEM;
		goto out;
	}
	btf = btf__new_empty();
	if (!btf) {
		err = -ENOMEM;
		goto out;
	}
	if (g.ninputs && g.inputs[0].ei_data == 2 && btf__set_endianness(btf, BTF_BIG_ENDIAN)) {
		err = -EINVAL;
		goto out;
	}
	if ((err = types_prepare(&g, &map)) ||
	    (err = select_funcs(&g, o->elf ? &ei : NULL, map.dropped, &skips, &picks, &npicks)) ||
	    (err = emit_types(btf, &g, o, picks, npicks, &map, &skips, d)) ||
	    (err = emit_funcs(btf, &g, picks, npicks, &map, d)) ||
	    (err = emit_vars(btf, &g, o->elf ? &ei : NULL, &map, &skips, d)))
		goto out;
	uint32_t size;
	const void *raw = btf__raw_data(btf, &size);
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
	err = outfile__write_all(o->output, raw, size, d);
out:
	if (skips.f)
		fclose(skips.f);
	free(report);
	free(picks);
	btf__free(btf);
	type_map__free(&map);
	elf_info__free(&ei);
	graph__free(&g);
	return err;
}

int main(int argc, char **argv)
{
	struct emit_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	libbpf_set_print(quiet);
	struct diag d = { 0 };
	const char *where = o.input;
	int err = emit(&o, &d, &where);
	return err ? diag_report(&d, where, err) : EXIT_OK;
}
