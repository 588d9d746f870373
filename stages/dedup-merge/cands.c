/* cands.c: step 5 after the nodes, before the provenance (see merge.h):
 * function and variable candidates into the graph, every pass on the pool.
 *
 * One thread adding the candidates in CU order (functions first, then
 * variables), as the merge did before, gives each new string its offset and
 * each new prototype its node id in order of first use. The same numbers
 * come out of passes that each run in parallel; what stays on one thread is
 * a sum over the CUs (lay_out()), a sum over a few ranges (intern.c), and
 * copying the nodes' string table to the front of the graph's (str_alloc()).
 *
 *  1. collect, per CU: pending candidates filled from the exports, types
 *     turned into nodes, and every string looked up in the string table the
 *     nodes left (read-only from now on). A string it lacks becomes a *use*:
 *     its hash, its bytes and its *place*, the position the serial pass
 *     would meet it at.
 *  2. intern.c, for those uses: equal uses become one *unique* that keeps
 *     the smallest place, and the uniques are laid out in order of place:
 *     strings so get exactly the offsets the serial pass gives.
 *  3. The prototypes likewise: every function's (return, varargs, params'
 *     names and types) is a use placed at (CU, function), and every
 *     func_proto node already made is a use placed before all of them (at its
 *     node id), so a prototype equal to an existing node is that node, and a
 *     new one gets the next node id in order of first use.
 *  4. write, per CU: functions, locations, annotations and variables at the
 *     positions the sum over CUs gives.
 *
 * The result never depends on the thread count or on timing (intern.h).
 */
#include "merge.h"
#include "intern.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/pool.h"
#include "../../common/strtab.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the candidates ---- */

/* Per CU, what the passes work out for its candidates. */
struct cand_cu {
	/* [i] func i's return, [nfuncs + k] fparam k's type, [nfuncs + nfparams + v] var v's */
	uint32_t *node;
	/* string offsets: [2i] func i's name, [2i + 1] its linkage, then
	 * [str_param() + k] fparam k's, [str_annot() + 2a] annot a's name and
	 * [+ 1] its value, [str_var() + v] var v's name */
	uint32_t *soff;
	uint32_t *proto;	/* [i] func i's prototype node */
	uint64_t nlocs, nfannots, nvannots;
	/* where its funcs, locs and annotations go in the graph */
	uint64_t func0, loc0, fannot0, var0, vannot0;
};

/* The lowest (pass, CU) that failed, with its detail: a serial pass would
 * stop there first. */
struct cand_err {
	uint64_t at;
	int err;
	struct diag d;
};

struct cands {
	struct merge *m;
	struct graph *g;
	struct cand_cu *cu;
	struct cand_err *werr;	/* per worker */
	struct intern *in;	/* the strings', then the prototypes' */
	uint64_t str0;		/* the string table's size before the candidates */
	uint64_t nodes0, items0; /* the graph's nodes and items before them */
	size_t chunks;		/* PASS_PROTOS's node chunks, intern's ranges per pass */
	enum { PASS_COLLECT, PASS_PROTOS, PASS_WRITE } pass; /* the pool pass running */
};

static size_t str_param(const struct cu_scan *s) { return 2 * s->nfuncs; }
static size_t str_annot(const struct cu_scan *s) { return 2 * s->nfuncs + s->nfparams; }
static size_t str_var(const struct cu_scan *s) { return 2 * s->nfuncs + s->nfparams + 2 * s->nannots; }

