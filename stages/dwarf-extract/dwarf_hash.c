/* dwarf_hash.c: the input's DWARF hash, the identity block's field that
 * format/CU-RECORDS.md defines: every .debug_* section cut into pieces,
 * each piece hashed on its own, then one hash over the section names,
 * sizes and piece hashes.
 *
 * Why pieces: one xxh3 stream over a vmlinux's DWARF ran on one thread
 * before any unit could start (pread() bound; through the mapping slower
 * still). Pieces can be hashed anywhere, in any
 * order, by any thread. An uncompressed .debug_info is cut at its units, so
 * the worker that has just walked a unit hashes its bytes while they are
 * in its cache (dwarf_hash__unit()); on the vmlinux that was cheaper in CPU
 * than reading them again, and the other sections' pieces (49 MB) are pool
 * items after the units, where a worker would otherwise wait for the last
 * unit. Only the plan (which bytes make which piece) decides the value, so
 * it is the same at any -j, whichever path hashed a piece.
 *
 * Invariant: a piece's hash is written once, by the one thread that hashes
 * it, and read by dwarf_hash__digest() after every piece is done.
 */
#include "dwarf_hash.h"
#include "input.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/mapfile.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The piece size of every section but an uncompressed .debug_info. */
#define DH_PIECE ((uint64_t)1 << 20)

static int add_piece(struct dwarf_hash *h, uint32_t sec, uint64_t at, uint64_t size)
{
	if (vec_grow(&h->pieces, &h->cap_pieces, h->npieces + 1))
		return -ENOMEM;
	h->pieces[h->npieces++] = (struct dh_piece){ .sec = sec, .at = at, .size = size };
	h->secs[sec].npieces++;
	return 0;
}

/* A unit's size from its header's first `got` bytes h (in the ELF's byte
 * order), `left` bytes before the section ends; 0 when it has no
 * unit_length that fits (too few bytes, a reserved length, past the end):
 * the rest of the section is then one piece. */
static uint64_t unit_size(const uint8_t *h, size_t got, uint64_t left, int big)
{
	uint64_t len;
	size_t lsize;
	if (unit_initial_length(h, got, big, &len, &lsize) || left < lsize || len > left - lsize)
		return 0;
	return lsize + len;
}

/* .debug_info's pieces from its unit headers, read where its bytes are. */
static int plan_units(struct dwarf_hash *h, uint32_t sec, const struct input *in,
		      const uint8_t *mem, uint64_t file_off, uint64_t n, struct diag *d)
{
	int big = in->ident.ei_data == ELFDATA2MSB;
	uint64_t at = 0;
	while (at < n) {
		uint8_t head[12];
		size_t got = n - at < sizeof(head) ? (size_t)(n - at) : sizeof(head);
		if (mem) {
			memcpy(head, mem + at, got);
		} else {
			int e = inputfile_pread(in->fd, head, got, file_off + at);
			if (e)
				return diag_fail(d, -e, "%s: section .debug_info: cannot read the unit header at "
						 "0x%llx: %s", in->path, (unsigned long long)at,
						 inputfile_pread_failure(e));
		}
		uint64_t size = unit_size(head, got, n - at, big);
		if (!size)
			size = n - at;
		int err = add_piece(h, sec, at, size);
		if (err)
			return err;
		at += size;
	}
	return 0;
}

/* .debug_info's pieces from the unit list, when the input's own units (those
 * before any dwz alternate file's) lie end to end over the whole section:
 * they followed the same unit_length fields (libdw's dwarf_next_unit(), or
 * list_units_pread()), so they are the unit pieces without a header read.
 * Returns 1 when they were, 0 when not (nothing added), or -ENOMEM. */
