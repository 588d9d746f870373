/* picks.h: the picks array funcs__select() makes and types.c and funcs.c
 * read: indices into g->funcs, in name order, PICK_TRUE_SIG marking one to
 * write with its true signature. */
#ifndef BTFPIPE_EMIT_PICKS_H
#define BTFPIPE_EMIT_PICKS_H

#define PICK_TRUE_SIG 0x80000000u
#define PICK_INDEX(p) ((p) & ~PICK_TRUE_SIG)

#endif