/* Fill what a candidate left pending in another CU from the exports. */
static void resolve_pending_func(const struct merge *m, size_t ci, struct fcand *f)
{
	struct cu_scan *s = &m->scans[ci];
	if (f->origin_off) {
		const struct export *e = exports__find(m->exports, m->cu_input[ci], f->origin_off);
		if (e) {
			if (!f->name)
				f->name = e->name;
			if (!f->linkage)
				f->linkage = e->linkage;
			if (!f->ret)
				f->ret = e->type;
			f->flags |= e->flags & (CUS_F_EXTERNAL | CUS_F_VARARGS | CUS_F_PROTOTYPED);
		}
	}
	for (uint32_t i = 0; i < f->param_count; i++) {
		struct fcand_param *p = &s->fparams[f->param_first + i];
		if (!p->origin_off)
			continue;
		const struct export *e = exports__find(m->exports, m->cu_input[ci], p->origin_off);
		if (!e)
			continue;
		if (!p->name)
			p->name = e->name;
		if (!p->type)
			p->type = e->type;
	}
}

static void resolve_pending_var(const struct merge *m, size_t ci, struct vcand *v)
{
	if (!v->spec_off)
		return;
	const struct export *e = exports__find(m->exports, m->cu_input[ci], v->spec_off);
	if (e) {
		if (!v->name)
			v->name = e->name;
		if (!v->type)
			v->type = e->type;
		v->flags |= e->flags & CUS_F_EXTERNAL;
	}
}

/* ---- strings ---- */

/* A string at soff[at]: its offset now when the table has it, else a use
 * placed at (pass, ci, *n). */
static int str_use(struct cands *c, unsigned worker, const char *s, unsigned pass, size_t ci, uint32_t *n,
		   size_t at)
{
	uint32_t *soff = c->cu[ci].soff;
	uint32_t here = (*n)++;	/* below the CU's string count: collect_cu() checked it */
	size_t len = s ? strlen(s) : 0;
	if (!len) {
		soff[at] = 0;
		return 0;
	}
	if (len >= UINT32_MAX)
		return -E2BIG;
	uint64_t h = strtab__hash(s, len);
	int64_t off = strtab__find_hashed(c->m->strs, s, len, h);
	if (off >= 0) {
		soff[at] = (uint32_t)off;
		return 0;
	}
	struct use u = { .hash = h, .place = place_of(pass, ci, here), .s = s, .len = (uint32_t)len,
			 .at = (uint32_t)at };
	return intern__push(c->in, worker, &u);
}

static int annot_uses(struct cands *c, unsigned worker, unsigned pass, size_t ci, uint32_t *n,
		      uint32_t first, uint32_t count)
{
	const struct cu_scan *s = &c->m->scans[ci];
	int err = 0;
	for (uint32_t a = first; a < first + count && !err; a++) {
		size_t at = str_annot(s) + 2 * (size_t)a;
		if (!(err = str_use(c, worker, s->annots[a].name, pass, ci, n, at)))
			err = str_use(c, worker, s->annots[a].value, pass, ci, n, at + 1);
	}
	return err;
}

static int str_eq(const void *ctx, const struct use *a, const struct use *b)
{
	(void)ctx;
	return a->len == b->len && !memcmp(a->s, b->s, a->len);
}

static uint64_t str_size(const void *ctx, const struct use *u)
{
	(void)ctx;
	return (uint64_t)u->len + 1;
}

/* The new strings follow the table's: the graph's string section. A table
 * too big for 32-bit offsets is found here, after every CU's checks; the
 * serial pass found it at the CU that overflowed, so when a later CU also
 * has a bad reference, that -EBADMSG is reported now where -E2BIG was. */
static int str_alloc(void *ctx, uint64_t count, uint64_t total)
{
	struct cands *c = ctx;
	(void)count;
	if (c->str0 + total >= UINT32_MAX)
		return diag_fail(c->m->d, E2BIG, "the type graph's strings with the functions' and variables' "
				 "names come to %llu bytes: past 4 GiB, the limit of its 32-bit offsets and of BTF's",
				 (unsigned long long)(c->str0 + total));
	c->g->str = malloc(c->str0 + total);
	if (!c->g->str)
		return -ENOMEM;
	memcpy(c->g->str, strtab__data(c->m->strs), c->str0);
	c->g->str_size = c->str0 + total;
	return 0;
}

