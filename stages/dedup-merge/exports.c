/* exports.c: the offsets other CUs refer to, and what is there.
 *
 * Two per-input tables of global DIE offsets (common/offmap.h): the set
 * some CU of the input refers to across CUs (the wanted set, made from the
 * blobs' extern tables before any scan), and, filled in CU order as each
 * CU is inserted (classes.c, step 2), the record each of those offsets
 * holds (its export: gid, kind, name, type). Step 3 and the candidates
 * (cands.c) read the exports; neither table changes after step 2.
 */
#include "merge.h"
#include "../../common/offmap.h"

#include <errno.h>
#include <stdlib.h>

int offset_set__add(struct offset_set *s, uint64_t off)
{
	size_t slot;
	int err = offmap__reserve(&s->map);
	if (!err && !offmap__find(&s->map, off, &slot))
		offmap__put(&s->map, slot, off);
	return err;
}

int offset_set__has(const struct offset_set *s, uint64_t off)
{
	size_t slot;
	return offmap__find(&s->map, off, &slot);
}

void offset_set__free(struct offset_set *s)
{
	offmap__free(&s->map);
}

struct export_map {
	struct offmap map;	/* offset -> struct export */
};

struct export_map *exports__new(size_t ninputs)
{
	struct export_map *em = calloc(ninputs ? ninputs : 1, sizeof(struct export_map));
	for (size_t i = 0; em && i < (ninputs ? ninputs : 1); i++)
		em[i].map.val_size = sizeof(struct export);
	return em;
}

int exports__add(struct export_map *maps, uint32_t input, const struct export *e)
{
	struct export_map *em = &maps[input];
	size_t slot;
	int err = offmap__reserve(&em->map);
	if (!err && !offmap__find(&em->map, e->off, &slot)) {
		offmap__put(&em->map, slot, e->off);
		*(struct export *)offmap__val(&em->map, slot) = *e;
	}
	return err;
}

const struct export *exports__find(const struct export_map *maps, uint32_t input, uint64_t off)
{
	const struct export_map *em = &maps[input];
	size_t slot;
	return offmap__find(&em->map, off, &slot) ? offmap__val(&em->map, slot) : NULL;
}

void exports__free(struct export_map *maps, size_t ninputs)
{
	for (size_t i = 0; maps && i < ninputs; i++)
		offmap__free(&maps[i].map);
	free(maps);
}
