/* fwds.c: step 4b of the merge (merge.h): types that differ only where one
 * has a declared-only struct or union and the other a definition of that
 * name, when the name has several definitions.
 *
 * With one definition, a fwd stands for it during the refinement
 * (classes.c). With several, C does not say which one a CU meant, and the
 * refinement keeps a type that points at the fwd apart from each type that
 * points at a definition. libbpf's btf__dedup() does not: it takes a FWD as
 * equal to any STRUCT or UNION of its name and kind, and merges a type into
 * the first earlier type it is so equal to (btf_dedup_is_equiv(), one
 * binding per FWD for the whole comparison). pahole's BTF is deduplicated
 * so, and every BTF we write must be a fixed point of libbpf's dedup. So
 * here, in order of their first node (the order of the BTF), each class
 * that reaches such a fwd is compared with the earlier classes of its weak
 * class, in that order, exactly as libbpf compares two types; at the first
 * that is equal, every pair of classes the comparison equated becomes one
 * class, the earlier one, and a fwd it equated with a definition stands for
 * that definition from then on (libbpf maps its one FWD of the name to the
 * first STRUCT it was found equal to). Its nodes then count as that
 * definition, like a fwd of a name with one definition.
 *
 * Without a fwd of such a name nothing here runs (no vmlinux or module we
 * checked has one that matters), so those graphs keep their bytes.
 * Deterministic: the order is the classes' first gids, which do not depend
 * on the thread count.
 */
#include "classes.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct absorb {
	struct merge *m;
	uint32_t *rep;		/* per class: its first gid (0: a class no gid has) */
	uint32_t *parent;	/* union-find over classes, into the earlier */
	uint8_t *open_fwd;	/* per class: a fwd of a name with several definitions */
	uint32_t *bound;	/* per open fwd class: the definition class it was
				 * first found equal to, for good (libbpf maps its
				 * FWD so), or NO_CLASS */
	uint32_t *hyp;		/* per class: what this comparison equates it with */
	uint32_t *touched;	/* the classes hyp holds */
	size_t ntouched, cap_touched;
	uint32_t *stack;	/* pairs to compare */
	size_t nstack, cap_stack;
	uint32_t *sa, *sb;	/* two signatures */
	size_t cap_sig;
};

static uint32_t find(struct absorb *a, uint32_t c)
{
	while (a->parent[c] != c) {
		a->parent[c] = a->parent[a->parent[c]];
		c = a->parent[c];
	}
	return c;
}

/* What class c counts as now: its merge, or a bound fwd's definition. */
static uint32_t now(struct absorb *a, uint32_t c)
{
	c = find(a, c);
	return a->open_fwd[c] && a->bound[c] != NO_CLASS ? find(a, a->bound[c]) : c;
}

/* What gid t's stop edge counts as, merges applied. */
static uint32_t seen(struct absorb *a, uint32_t t)
{
	return now(a, classes__seen(a->m, t));
}

static uint32_t weak_of(const struct absorb *a, uint32_t c)
{
	return a->m->weak[a->rep[c]];
}

/* A fwd class and a definition class of the same kind and name. */
static int binds(const struct absorb *a, uint32_t fwd, uint32_t def)
{
	uint8_t k1, k2;
	int f1, f2;
	const uint8_t *n1, *n2;
	size_t l1, l2;
	return weak__named(a->m->wt, weak_of(a, fwd), &k1, &f1, &n1, &l1) &&
	       weak__named(a->m->wt, weak_of(a, def), &k2, &f2, &n2, &l2) && f1 && !f2 && k1 == k2 &&
	       l1 == l2 && !memcmp(n1, n2, l1);
}

static int push(struct absorb *a, uint32_t x, uint32_t y)
{
	if (vec_grow(&a->stack, &a->cap_stack, a->nstack + 2))
		return -ENOMEM;
	a->stack[a->nstack++] = x;
	a->stack[a->nstack++] = y;
	return 0;
}