static uint32_t str_put(void *ctx, const struct use *u, uint64_t idx, uint64_t pos)
{
	struct cands *c = ctx;
	(void)idx;
	memcpy(c->g->str + c->str0 + pos, u->s, u->len);
	c->g->str[c->str0 + pos + u->len] = 0;
	return (uint32_t)(c->str0 + pos);
}

static void str_resolve(void *ctx, const struct use *u, uint32_t val)
{
	struct cands *c = ctx;
	c->cu[place_cu(u->place)].soff[u->at] = val;
}

static const struct intern_ops str_ops = { str_eq, str_size, str_alloc, str_put, str_resolve };

/* ---- PASS_COLLECT, per CU ---- */

/* Record worker's failure at place `at` (pass 1 or 2, the CU) if it is the
 * worker's lowest. Returns: 0 for a bad reference (-EBADMSG), so that the
 * CUs after it still run and the lowest failure is found whatever ran first;
 * err itself otherwise (-ENOMEM, -E2BIG), which stops the pool: every CU
 * below the one that stops it has run, so first_failure() still sees the
 * lowest. */
static int cand_fail(struct cands *c, unsigned worker, uint64_t at, int err, const struct diag *d)
{
	struct cand_err *e = &c->werr[worker];
	if (!e->err || at < e->at) {
		e->at = at;
		e->err = err;
		e->d = *d;
	}
	return err == -EBADMSG ? 0 : err;
}

static int collect_funcs(struct cands *c, unsigned worker, size_t ci, struct diag *d)
{
	const struct merge *m = c->m;
	const struct cu_scan *s = &m->scans[ci];
	struct cand_cu *cc = &c->cu[ci];
	uint32_t n = 0;
	int err = 0;
	/* The strings in the order the serial pass met them: params' names
	 * (for the prototype), name, linkage, params' annotations, its own. */
	for (size_t i = 0; i < s->nfuncs && !err; i++) {
		struct fcand *f = &s->funcs[i];
		resolve_pending_func(m, ci, f);
		err = build__lref_node(m, ci, f->ret, &cc->node[i], d);
		for (uint32_t j = 0; j < f->param_count && !err; j++) {
			size_t k = f->param_first + j;
			err = build__lref_node(m, ci, s->fparams[k].type, &cc->node[s->nfuncs + k], d);
		}
		for (uint32_t j = 0; j < f->param_count && !err; j++) {
			size_t k = f->param_first + j;
			err = str_use(c, worker, s->fparams[k].name, 1, ci, &n, str_param(s) + k);
		}
		if (!err && !(err = str_use(c, worker, f->name, 1, ci, &n, 2 * i)))
			err = str_use(c, worker, f->linkage, 1, ci, &n, 2 * i + 1);
		for (uint32_t j = 0; j < f->param_count && !err; j++) {
			const struct fcand_param *p = &s->fparams[f->param_first + j];
			err = annot_uses(c, worker, 1, ci, &n, p->annot_first, p->annot_count);
			cc->nfannots += p->annot_count;
		}
		if (!err)
			err = annot_uses(c, worker, 1, ci, &n, f->annot_first, f->annot_count);
		cc->nfannots += f->annot_count;
		cc->nlocs += f->param_count;
	}
	return err;
}

static int collect_vars(struct cands *c, unsigned worker, size_t ci, struct diag *d)
{
	const struct merge *m = c->m;
	const struct cu_scan *s = &m->scans[ci];
	struct cand_cu *cc = &c->cu[ci];
	uint32_t n = 0;
	int err = 0;
	for (size_t i = 0; i < s->nvars && !err; i++) {
		struct vcand *v = &s->vars[i];
		resolve_pending_var(m, ci, v);
		err = build__lref_node(m, ci, v->type, &cc->node[s->nfuncs + s->nfparams + i], d);
		if (!err)
			err = str_use(c, worker, v->name, 2, ci, &n, str_var(s) + i);
		if (!err)
			err = annot_uses(c, worker, 2, ci, &n, v->annot_first, v->annot_count);
		cc->nvannots += v->annot_count;
	}
	return err;
}

