/* run.c: btf-emit's driver and its passes (run.h says what each one
 * guarantees). Every pass takes the run's state and nothing else; the
 * driver, emit__run(), is the list of passes in their order.
 */
#include "run.h"
#include "base_dedup.h"
#include "base_index.h"
#include "base_view.h"
#include "btf_raw.h"
#include "elf_info.h"
#include "emit.h"
#include "distill.h"
#include "encode.h"
#include "explain.h"
#include "extras.h"
#include "funcs.h"
#include "layout.h"
#include "libbpf_base.h"
#include "output.h"
#include "skip_log.h"
#include "split_write.h"
#include "types.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/memtune.h"
#include "../../common/pool.h"
#include "../../common/stats.h"
#include "../../format/graph.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOOL "btf-emit"

/* How the BTF's bytes are made: decided once, by the plan pass.
 *  MAKE_STANDALONE     no base, no type left out: our BTF as encoded
 *                      (through libbpf only to swap it for a big-endian
 *                      target);
 *  MAKE_STANDALONE_DEDUP  no base, but types left out that others refer
 *                      to: their pointers became void * and alike, so
 *                      libbpf's dedup runs on our BTF;
 *  MAKE_SPLIT_OURS     a base we read in place and no type left out: our
 *                      matching (base_dedup.c) makes the split BTF;
 *  MAKE_SPLIT_LIBBPF   any other base (--libbpf-dedup, another byte order,
 *                      types left out): libbpf's dedup over it. */
enum make_how { MAKE_STANDALONE, MAKE_STANDALONE_DEDUP, MAKE_SPLIT_OURS, MAKE_SPLIT_LIBBPF };

/* The state of one run. What a pass fills is said beside it; everything
 * here is freed by run_free(). */
struct emit_run {
	const struct emit_opts *o;
	const struct emit_memo *memo;		/* or NULL */
	const struct emit_base_cache *bc;
	struct diag *d;
	struct stats st;
	/* read */
	struct graph g;
	struct elf_info ei;
	const struct elf_info *eip;		/* &ei with --elf, else NULL */
	int big;				/* the target is big-endian */
	/* base */
	struct base_view view;			/* the base in place, when have_view */
	int have_view;
	struct btf *base;			/* libbpf's base, when needed */
	struct base_index bi;
	const struct base_index *bip;		/* &bi when the cache had or took it */
	/* select */
	struct type_map map;
	struct skip_log skips;
	uint32_t *picks;
	size_t npicks;
	uint32_t *pick_arena;			/* per pick, its KF_ARENA_* flags, or NULL */
	/* plan */
	enum make_how how;
	/* encode */
	struct buf ours;			/* our BTF, standalone */
	uint32_t nr_types;
	struct btf *btf;			/* libbpf's object of it, when libbpf needs one */
	/* split */
	struct buf split;			/* split BTF by base_dedup.c */
	struct buf laid;			/* with the kind layout (feature layout) */
	struct buf dbase;			/* the distilled base (feature distilled_base) */
	int distilled;				/* split now holds the split BTF over dbase */
	/* write: the bytes written (into ours, split or btf) */
	const void *raw;
	uint32_t size;
	uint64_t kinds[20], nkinds;
};

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

/* The types of the BTF written (without its base's) per kind, into n[]
 * (n[0]: unknown kinds): of libbpf's object btf, or else of raw, split BTF
 * in the host's byte order that split__check() passed. Returns the total. */
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
			at += (uint32_t)btf_raw__type_size(t);
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

/* Threads to decode the graph on: one per 4 MB of it (a module's graph is
 * a few hundred KB, the cloud vmlinux's 12.6 MB). */
static unsigned graph_read_threads(const struct emit_opts *o)
{
	struct stat st;
	if (o->cli.jobs_exact || stat(o->input, &st))
		return o->cli.jobs_exact ? o->cli.jobs : 1;
	return pool_threads_for(o->cli.jobs, (unsigned long long)st.st_size, 4u << 20);
}

/* The graph, then the --elf file's symbols when there is one, each on the
 * pool. The error reported is the graph's first, as ever. On failure both
 * are freed (*ei zeroed: elf_info__free() on it is a no-op). */
static int read_inputs(const struct emit_opts *o, struct graph *g, struct elf_info *ei, struct diag *d)
{
	diag_file(d, o->input);
	memset(ei, 0, sizeof(*ei));
	int err = graph__read_flags(g, o->input, GRAPH_READ_FIRST_PROV, graph_read_threads(o), d);
	if (err || !o->elf)
		return err;
	diag_file(d, o->elf);
	if ((err = elf_info__read(ei, o->elf, o->cli.jobs, o->cli.jobs_exact, d)))
		graph__free(g);
	return err;
}