static int note(struct absorb *a, uint32_t x, uint32_t y)
{
	if (vec_grow(&a->touched, &a->cap_touched, a->ntouched + 1))
		return -ENOMEM;
	a->hyp[x] = y;
	a->touched[a->ntouched++] = x;
	return 0;
}

/* The signature of class c's first node into a->sa (a->sb sized alike).
 * Returns its length, or -ENOMEM. */
static int64_t sig_of(struct absorb *a, uint32_t c)
{
	uint32_t n = classes__stops(a->m, a->rep[c], a->sa, (uint32_t)a->cap_sig);
	if (n > a->cap_sig) {
		if (vec_grow(&a->sa, &a->cap_sig, n) || vec_resize(&a->sb, a->cap_sig))
			return -ENOMEM;
		n = classes__stops(a->m, a->rep[c], a->sa, (uint32_t)a->cap_sig);
	}
	return n;
}

/* libbpf's comparison of class c (later) with class d (earlier), with a
 * hypothesis per class, kept in a->hyp. Returns 1 equal, 0 not, <0 errno. */
static int equal(struct absorb *a, uint32_t c, uint32_t d)
{
	struct merge *m = a->m;
	a->nstack = 0;
	int err = push(a, c, d);
	while (!err && a->nstack) {
		uint32_t y = now(a, a->stack[--a->nstack]), x = now(a, a->stack[--a->nstack]);
		if (x == y)
			continue;
		if (a->hyp[x] != NO_CLASS) {
			if (a->hyp[x] != y)
				return 0;
			continue;
		}
		if (a->open_fwd[x] || a->open_fwd[y]) {
			if (!(a->open_fwd[x] ? binds(a, x, y) : binds(a, y, x)))
				return 0;
			err = note(a, x, y);
			continue;
		}
		if (weak_of(a, x) != weak_of(a, y))
			return 0;
		if ((err = note(a, x, y)))
			break;
		/* One weak class: the same key, so as many stop edges, in order. */
		int64_t n = sig_of(a, x);
		if (n < 0)
			return (int)n;
		if (classes__stops(m, a->rep[y], a->sb, (uint32_t)a->cap_sig) != (uint32_t)n)
			return 0;
		for (uint32_t i = 0; i < (uint32_t)n && !err; i++)
			err = push(a, seen(a, a->sa[i]), seen(a, a->sb[i]));
	}
	return err ? err : 1;
}

/* Classes reaching an open fwd through stop edges (the only ones whose
 * comparison can differ from the refinement's), as marks: a walk back
 * along the edges from the open fwds, over reversed edges in CSR form. */
static int mark_reaching(struct absorb *a, uint8_t *mark)
{
	struct merge *m = a->m;
	uint32_t n = m->ncls;
	uint64_t *start = calloc((size_t)n + 2, sizeof(*start));
	uint32_t *from = NULL, *queue = malloc(((size_t)n + 1) * sizeof(*queue));
	int err = -ENOMEM;
	if (!start || !queue)
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t c = 0; c < n; c++) {
			if (!a->rep[c])
				continue;
			int64_t k = sig_of(a, c);
			if (k < 0)
				goto out;
			for (uint32_t i = 0; i < (uint32_t)k; i++) {
				uint32_t t = seen(a, a->sa[i]);
				if (pass)
					from[start[t + 1]++] = c;
				else
					start[t + 2]++;
			}
		}
		if (pass)
			break;
		for (uint32_t t = 0; t < n; t++)
			start[t + 2] += start[t + 1];
		if (!(from = malloc((start[n + 1] + 1) * sizeof(*from))))
			goto out;
	}
	/* start[t] .. start[t + 1]: the classes with an edge to t. */
	size_t head = 0, tail = 0;
	for (uint32_t c = 0; c < n; c++)
		if ((mark[c] = a->open_fwd[c]))
			queue[tail++] = c;
	while (head < tail) {
		uint32_t t = queue[head++];
		for (uint64_t e = start[t]; e < start[t + 1]; e++)
			if (!mark[from[e]]) {
				mark[from[e]] = 1;
				queue[tail++] = from[e];
			}
	}
	err = 0;