static int collect_cu(struct cands *c, unsigned worker, size_t ci)
{
	const struct cu_scan *s = &c->m->scans[ci];
	struct cand_cu *cc = &c->cu[ci];
	struct diag d = { 0 };
	/* The string count bounds every place's n; the CU must fit a place. */
	size_t nstr = str_var(s) + s->nvars;
	if (ci >> PLACE_CU_BITS)
		return cand_fail(c, worker, UINT64_MAX, -E2BIG, &d); /* past every place */
	if (nstr >= UINT32_MAX)
		return cand_fail(c, worker, place_of(1, ci, 0), -E2BIG, &d);
	cc->node = malloc((s->nfuncs + s->nfparams + s->nvars + 1) * sizeof(*cc->node));
	cc->soff = calloc(nstr + 1, sizeof(*cc->soff));
	cc->proto = malloc((s->nfuncs + 1) * sizeof(*cc->proto));
	if (!cc->node || !cc->soff || !cc->proto)
		return cand_fail(c, worker, place_of(1, ci, 0), -ENOMEM, &d);
	int err = collect_funcs(c, worker, ci, &d);
	if (err && (err = cand_fail(c, worker, place_of(1, ci, 0), err, &d)))
		return err;
	d.set = 0;
	err = collect_vars(c, worker, ci, &d);
	if (err && (err = cand_fail(c, worker, place_of(2, ci, 0), err, &d)))
		return err;
	return 0;
}

/* ---- prototypes ---- */

/* A prototype's key, from a func_proto node (pass 0) or a function. */
struct pkey {
	uint32_t ret, varargs, n;
	int is_node;
	const struct graph_item *items;		/* a node's params: into g->items, which
						 * proto_alloc() moves, so never kept */
	const uint32_t *names, *types;		/* a function's */
};

static void pkey_of(const struct cands *c, uint64_t place, struct pkey *k)
{
	if (!place_pass(place)) {
		const struct graph_node *p = &c->g->nodes[place_n(place)];
		*k = (struct pkey){ p->type, p->flags & CUS_F_VARARGS, p->item_count, 1,
				    p->item_count ? c->g->items + p->item_first : NULL, NULL, NULL };
		return;
	}
	size_t ci = place_cu(place);
	const struct cu_scan *s = &c->m->scans[ci];
	const struct cand_cu *cc = &c->cu[ci];
	const struct fcand *f = &s->funcs[place_n(place)];
	*k = (struct pkey){ cc->node[place_n(place)], f->flags & CUS_F_VARARGS, f->param_count, 0, NULL,
			    cc->soff + str_param(s) + f->param_first, cc->node + s->nfuncs + f->param_first };
}

static void pkey_param(const struct pkey *k, uint32_t i, uint32_t *name, uint32_t *type)
{
	*name = k->is_node ? k->items[i].name : k->names[i];
	*type = k->is_node ? k->items[i].type : k->types[i];
}

static uint64_t pkey_hash(const struct pkey *k)
{
	uint64_t h = hash_step(hash_step(hash_step(0, k->ret), k->varargs), k->n);
	for (uint32_t i = 0; i < k->n; i++) {
		uint32_t name, type;
		pkey_param(k, i, &name, &type);
		h = hash_step(h, (uint64_t)name << 32 | type);
	}
	return h;
}

static int proto_eq(const void *ctx, const struct use *a, const struct use *b)
{
	struct pkey x, y;
	pkey_of(ctx, a->place, &x);
	pkey_of(ctx, b->place, &y);
	if (x.ret != y.ret || x.varargs != y.varargs || x.n != y.n)
		return 0;
	for (uint32_t i = 0; i < x.n; i++) {
		uint32_t xn, xt, yn, yt;
		pkey_param(&x, i, &xn, &xt);
		pkey_param(&y, i, &yn, &yt);
		if (xn != yn || xt != yt)
			return 0;
	}
	return 1;
}