static int read_pass(struct emit_run *r)
{
	int err = read_inputs(r->o, &r->g, &r->ei, r->d);
	if (err)
		return err;
	r->eip = r->o->elf ? &r->ei : NULL;
	r->big = r->g.ninputs && r->g.inputs[0].ei_data == 2; /* BTF for a big-endian target */
	diag_file(r->d, r->o->cli.output ? r->o->cli.output : r->o->elf_out);
	return 0;
}

/* libbpf's parse of the base, naming the base if it fails. */
static int need_libbpf_base(struct emit_run *r)
{
	diag_file(r->d, r->o->base);
	int err = libbpf_base__read(r->o->base, &r->base, r->d);
	if (!err)
		diag_file(r->d, r->o->cli.output ? r->o->cli.output : r->o->elf_out);
	return err;
}

static int base_pass(struct emit_run *r)
{
	const struct emit_opts *o = r->o;
	int err;
	if (o->base) {
		/* Our own matching reads the base in place (base_view.c: a base
		 * in our byte order); libbpf parses it only for its own dedup,
		 * or when the view cannot read it (and says what is wrong). */
		r->have_view = !o->libbpf_dedup && !base_view__open(&r->view, o->base);
		if (!r->have_view && (err = need_libbpf_base(r)))
			return err;
		/* Without it (no cache), base_dedup__split() makes what this
		 * module needs of the base for itself. */
		if (r->have_view && r->bc->cache && !base_index__get(&r->bi, &r->view, r->bc->digest, r->bc->cache))
			r->bip = &r->bi;
	}
	/* A module's types only match the base's when written as the base's
	 * were: flat when its encoder flattened multi-dimensional arrays. */
	r->map.flat_arrays = o->arrays == ARRAYS_FLAT ||
			     (o->arrays == ARRAYS_AUTO && o->base &&
			      (r->bip ? r->bip->flattens : r->have_view ? r->view.flattens
									: libbpf_base__flattens(r->base)));
	return 0;
}

static int explain_pass(struct emit_run *r)
{
	int err = types__prepare(&r->g, &r->map);
	return err ? err : explain__name(stdout, &r->g, r->eip, r->o, r->map.dropped, r->o->explain);
}

static int select_pass(struct emit_run *r)
{
	int err;
	if (r->o->skip_report && (err = skip_log__open(&r->skips)))
		return err;
	if ((err = types__prepare(&r->g, &r->map)))
		return err;
	return funcs__select(&r->g, r->eip, r->map.dropped, r->o, &r->skips, &r->picks, &r->npicks);
}

/* The arena kfuncs among the picks (feature attributes, which pahole
 * applies only with decl_tag_kfuncs too): pick_arena[i], their KF_ARENA_*
 * flags. A true signature gets none: pahole's true-signature path adds no
 * kfunc tags. */
static int arena_kfuncs(struct emit_run *r)
{
	if (!HAS_FEAT(r->o, FEAT_ATTRIBUTES) || !HAS_FEAT(r->o, FEAT_DECL_TAG_KFUNCS) || !r->eip || !r->eip->nkfuncs)
		return 0;
	for (size_t i = 0; i < r->npicks; i++) {
		uint32_t flags;
		if ((r->picks[i] & PICK_TRUE_SIG) ||
		    !elf_info__kfunc(r->eip, graph_str(&r->g, r->g.funcs[PICK_INDEX(r->picks[i])].name), &flags) ||
		    !(flags & KF_ARENA))
			continue;
		if (!r->pick_arena && !(r->pick_arena = calloc(r->npicks, sizeof(*r->pick_arena))))
			return -ENOMEM;
		r->pick_arena[i] = flags & KF_ARENA;
	}
	return 0;
}

static int plan_pass(struct emit_run *r)
{
	/* Split BTF: what the base already has is replaced by the base's own
	 * types. base_dedup__split() finds them (the graph has no duplicates
	 * of its own), from our types written standalone. When types were
	 * left out (C++), a pointer to a left-out type became void *, and
	 * such pointers are now alike: then, and with --libbpf-dedup, the
	 * types go into split BTF and libbpf's btf__dedup() runs. */
	int err, lossy = 0;
	for (size_t i = 1; i <= r->g.nnodes && !lossy; i++)
		lossy = refers_to_dropped(&r->g, &r->map, i);
	r->how = !r->o->base ? (lossy ? MAKE_STANDALONE_DEDUP : MAKE_STANDALONE)
			     : r->have_view && !lossy ? MAKE_SPLIT_OURS : MAKE_SPLIT_LIBBPF;
	if (r->how == MAKE_SPLIT_LIBBPF && !r->base && (err = need_libbpf_base(r)))
		return err;
	if ((err = arena_kfuncs(r)))
		return err;
	if ((err = types__plan(&r->g, r->o, r->picks, r->pick_arena, r->npicks, &r->map, &r->skips, r->d)))
		return err;
	for (size_t i = 0; i < r->map.narena_miss; i++)
		diag_warn(TOOL, "kfunc %s: %s is flagged arena but is not a pointer: no %s tag",
			  r->map.arena_miss[i].func, r->map.arena_miss[i].slot, ARENA_ATTR);
	return 0;
}