out:
	free(start);
	free(from);
	free(queue);
	return err;
}

static int by_weak_rep(const void *x, const void *y, void *ctx)
{
	const struct absorb *a = ctx;
	uint32_t cx = *(const uint32_t *)x, cy = *(const uint32_t *)y;
	uint32_t wx = weak_of(a, cx), wy = weak_of(a, cy);
	if (wx != wy)
		return (wx > wy) - (wx < wy);
	return (a->rep[cx] > a->rep[cy]) - (a->rep[cx] < a->rep[cy]);
}

static int by_rep(const void *x, const void *y, void *ctx)
{
	const uint32_t *rep = ctx;
	uint32_t a = rep[*(const uint32_t *)x], b = rep[*(const uint32_t *)y];
	return (a > b) - (a < b);
}

/* Compare c with the earlier classes of its weak class, in order; at the
 * first equal one, merge what the comparison equated. group: those classes,
 * in order of their first gid. */
static int absorb_one(struct absorb *a, uint32_t c, const uint32_t *group, size_t ngroup)
{
	int r = 0;
	for (size_t j = 0; j < ngroup && a->rep[group[j]] < a->rep[c] && r != 1; j++) {
		uint32_t d = group[j];
		if (find(a, d) != d)
			continue;
		if ((r = equal(a, c, d)) < 0)
			return r;
		/* Equal: every pair it equated is one class, and a fwd it bound
		 * stays bound to that definition. */
		for (size_t t = 0; r == 1 && t < a->ntouched; t++) {
			uint32_t x = now(a, a->touched[t]), y = now(a, a->hyp[a->touched[t]]);
			if (x == y)
				continue;
			if (a->open_fwd[x] || a->open_fwd[y]) {
				a->bound[a->open_fwd[x] ? x : y] = a->open_fwd[x] ? y : x;
				continue;
			}
			if (a->rep[x] < a->rep[y])
				a->parent[y] = x;
			else
				a->parent[x] = y;
		}
		for (size_t t = 0; t < a->ntouched; t++)
			a->hyp[a->touched[t]] = NO_CLASS;
		a->ntouched = 0;
	}
	return 0;
}

static int absorb_run(struct absorb *a)
{
	struct merge *m = a->m;
	uint32_t n = m->ncls;
	uint8_t *mark = calloc((size_t)n + 1, 1), *wmark = NULL;
	uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
	uint32_t *byweak = malloc(((size_t)n + 1) * sizeof(*byweak));
	size_t *first = malloc(((size_t)n + 1) * sizeof(*first)); /* per class: its group's start */
	int err = -ENOMEM;
	if (!mark || !order || !byweak || !first)
		goto out;
	if ((err = mark_reaching(a, mark)))
		goto out;
	/* libbpf compares a later type with every earlier one of its hash,
	 * whichever of the two has the fwd: a class with a definition whose
	 * earlier sibling reaches the fwd is compared too (of_pci_range_parser
	 * on arm64: the fwd of_bus one first, then one with struct of_bus,
	 * which libbpf merges into it). So a whole weak class is compared once
	 * one of its classes reaches an open fwd. */
	if (!(wmark = calloc((size_t)m->nweak + 1, 1))) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t c = 0; c < n; c++)
		if (a->rep[c] && mark[c])
			wmark[weak_of(a, c)] = 1;
	uint32_t k = 0;
	for (uint32_t c = 0; c < n; c++)
		if (a->rep[c])
			order[k++] = c;
	memcpy(byweak, order, k * sizeof(*order));
	qsort_r(order, k, sizeof(*order), by_rep, a->rep);	/* the BTF's order */
	qsort_r(byweak, k, sizeof(*byweak), by_weak_rep, a);	/* grouped by weak class */
	for (uint32_t i = 0; i < k; i++)
		first[byweak[i]] = i && weak_of(a, byweak[i]) == weak_of(a, byweak[i - 1]) ? first[byweak[i - 1]] : i;
	for (uint32_t i = 0; i < k && !err; i++) {
		uint32_t c = order[i];
		if (!wmark[weak_of(a, c)] || a->open_fwd[c] || find(a, c) != c)
			continue;
		size_t g = first[c], e = g;
		while (e < k && weak_of(a, byweak[e]) == weak_of(a, c))
			e++;
		err = absorb_one(a, c, byweak + g, e - g);
	}
