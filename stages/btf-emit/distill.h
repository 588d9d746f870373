/* distill.h: the feature distilled_base, split BTF made relocatable (distill.c). */
#ifndef BTFPIPE_EMIT_DISTILL_H
#define BTFPIPE_EMIT_DISTILL_H

#include <stddef.h>
#include <stdint.h>

struct base_view;
struct buf;
struct diag;

/* libbpf's btf__distill_base() of split (n bytes of raw split BTF over base,
 * in the host's byte order, as split__check() accepts it): the distilled
 * base into *dbase and the split BTF renumbered over it into *dsplit (both
 * raw, host order, appended to the caller's buffers). 0; -EINVAL with the
 * detail in d when split refers to a base type a distilled base cannot
 * hold (a function, variable, section or decl tag); -ENOMEM. */
int distill__split(const uint8_t *split, size_t n, const struct base_view *base, struct buf *dbase,
		   struct buf *dsplit, struct diag *d);

#endif