static int units_as_pieces(struct dwarf_hash *h, uint32_t sec, const struct input *in)
{
	uint64_t at = 0, size = h->secs[sec].size;
	size_t k = 0;
	for (; k < in->nunits && !(in->units[k].offset & CUS_ALT_BIT) && at < size; k++) {
		if (in->units[k].offset != at || in->units[k].end <= at || in->units[k].end > size)
			return 0;
		at = in->units[k].end;
	}
	if (at != size || (k < in->nunits && !(in->units[k].offset & CUS_ALT_BIT)))
		return 0;
	for (size_t j = 0; j < k; j++) {
		int err = add_piece(h, sec, in->units[j].offset, in->units[j].end - in->units[j].offset);
		if (err)
			return err;
	}
	return 1;
}

/* A section's pieces: an uncompressed .debug_info's units, every other
 * section's DH_PIECE bytes at a time. */
static int plan_section(struct dwarf_hash *h, uint32_t sec, const struct input *in,
			int *units_listed, struct diag *d)
{
	struct dh_section *s = &h->secs[sec];
	s->first = h->npieces;
	*units_listed = 0;
	if (s->by_units) {
		/* The unit list is of the .debug_info libdw reads: with two
		 * sections of that name, which one is not certain here. */
		int got = s->mem || h->nby_units != 1 ? 0 : units_as_pieces(h, sec, in);
		if (got)
			return got < 0 ? got : (*units_listed = 1, 0);
		return plan_units(h, sec, in, s->mem, s->file_off, s->size, d);
	}
	for (uint64_t at = 0; at < s->size; at += DH_PIECE) {
		int err = add_piece(h, sec, at, s->size - at < DH_PIECE ? s->size - at : DH_PIECE);
		if (err)
			return err;
	}
	return 0;
}

/* A section whose bytes are not the file's is hashed at once: libelf's own
 * copy may not outlive libdw's decompression of it. */
static int hash_section_now(struct dwarf_hash *h, uint32_t sec, const struct input *in,
			    struct diag *d)
{
	int listed; /* (never: a section in memory is cut by its own headers) */
	int err = plan_section(h, sec, in, &listed, d);
	for (uint32_t k = 0; !err && k < h->secs[sec].npieces; k++)
		err = dwarf_hash__piece(h, in, h->secs[sec].first + k, NULL, 0, d);
	return err;
}

int dwarf_hash__sections(struct dwarf_hash *h, const struct input *in, struct diag *d)
{
	memset(h, 0, sizeof(*h));
	size_t shstrndx, fsize = 0, cap_s = 0;
	if (elf_getshdrstrndx(in->file_elf, &shstrndx))
		return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: no section name table: %s", in->path, elf_errmsg(-1));
	const char *raw = elf_rawfile(in->file_elf, &fsize);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(in->file_elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(in->file_elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7) || sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *data = elf_rawdata(scn, NULL);
		if (!data || (!data->d_buf && data->d_size))
			return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: section %s unreadable: %s", in->path, name,
					 elf_errmsg(-1));
		if (vec_grow(&h->secs, &cap_s, h->nsecs + 1))
			return -ENOMEM;
		struct dh_section *s = &h->secs[h->nsecs++];
		*s = (struct dh_section){ .name = name, .size = data->d_size,
					  .by_units = !strcmp(name, ".debug_info") && !(sh.sh_flags & SHF_COMPRESSED) };
		h->nby_units += s->by_units;
		/* The file's bytes are read with pread() (through the mapping they
		 * would cost a page fault per 16 pages, and RSS). */
		const char *p = data->d_buf;
		if (p && raw && p >= raw && data->d_size <= fsize && (size_t)(p - raw) <= fsize - data->d_size)
			s->file_off = (uint64_t)(p - raw);
		else
			s->mem = (const uint8_t *)p;
	}
	for (size_t k = 0; k < h->nsecs; k++) {
		int err = h->secs[k].mem ? hash_section_now(h, (uint32_t)k, in, d) : 0;
		if (err)
			return err;
	}
	return 0;
}