out:
	free(mark);
	free(wmark);
	free(order);
	free(byweak);
	free(first);
	return err;
}

int fwds__absorb(struct merge *m)
{
	/* Open fwd weak classes: several definitions of the name, or one whose
	 * nodes the refinement split. Usually there is none. */
	int any = 0;
	for (uint32_t w = 0; w < m->nweak && !any; w++) {
		uint32_t def = m->cs->weak_fwd_def[w];
		any = m->cs->weak_fwd_open[w] || (def != NO_CLASS && m->cs->weak_split[def]);
	}
	if (!any)
		return 0;
	struct absorb a = { .m = m };
	uint32_t n = m->ncls;
	a.rep = calloc(n + 1, sizeof(*a.rep));
	a.parent = malloc((n + 1) * sizeof(*a.parent));
	a.open_fwd = calloc(n + 1, 1);
	a.hyp = malloc((n + 1) * sizeof(*a.hyp));
	a.bound = malloc((n + 1) * sizeof(*a.bound));
	m->cs->weak_fwd_bound = malloc(((size_t)m->nweak + 1) * sizeof(uint32_t));
	int err = -ENOMEM;
	if (!a.rep || !a.parent || !a.open_fwd || !a.hyp || !a.bound || !m->cs->weak_fwd_bound)
		goto out;
	for (uint32_t c = 0; c < n; c++) {
		a.parent[c] = c;
		a.hyp[c] = a.bound[c] = NO_CLASS;
	}
	for (uint64_t g = m->nnodes; g >= 1; g--)
		if (m->cls[g] != NO_CLASS)
			a.rep[m->cls[g]] = (uint32_t)g;
	for (uint32_t c = 0; c < n; c++) {
		if (!a.rep[c])
			continue;
		uint32_t w = weak_of(&a, c), def = m->cs->weak_fwd_def[w];
		uint8_t kind;
		int fwd;
		const uint8_t *name;
		size_t len;
		a.open_fwd[c] = (m->cs->weak_fwd_open[w] || (def != NO_CLASS && m->cs->weak_split[def])) &&
				weak__named(m->wt, w, &kind, &fwd, &name, &len) && fwd && kind != CUS_ENUM;
	}
	if ((err = absorb_run(&a)))
		goto out;
	/* The merges into m->cls, and into the classes a unique definition's
	 * fwds count as (weak_first_cls). */
	for (uint64_t g = 1; g <= m->nnodes; g++)
		if (m->cls[g] != NO_CLASS)
			m->cls[g] = find(&a, m->cls[g]);
	for (uint32_t w = 0; w < m->nweak; w++) {
		m->cs->weak_first_cls[w] = find(&a, m->cs->weak_first_cls[w]);
		m->cs->weak_fwd_bound[w] = NO_CLASS;
	}
	/* A bound fwd's nodes count as its definition (finish_fwds()). */
	for (uint32_t c = 0; c < n; c++)
		if (a.rep[c] && a.open_fwd[c] && a.bound[c] != NO_CLASS)
			m->cs->weak_fwd_bound[weak_of(&a, c)] = now(&a, c);
out:
	free(a.rep);
	free(a.parent);
	free(a.open_fwd);
	free(a.hyp);
	free(a.bound);
	free(a.touched);
	free(a.stack);
	free(a.sa);
	free(a.sb);
	return err;
}