static uint64_t proto_size(const void *ctx, const struct use *u)
{
	struct pkey k;
	pkey_of(ctx, u->place, &k);
	return k.n;
}

/* Room for the new func_proto nodes and their params. The arrays get their
 * exact sizes, so build.c's capacities for them are void from here on. */
static int proto_alloc(void *ctx, uint64_t count, uint64_t total)
{
	struct cands *c = ctx;
	struct graph *g = c->g;
	if (c->nodes0 + count >= UINT32_MAX || c->items0 + total >= UINT32_MAX)
		return -E2BIG;
	if (vec_resize(&g->nodes, c->nodes0 + count + 1) || vec_resize(&g->items, c->items0 + total + 1))
		return -ENOMEM;
	memset(g->nodes + c->nodes0 + 1, 0, count * sizeof(*g->nodes));
	g->nnodes = c->nodes0 + count;
	g->nitems = c->items0 + total;
	return 0;
}

static uint32_t proto_put(void *ctx, const struct use *u, uint64_t idx, uint64_t pos)
{
	struct cands *c = ctx;
	struct graph *g = c->g;
	struct pkey k;
	pkey_of(c, u->place, &k);
	uint32_t id = (uint32_t)(c->nodes0 + 1 + idx);
	struct graph_node *p = &g->nodes[id];
	p->kind = G_FUNC_PROTO;
	p->type = k.ret;
	p->flags = k.varargs;
	p->item_first = (uint32_t)(c->items0 + pos);
	p->item_count = k.n;
	for (uint32_t i = 0; i < k.n; i++) {
		struct graph_item *it = &g->items[c->items0 + pos + i];
		*it = (struct graph_item){ 0 };
		pkey_param(&k, i, &it->name, &it->type);
	}
	return id;
}

static void proto_resolve(void *ctx, const struct use *u, uint32_t val)
{
	struct cands *c = ctx;
	if (place_pass(u->place))
		c->cu[place_cu(u->place)].proto[place_n(u->place)] = val;
}

static const struct intern_ops proto_ops = { proto_eq, proto_size, proto_alloc, proto_put, proto_resolve };

/* PASS_PROTOS items: CU item's functions, then (ncus + k) chunk k of the
 * nodes, whose func_protos are pass-0 uses. */
static int proto_uses(struct cands *c, unsigned worker, size_t item)
{
	const struct merge *m = c->m;
	struct use u = { 0 };
	struct pkey k;
	int err = 0;
	if (item < m->ncus) {
		for (size_t i = 0; i < m->scans[item].nfuncs && !err; i++) {
			u.place = place_of(1, item, i);
			pkey_of(c, u.place, &k);
			u.hash = pkey_hash(&k);
			err = intern__push(c->in, worker, &u);
		}
		return err;
	}
	size_t chunk = item - m->ncus, nch = c->chunks;
	uint64_t lo = 1 + c->nodes0 * chunk / nch, hi = 1 + c->nodes0 * (chunk + 1) / nch;
	for (uint64_t id = lo; id < hi && !err; id++) {
		if (c->g->nodes[id].kind != G_FUNC_PROTO)
			continue;
		u.place = place_of(0, 0, id);
		pkey_of(c, u.place, &k);
		u.hash = pkey_hash(&k);
		err = intern__push(c->in, worker, &u);
	}
	return err;
}

/* ---- PASS_WRITE, per CU ---- */

static void put_annots(struct cands *c, size_t ci, uint32_t first, uint32_t count, uint64_t *ai)
{
	const struct cu_scan *s = &c->m->scans[ci];
	const uint32_t *soff = c->cu[ci].soff;
	for (uint32_t a = first; a < first + count; a++) {
		size_t at = str_annot(s) + 2 * (size_t)a;
		c->g->annots[(*ai)++] = (struct graph_annot){ soff[at], soff[at + 1] };
	}
}