static int encode_pass(struct emit_run *r)
{
	struct encode_in ein = { &r->g, r->eip, r->o, r->picks, r->npicks, &r->map, &r->skips };
	unsigned threads = 1;
	int err = encode__btf(&ein, &threads, &r->ours, &r->nr_types, r->d);
	if (err)
		return err;
	if (r->o->cli.stats)
		stats_count(&r->st, "encode_threads", threads);
	if (r->how == MAKE_SPLIT_OURS || (r->how == MAKE_STANDALONE && !r->big))
		return 0;
	/* libbpf's object, for what is still done with libbpf: its dedup, the
	 * other byte order. Split, its types are ours appended to an empty
	 * split BTF, with the ids and the strings libbpf would have given
	 * them added one by one. */
	struct btf *standalone = btf__new(r->ours.data, (uint32_t)r->ours.len);
	if (!standalone) {
		int e = errno ? errno : EINVAL;
		return DIAG_BUG(r->d, "libbpf cannot read the BTF just written: %s", strerror(e));
	}
	if (r->how != MAKE_SPLIT_LIBBPF) {
		r->btf = standalone;
		return 0;
	}
	/* (libbpf 1.1's btf__add_btf() of no types fails: -ENOMEM.) */
	r->btf = btf__new_empty_split(r->base);
	int e = !r->btf ? -ENOMEM : r->nr_types ? btf__add_btf(r->btf, standalone) : 0;
	btf__free(standalone);
	if (e < 0)
		return diag_fail(r->d, -e, "cannot make split BTF over base %s: %s", r->o->base, strerror(-e));
	return 0;
}

/* distilled_base: the split BTF (ours or libbpf's, in the host's byte
 * order) distilled against the base read in place: r->split becomes the
 * split BTF over r->dbase. */
static int distill_pass(struct emit_run *r)
{
	int verr = r->have_view ? 0 : base_view__open(&r->view, r->o->base);
	if (verr == -ENOMEM)
		return verr;
	if (verr)
		return diag_fail(r->d, ENOTSUP, "distilled_base: base %s cannot be read in place "
				 "(another byte order?)", r->o->base);
	r->have_view = 1;
	const void *raw = r->split.data;
	uint32_t size = (uint32_t)r->split.len;
	if (r->how != MAKE_SPLIT_OURS && !(raw = btf__raw_data(r->btf, &size)))
		return -ENOMEM;
	struct buf ds = { 0 };
	int err = distill__split(raw, size, &r->view, &r->dbase, &ds, r->d);
	if (err) {
		buf_free(&ds);
		return err;
	}
	buf_free(&r->split);
	r->split = ds;
	r->distilled = 1;
	return 0;
}

static int split_pass(struct emit_run *r)
{
	int err;
	if (r->how == MAKE_SPLIT_OURS) {
		/* Our BTF is matched where it lies: no parse of it by libbpf. */
		struct base_view ours;
		int oerr = base_view__open_raw(&ours, r->ours.data, r->ours.len);
		if (oerr == -ENOMEM) /* its index of the types: no bug */
			return oerr;
		if ((err = VERIFY(r->d, !oerr, "the BTF just written does not read back")))
			return err;
		uint32_t removed;
		err = base_dedup__split(&ours, &r->view, r->bip, &removed, &r->split, r->d);
		base_view__close(&ours);
		if (err)
			return err;
		if (r->o->cli.stats)
			stats_count(&r->st, "matched_in_base", removed);
	} else if (r->how == MAKE_STANDALONE_DEDUP || r->how == MAKE_SPLIT_LIBBPF) {
		/* Every split BTF that base_dedup__split() did not make is
		 * libbpf's to deduplicate: with --libbpf-dedup, and over a base
		 * the view cannot read (another byte order), which would
		 * otherwise repeat the base. */
		int started;
		err = libbpf_base__dedup(r->btf, &started);
		if (!started)
			return diag_fail(r->d, ENOMEM, "cannot start a thread with a big stack for libbpf's dedup");
		if (err)
			return diag_fail(r->d, -err, "deduplicating%s%s failed: %s", r->o->base ? " against base " : "",
					 r->o->base ? r->o->base : "", strerror(-err));
	}
	/* Without a base there is nothing to distill: pahole fails there, we
	 * write plain BTF. */
	if (r->o->base && HAS_FEAT(r->o, FEAT_DISTILLED_BASE) && (err = distill_pass(r)))
		return err;
	int ours = r->how == MAKE_SPLIT_OURS || r->distilled; /* the bytes are in r->split */
	if (r->big && !ours && btf__set_endianness(r->btf, BTF_BIG_ENDIAN))
		return -EINVAL;
	/* Counted before the bytes may be swapped for a big-endian target. */
	if (r->o->cli.stats)
		r->nkinds = kinds_of(ours ? NULL : r->btf, ours ? r->split.data : r->ours.data, r->kinds);
	if (r->big && ours && host_endianness() != BTF_BIG_ENDIAN) {
		split__bswap(r->split.data);
		if (r->distilled)
			split__bswap(r->dbase.data);
	}
	r->size = (uint32_t)(ours ? r->split.len : r->ours.len);
	r->raw = ours ? r->split.data : r->btf ? btf__raw_data(r->btf, &r->size) : r->ours.data;
	if (!r->raw)
		return -ENOMEM;
	/* The kind layout: base BTF only (layout.c says why). */
	if (HAS_FEAT(r->o, FEAT_LAYOUT) && !r->o->base) {
		if ((err = layout__add(r->raw, r->size, &r->laid)))
			return err == -ENOMEM ? err : DIAG_BUG(r->d, "the BTF just written has no plain header");
		if (r->laid.len > UINT32_MAX)
			return diag_fail(r->d, E2BIG, "the BTF with its kind layout is larger than 4 GiB");
		r->raw = r->laid.data;
		r->size = (uint32_t)r->laid.len;
	}
	return 0;
}

