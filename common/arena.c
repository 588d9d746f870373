/* arena.c: see arena.h. */
#include "arena.h"

#include <stdint.h>
#include <sys/mman.h>

#define ARENA_FIRST ((size_t)64 << 10)	/* a module's whole merge fits in a few */
#define ARENA_MAX ((size_t)8 << 20)	/* four huge pages */
#define ARENA_HUGE ((size_t)2 << 20)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;			/* of the mapping, this header included */
	size_t used;			/* bytes handed out, after the header */
};

#define HDR (((sizeof(struct arena_chunk)) + 15) & ~(size_t)15)

/* A mapping of `size` bytes. From a huge page's size up it is aligned to
 * one and asked for huge pages; smaller ones are not, as touching one byte
 * of a huge page clears all 2 MB of it. */
static void *map_chunk(size_t size)
{
	if (size < ARENA_HUGE) {
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	size_t over = size + ARENA_HUGE;
	uint8_t *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uintptr_t start = ((uintptr_t)p + ARENA_HUGE - 1) & ~(ARENA_HUGE - 1);
	size_t head = start - (uintptr_t)p, tail = over - head - size;
	if (head)
		munmap(p, head);
	if (tail)
		munmap((uint8_t *)start + size, tail);
#ifdef MADV_HUGEPAGE
	madvise((void *)start, size, MADV_HUGEPAGE);
#endif
	return (void *)start;
}

void *arena_alloc(struct arena *a, size_t n)
{
	if (n > SIZE_MAX / 2 - ARENA_MAX)
		return NULL;
	n = (n + 15) & ~(size_t)15;
	struct arena_chunk *c = a->chunks;
	if (!c || c->size - HDR - c->used < n) {
		/* Each chunk twice the last, up to ARENA_MAX; a bigger piece
		 * gets a chunk of its own size. */
		size_t size = c ? c->size * 2 : ARENA_FIRST;
		if (size > ARENA_MAX)
			size = ARENA_MAX;
		if (size < n + HDR)
			size = (n + HDR + ARENA_HUGE - 1) & ~(ARENA_HUGE - 1);
		struct arena_chunk *nc = map_chunk(size);
		if (!nc)
			return NULL;
		nc->size = size;
		nc->used = 0;
		nc->next = a->chunks;
		a->chunks = c = nc;
	}
	void *p = (uint8_t *)c + HDR + c->used;
	c->used += n;
	return p;
}

void arena_free(struct arena *a)
{
	for (struct arena_chunk *c = a->chunks, *n; c; c = n) {
		n = c->next;
		munmap(c, c->size);
	}
	a->chunks = NULL;
}