static void write_cu(struct cands *c, size_t ci)
{
	struct graph *g = c->g;
	const struct cu_scan *s = &c->m->scans[ci];
	const struct cand_cu *cc = &c->cu[ci];
	uint64_t li = cc->loc0, ai = cc->fannot0;
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct fcand *f = &s->funcs[i];
		struct graph_func *gf = &g->funcs[cc->func0 + i];
		*gf = (struct graph_func){
			.name = cc->soff[2 * i], .linkage = cc->soff[2 * i + 1], .proto = cc->proto[i],
			.cu = (uint32_t)ci, .flags = f->flags & ~(uint32_t)CUS_F_ANNOT,
			.inline_kind = f->inline_kind, .cc = f->cc, .pc = f->pc, .shndx = f->shndx,
			.loc_first = (uint32_t)li, .loc_count = f->param_count,
		};
		c->m->func_ord[cc->func0 + i] = f->addr_ord;
		for (uint32_t k = 0; k < f->param_count; k++) {
			const struct fcand_param *p = &s->fparams[f->param_first + k];
			g->locs[li++] = (struct graph_loc){ p->loc, p->loc_reg, (uint32_t)ai, p->annot_count };
			if (!p->name || !*p->name)
				gf->flags |= G_F_UNNAMED_PARAM;
			put_annots(c, ci, p->annot_first, p->annot_count, &ai);
		}
		if (f->annot_count) {
			gf->flags |= G_F_ANNOT;
			gf->annot_first = (uint32_t)ai;
			gf->annot_count = f->annot_count;
			put_annots(c, ci, f->annot_first, f->annot_count, &ai);
		}
	}
	ai = cc->vannot0;
	for (size_t i = 0; i < s->nvars; i++) {
		const struct vcand *v = &s->vars[i];
		struct graph_var *gv = &g->vars[cc->var0 + i];
		*gv = (struct graph_var){
			.name = cc->soff[str_var(s) + i], .type = cc->node[s->nfuncs + s->nfparams + i],
			.cu = (uint32_t)ci, .flags = v->flags & ~(uint32_t)CUS_F_ANNOT, .addr = v->addr,
			.shndx = v->shndx,
		};
		c->m->var_ord[cc->var0 + i] = v->addr_ord;
		if (v->annot_count) {
			gv->flags |= G_F_ANNOT;
			gv->annot_first = (uint32_t)ai;
			gv->annot_count = v->annot_count;
			put_annots(c, ci, v->annot_first, v->annot_count, &ai);
		}
	}
}

static int cands_work(void *ctx, unsigned worker, size_t item)
{
	struct cands *c = ctx;
	switch (c->pass) {
	case PASS_COLLECT: return collect_cu(c, worker, item);
	case PASS_PROTOS: return proto_uses(c, worker, item);
	case PASS_WRITE: write_cu(c, item); return 0;
	}
	return -EINVAL;
}

/* Where each CU's functions, locations, annotations and variables go, and
 * room for them all. The loop over CUs only adds counts. */
static int lay_out(struct cands *c)
{
	struct merge *m = c->m;
	struct graph *g = c->g;
	uint64_t nf = 0, nl = 0, nv = 0, na = g->nannots;
	for (size_t ci = 0; ci < m->ncus; ci++) {
		struct cand_cu *cc = &c->cu[ci];
		cc->func0 = nf;
		cc->loc0 = nl;
		cc->fannot0 = na;
		nf += m->scans[ci].nfuncs;
		nl += cc->nlocs;
		na += cc->nfannots;
	}
	for (size_t ci = 0; ci < m->ncus; ci++) {
		struct cand_cu *cc = &c->cu[ci];
		cc->var0 = nv;
		cc->vannot0 = na;
		nv += m->scans[ci].nvars;
		na += cc->nvannots;
	}
	if (nf >= UINT32_MAX || nl >= UINT32_MAX || nv >= UINT32_MAX || na >= UINT32_MAX)
		return -E2BIG;
	if (vec_resize(&g->annots, na + 1))
		return -ENOMEM;
	g->nannots = na;
	g->funcs = malloc((nf + 1) * sizeof(*g->funcs));
	g->locs = malloc((nl + 1) * sizeof(*g->locs));
	g->vars = malloc((nv + 1) * sizeof(*g->vars));
	c->m->func_ord = malloc((nf + 1) * sizeof(uint32_t));
	c->m->var_ord = malloc((nv + 1) * sizeof(uint32_t));
	if (!g->funcs || !g->locs || !g->vars || !c->m->func_ord || !c->m->var_ord)
		return -ENOMEM;
	g->nfuncs = nf;
	g->nlocs = nl;
	g->nvars = nv;
	return 0;
}

