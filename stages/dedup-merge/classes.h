/* classes.h: the merge's classes, steps 2 to 4b (weak.c, refine.c, classes.c, fwds.c).
 *
 * What these four files share and no other merge file reads: the weak
 * table's per-class records, the pending cross-CU stop edges, and the
 * fwd bookkeeping the refinement and fwds.c hand each other. The rest of
 * the merge sees the classes through merge.h's classes__* calls and the
 * per-gid arrays weak and cls.
 *  - weak.c, step 2: keys into weak classes (the table the scans read).
 *  - classes.c, step 3 and around step 4: cross-CU stop edges resolved;
 *    which definition a fwd stands for; what a node counts as.
 *  - refine.c, step 4: the refinement rounds over the stop edges.
 *  - fwds.c, step 4b: libbpf's rule for a fwd of a name with several
 *    definitions.
 */
#ifndef BTFPIPE_MERGE_CLASSES_H
#define BTFPIPE_MERGE_CLASSES_H

#include "merge.h"

/* A class's representative: its first gid, and that gid's CU. */
struct rep {
	uint32_t gid, cu;
};

/* A stop edge into another CU, waiting for step 3. */
struct pending_stop {
	size_t pos;		/* index in the CU's gstops */
	uint32_t cu;
	uint64_t off;		/* global DIE offset in the CU's input */
};

/* m->cs: what the class steps keep between them. Owned by the merge from
 * classes__init() to classes__free(). */
struct class_state {
	struct pending_stop *pend;	/* step 2 makes them, step 3 resolves them */
	size_t npend, cap_pend;
	uint32_t *weak_fwd_def;		/* per weak class: the definition a fwd stands for, or NO_CLASS */
	uint32_t *weak_first_cls;	/* per weak class: the class of its nodes when not split */
	uint8_t *weak_split;		/* per weak class: its nodes are in several classes */
	uint8_t *weak_fwd_open;		/* per weak class: a fwd whose name has several definitions */
	uint32_t *weak_fwd_bound;	/* per weak class: the class fwds.c bound such a fwd to,
					 * or NO_CLASS; NULL when it bound none */
	/* After refinement (the five above are freed then): per weak class,
	 * the class its nodes count as when it is a fwd standing for a
	 * definition whose nodes share one class, else NO_CLASS. */
	uint32_t *final_fwd;
};

/* weak.c */
struct weak_table *weak__new(void);
void weak__free(struct weak_table *t);
/* Per weak class, its representative (the gid that made it). */
const struct rep *weak__first(const struct weak_table *t);
/* A weak class's kind, name and whether it is a fwd, read back from its
 * key; 0 when it is not a named struct, union or enum. */
int weak__named(const struct weak_table *t, uint32_t w, uint8_t *kind, int *is_fwd, const uint8_t **name,
		size_t *name_len);

/* classes.c: for each fwd weak class, the definition it stands for (before
 * the rounds); after step 4b, final_fwd. */
int classes__fwd_defs(struct merge *m);
int classes__finish_fwds(struct merge *m);

/* The class a stop edge to t counts as: a fwd that stands for a
 * definition counts as that definition while the definition's nodes
 * share one class. Inline: the refinement asks it of every stop edge of
 * every node it checks, each round. */
static inline uint32_t classes__seen(const struct merge *m, uint32_t t)
{
	const struct class_state *cs = m->cs;
	uint32_t w = m->weak[t], def = cs->weak_fwd_def[w];
	if (def != NO_CLASS && !cs->weak_split[def])
		return cs->weak_first_cls[def];
	return m->cls[t];
}

/* refine.c: gid g's stop edges (up to cap into out; returns how many it
 * has), for fwds.c during step 4; and all of them freed, once the
 * refinement is over or failed. */
uint32_t classes__stops(const struct merge *m, uint64_t g, uint32_t *out, uint32_t cap);
void refine__free_stops(struct merge *m);

#endif
