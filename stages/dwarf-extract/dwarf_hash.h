/* dwarf_hash.h: the identity block's DWARF hash, hashed in pieces (dwarf_hash.c). */
#ifndef BTFPIPE_EXTRACT_DWARF_HASH_H
#define BTFPIPE_EXTRACT_DWARF_HASH_H

#include <stddef.h>
#include <stdint.h>
#include "../../common/hash.h"

struct diag;
struct input;

/* dwarf_hash.c: the identity block's DWARF hash (format/CU-RECORDS.md),
 * made of pieces hashed anywhere. dwarf_hash__sections() lists the
 * .debug_* sections before libdw decompresses or relocates anything;
 * dwarf_hash__plan() cuts them into pieces once the units are listed; each
 * piece is then hashed by dwarf_hash__piece() or, for .debug_info's units
 * when units_by_walkers, by the worker that walked the unit
 * (dwarf_hash__unit()); dwarf_hash__digest() gives the value. All owned by
 * struct dwarf_hash; section names point into the input's section name
 * table, which outlives it. */
struct dh_section {
	const char *name;
	uint64_t size;
	uint64_t file_off;	/* where its bytes are in the file (read with pread()), */
	const uint8_t *mem;	/* or, when not NULL, in memory (hashed at once) */
	size_t first;		/* its pieces: pieces[first .. first + npieces) */
	uint32_t npieces;
	uint8_t by_units;	/* an uncompressed .debug_info: cut at its units */
};
struct dh_piece {
	uint32_t sec;
	uint64_t at, size;	/* in the section */
	struct key128 h;
};
struct dwarf_hash {
	struct dh_section *secs;
	size_t nsecs;
	struct dh_piece *pieces;
	size_t npieces, cap_pieces;
	size_t nby_units;	/* sections cut at units (one, but for odd files) */
	size_t *todo;		/* the pieces for dwarf_hash__piece(), in plan order */
	size_t ntodo;
	int units_by_walkers;	/* .debug_info's piece first + k is in->units[k], */
	size_t info_first;	/* hashed by its walker from in->info_map */
	uint32_t info_sec;
};
int dwarf_hash__sections(struct dwarf_hash *h, const struct input *in, struct diag *d);
/* by_walkers: the workers may hash the units (when the hash is not needed
 * before them). Returns 0 or -errno (detail in d). */
int dwarf_hash__plan(struct dwarf_hash *h, const struct input *in, int by_walkers, struct diag *d);
/* Piece i from its bytes, read through buf (bufsize bytes at a time; buf
 * may be NULL for a section in memory). */
int dwarf_hash__piece(struct dwarf_hash *h, const struct input *in, size_t i, uint8_t *buf, size_t bufsize,
		      struct diag *d);
/* Unit `unit`'s piece, from its bytes (units_by_walkers only). */
void dwarf_hash__unit(struct dwarf_hash *h, size_t unit, const uint8_t *bytes);
struct key128 dwarf_hash__digest(const struct dwarf_hash *h);
void dwarf_hash__free(struct dwarf_hash *h);

#endif