/* The first failure a serial pass would meet, into m->d. */
static int first_failure(struct cands *c, unsigned jobs)
{
	const struct cand_err *best = NULL;
	for (unsigned w = 0; w < jobs; w++)
		if (c->werr[w].err && (!best || c->werr[w].at < best->at))
			best = &c->werr[w];
	if (!best)
		return 0;
	if (!c->m->d->set)
		diag_take(c->m->d, &best->d);
	return best->err;
}

/* Candidates (functions and variables) per thread below which another
 * costs more than it saves: the eleven pool runs here start their threads
 * each time, which made a module's merge slower at -j2 than at -j1; a
 * vmlinux has a hundred thousand and more (bench/README.md). */
#define CANDS_PER_THREAD 16384

int cands__build(struct merge *m)
{
	uint64_t ncands = 0;
	for (size_t ci = 0; ci < m->ncus; ci++)
		ncands += m->scans[ci].nfuncs + m->scans[ci].nvars;
	unsigned jobs = pool_threads_for(m->jobs, ncands, m->o->cli.jobs_exact ? 0 : CANDS_PER_THREAD);
	size_t chunks = jobs < 8 ? jobs : 8;
	struct cands c = { .m = m, .g = &m->g, .str0 = strtab__size(m->strs),
			   .nodes0 = m->g.nnodes, .items0 = m->g.nitems, .chunks = chunks };
	c.cu = calloc(m->ncus + 1, sizeof(*c.cu));
	c.werr = calloc(jobs, sizeof(*c.werr));
	int err = c.cu && c.werr ? 0 : -ENOMEM;
	/* Strings: collected, then interned. */
	if (!err && !(c.in = intern__new(&str_ops, &c, jobs, chunks, m->ncus)))
		err = -ENOMEM;
	if (!err) {
		c.pass = PASS_COLLECT;
		int perr = pool_ordered(jobs, m->ncus, m->ncus, cands_work, NULL, &c);
		err = first_failure(&c, jobs);
		if (!err)
			err = perr;
	}
	if (!err)
		err = intern__run(c.in, jobs);
	intern__free(c.in);
	c.in = NULL;
	/* Prototypes: every function's and every func_proto node's. */
	if (!err && !(c.in = intern__new(&proto_ops, &c, jobs, chunks, m->ncus)))
		err = -ENOMEM;
	c.pass = PASS_PROTOS;
	if (!err)
		err = pool_ordered(jobs, m->ncus + chunks, m->ncus + chunks, cands_work, NULL, &c);
	if (!err)
		err = intern__run(c.in, jobs);
	intern__free(c.in);
	/* The candidates themselves. */
	if (!err)
		err = lay_out(&c);
	c.pass = PASS_WRITE;
	if (!err)
		err = pool_ordered(jobs, m->ncus, m->ncus, cands_work, NULL, &c);
	for (size_t ci = 0; c.cu && ci < m->ncus; ci++) {
		free(c.cu[ci].node);
		free(c.cu[ci].soff);
		free(c.cu[ci].proto);
	}
	free(c.cu);
	free(c.werr);
	return err;
}