static int write_pass(struct emit_run *r)
{
	int err;
	if (r->o->skip_report && (err = skip_log__write(&r->skips, r->o->skip_report, r->d)))
		return err;
	const void *dbase = r->distilled ? r->dbase.data : NULL;
	uint32_t dbase_size = (uint32_t)r->dbase.len;
	if ((err = output__write(r->o, r->raw, r->size, dbase, dbase_size, r->d)))
		return err;
	/* The distilled base after the split BTF (main.c's memo_fetch() parts them). */
	if (r->memo)
		cachedir__put(r->memo->cache, r->memo->key, r->raw, r->size, dbase, dbase ? dbase_size : 0);
	return 0;
}

static void run_free(struct emit_run *r)
{
	skip_log__free(&r->skips);
	free(r->picks);
	free(r->pick_arena);
	btf__free(r->btf);
	btf__free(r->base);
	base_index__free(&r->bi);
	base_view__close(&r->view);
	buf_free(&r->split);
	buf_free(&r->laid);
	buf_free(&r->dbase);
	buf_free(&r->ours);
	type_map__free(&r->map);
	elf_info__free(&r->ei);
	graph__free(&r->g);
}

int emit__run(const struct emit_opts *o, const struct emit_memo *memo, const struct emit_base_cache *bc,
	      struct diag *d)
{
	struct emit_run r = { .o = o, .memo = memo, .bc = bc, .d = d };
	stats_init(&r.st, TOOL);
	stats_count(&r.st, "memtune", (uint64_t)memtune__active());
	diag_phase(d, "read");
	int err = read_pass(&r);
	if (err) {
		elf_info__free(&r.ei); /* read_inputs() freed the graph */
		return err;
	}
	stats_phase(&r.st, "read");
	diag_phase(d, "base_read");
	if ((err = base_pass(&r)))
		goto out;
	/* Reading and indexing the base: a module's fixed cost, on its own. */
	if (o->base)
		stats_phase(&r.st, "base_read");
	if (o->explain) {
		err = explain_pass(&r);
		goto out;
	}
	diag_phase(d, "select");
	if ((err = select_pass(&r)))
		goto out;
	stats_phase(&r.st, "select");
	diag_phase(d, "plan");
	if ((err = plan_pass(&r)))
		goto out;
	stats_phase(&r.st, "plan");
	diag_phase(d, "encode");
	if ((err = encode_pass(&r)))
		goto out;
	stats_phase(&r.st, "encode");
	diag_phase(d, "base");
	if ((err = split_pass(&r)))
		goto out;
	/* Its own phase: on a small module, matching against the base is most
	 * of the emit, and would otherwise count as writing. */
	if (o->base)
		stats_phase(&r.st, "base");
	diag_phase(d, "write");
	if ((err = write_pass(&r)))
		goto out;
	stats_phase(&r.st, "write");
	if (o->cli.stats) {
		stats_count(&r.st, "graph_nodes", r.g.nnodes);
		count_kinds(&r.st, r.nkinds, r.kinds);
		stats_count(&r.st, "left_out", r.skips.count);
		stats_print(&r.st, stderr, o->cli.stats == 2);
	}
out:
	run_free(&r);
	return err;
}