int dwarf_hash__plan(struct dwarf_hash *h, const struct input *in, int by_walkers, struct diag *d)
{
	int walkable = 0;
	for (size_t k = 0; k < h->nsecs; k++) {
		if (h->secs[k].mem)
			continue; /* planned and hashed by dwarf_hash__sections() */
		int listed, err = plan_section(h, (uint32_t)k, in, &listed, d);
		if (err)
			return err;
		/* Walkers hash the units through in->info_map: the file's own
		 * bytes of this one .debug_info, mapped. */
		if (listed && in->info_map && in->info_size == h->secs[k].size &&
		    in->info_map == (const uint8_t *)elf_rawfile(in->file_elf, NULL) + h->secs[k].file_off) {
			walkable++;
			h->info_first = h->secs[k].first;
			h->info_sec = (uint32_t)k;
		}
	}
	h->units_by_walkers = by_walkers && walkable == 1;
	h->todo = malloc((h->npieces + 1) * sizeof(*h->todo));
	if (!h->todo)
		return -ENOMEM;
	for (size_t k = 0; k < h->nsecs; k++) {
		const struct dh_section *s = &h->secs[k];
		if (s->mem || (h->units_by_walkers && k == h->info_sec))
			continue; /* hashed already, or by the walkers */
		for (uint32_t j = 0; j < s->npieces; j++)
			h->todo[h->ntodo++] = s->first + j;
	}
	return 0;
}

int dwarf_hash__piece(struct dwarf_hash *h, const struct input *in, size_t i, uint8_t *buf, size_t bufsize,
		      struct diag *d)
{
	struct dh_piece *p = &h->pieces[i];
	const struct dh_section *s = &h->secs[p->sec];
	XXH128_hash_t r;
	if (s->mem) {
		r = XXH3_128bits(s->mem + p->at, (size_t)p->size);
	} else {
		if (!buf || !bufsize)
			return -EINVAL;
		XXH3_state_t st;
		XXH3_128bits_reset(&st);
		for (uint64_t at = 0; at < p->size; at += bufsize) {
			size_t n = p->size - at < bufsize ? (size_t)(p->size - at) : bufsize;
			int e = inputfile_pread(in->fd, buf, n, s->file_off + p->at + at);
			if (e)
				return diag_fail(d, -e, "%s: section %s: cannot read: %s", in->path, s->name,
						 inputfile_pread_failure(e));
			XXH3_128bits_update(&st, buf, n);
		}
		r = XXH3_128bits_digest(&st);
	}
	p->h = (struct key128){ r.low64, r.high64 };
	return 0;
}

void dwarf_hash__unit(struct dwarf_hash *h, size_t unit, const uint8_t *bytes)
{
	struct dh_piece *p = &h->pieces[h->info_first + unit];
	XXH128_hash_t r = XXH3_128bits(bytes, (size_t)p->size);
	p->h = (struct key128){ r.low64, r.high64 };
}

struct key128 dwarf_hash__digest(const struct dwarf_hash *h)
{
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	for (size_t k = 0; k < h->nsecs; k++) {
		const struct dh_section *s = &h->secs[k];
		uint8_t size[8];
		le64_put(size, s->size);
		XXH3_128bits_update(&st, s->name, strlen(s->name) + 1);
		XXH3_128bits_update(&st, size, sizeof(size));
		for (uint32_t j = 0; j < s->npieces; j++) {
			uint8_t ph[16];
			le64_put(ph, h->pieces[s->first + j].h.lo);
			le64_put(ph + 8, h->pieces[s->first + j].h.hi);
			XXH3_128bits_update(&st, ph, sizeof(ph));
		}
	}
	XXH128_hash_t r = XXH3_128bits_digest(&st);
	return (struct key128){ r.low64, r.high64 };
}

void dwarf_hash__free(struct dwarf_hash *h)
{
	free(h->secs);
	free(h->pieces);
	free(h->todo);
	memset(h, 0, sizeof(*h));
}
