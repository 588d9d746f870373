/* vec.h: the growth helpers for every dynamic array in btfpipe.
 *
 * vec_grow(&ptr, &cap, need) makes room for `need` elements of *ptr's
 * type, growing geometrically. It refuses sizes past VEC_MAX_BYTES so a corrupt
 * count in an input file cannot make us allocate without bound.
 * Pointers into the array are invalidated by a successful grow.
 */
#ifndef BTFPIPE_VEC_H
#define BTFPIPE_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define VEC_MAX_BYTES ((size_t)1 << 36) /* 64 GiB: far above any real input */

/* Returns: 0, or -ENOMEM (allocation failed or the size is past the cap). */
static inline int vec_grow_(void **ptr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	if (ncap > VEC_MAX_BYTES / elem)
		return -ENOMEM;
	void *p = realloc(*ptr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*ptr = p;
	*cap = ncap;
	return 0;
}

#define vec_grow(pp, capp, need) \
	vec_grow_((void **)(pp), (capp), (need), sizeof(**(pp)))

/* *ptr resized to exactly n elements, under the same limit: an array kept
 * parallel to one that vec_grow() grows (n: that one's new cap), or one
 * whose final count is known. Returns: 0, or -ENOMEM (then *ptr is as it
 * was). */
static inline int vec_resize_(void **ptr, size_t n, size_t elem)
{
	if (n > VEC_MAX_BYTES / elem)
		return -ENOMEM;
	void *p = realloc(*ptr, (n ? n : 1) * elem);
	if (!p)
		return -ENOMEM;
	*ptr = p;
	return 0;
}

#define vec_resize(pp, n) vec_resize_((void **)(pp), (n), sizeof(**(pp)))

#endif
