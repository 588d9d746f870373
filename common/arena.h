/* arena.h: a bump allocator for data that is made piece by piece and freed
 * all at once, kept out of malloc's heap.
 *
 * Why: the merge keeps every CU's stop edges from the scan to the end of the
 * refinement. As a few thousand malloc blocks they sat between the scans'
 * short-lived buffers and pinned the heap: the peak RSS grew by 40 MB and
 * the build's big arrays went to fresh pages. Here they fill large chunks of
 * their own mapping (huge pages where the kernel gives them), and
 * arena_free() unmaps them. The merge's weak table keeps its keys in one
 * too: readers on other threads rely on them never moving.
 *
 * One arena belongs to one thread at a time; nothing in it is locked.
 * Pointers it returns stay valid until arena_free(). */
#ifndef BTFPIPE_ARENA_H
#define BTFPIPE_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *chunks;	/* newest first */
};

/* Room for n bytes, 16-byte aligned, uninitialised. NULL when out of memory
 * (or n is absurd). */
void *arena_alloc(struct arena *a, size_t n);
void arena_free(struct arena *a);

#endif
