/* dwarf_hash.c: the input's DWARF hash (the identity block's, defined in
 * format/CU-RECORDS.md), hashed on every worker.
 *
 * The hash reads every .debug_* byte once: 205 MB on the cloud vmlinux,
 * 0.03-0.08 s on one thread, before any unit can start. So it is defined
 * over fixed 4 MiB pieces, each hashed on its own: the pieces can go to any
 * thread, and what is left serial is one xxh3 over 16 bytes per piece.
 * The digest depends on the bytes only, never on the thread count.
 *
 * Bytes that are the file's own are read with pread() into a buffer per
 * worker, not through the mapping: through it they cost a page fault per 16
 * pages and, to keep the whole DWARF out of the peak RSS, an madvise() to let
 * them go. Bytes that are not the file's (a copy libelf made) are hashed
 * where they are.
 */
#include "extract.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/mapfile.h"
#include "../../common/pool.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
	PIECE = 4u << 20,		/* the format's piece size: changing it changes every hash */
	READ_CHUNK = 256u << 10,	/* one pread(): L2-sized, so xxh3 reads it warm */
	PER_THREAD = 8u << 20,		/* a thread costs more than hashing less than this */
};

struct piece {
	const char *mem;	/* bytes in memory, or NULL: at `off` in the file */
	uint64_t off;
	uint32_t len;
	uint32_t sec;		/* index in hash_run.secs */
	uint8_t digest[16];	/* xxh3-128, low 64 bits first, little-endian */
	int err;		/* negative errno of reading it, 0 */
};

struct hash_sec {
	const char *name;
	uint64_t size;
	size_t first, count;	/* its pieces */
};

struct hash_run {
	int fd;
	struct piece *pieces;
	size_t npieces, cap_pieces;
	struct hash_sec *secs;
	size_t nsecs, cap_secs;
	uint8_t **bufs;		/* per worker, READ_CHUNK bytes */
};

static int hash_piece(void *ctx, unsigned worker, size_t i)
{
	struct hash_run *r = ctx;
	struct piece *p = &r->pieces[i];
	XXH128_hash_t h;
	if (p->mem) {
		h = XXH3_128bits(p->mem, p->len);
	} else {
		XXH3_state_t st;
		XXH3_128bits_reset(&st);
		for (uint32_t at = 0; at < p->len; at += READ_CHUNK) {
			uint32_t n = p->len - at < READ_CHUNK ? p->len - at : READ_CHUNK;
			if ((p->err = inputfile_pread(r->fd, r->bufs[worker], n, p->off + at)))
				return p->err;
			XXH3_128bits_update(&st, r->bufs[worker], n);
		}
		h = XXH3_128bits_digest(&st);
	}
	le64_put(p->digest, h.low64);
	le64_put(p->digest + 8, h.high64);
	return 0;
}

/* One section's pieces: its bytes are in the file at file_off, or at mem. */
static int add_section(struct hash_run *r, const char *name, const char *mem, uint64_t file_off, uint64_t size)
{
	if (vec_grow(&r->secs, &r->cap_secs, r->nsecs + 1))
		return -ENOMEM;
	struct hash_sec *s = &r->secs[r->nsecs];
	*s = (struct hash_sec){ name, size, r->npieces, 0 };
	for (uint64_t at = 0; at < size; at += PIECE) {
		if (vec_grow(&r->pieces, &r->cap_pieces, r->npieces + 1))
			return -ENOMEM;
		r->pieces[r->npieces++] = (struct piece){
			.mem = mem ? mem + at : NULL,
			.off = file_off + at,
			.len = (uint32_t)(size - at < PIECE ? size - at : PIECE),
			.sec = (uint32_t)r->nsecs,
		};
		s->count++;
	}
	r->nsecs++;
	return 0;
}

/* The sections to hash, in section-header order. */
static int list_sections(struct input *in, size_t shstrndx, struct hash_run *r, struct diag *d)
{
	size_t fsize = 0;
	const char *raw = elf_rawfile(in->elf, &fsize);
	in->raw_is_file_map = raw && mapfile_is_file_backed(raw, fsize);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(in->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(in->elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7) || sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *data = elf_rawdata(scn, NULL);
		if (!data)
			return diag_fail(d, EBADMSG, "%s: section %s unreadable: %s", in->path, name,
					 elf_errmsg(-1));
		const char *p = data->d_buf;
		int err;
		if (!p)
			err = add_section(r, name, NULL, 0, 0);
		else if (!raw || p < raw || data->d_size > fsize || (size_t)(p - raw) > fsize - data->d_size)
			err = add_section(r, name, p, 0, data->d_size); /* not the file's bytes */
		else
			err = add_section(r, name, NULL, (uint64_t)(p - raw), data->d_size);
		if (err)
			return err;
	}
	return 0;
}

int dwarf_hash(struct input *in, size_t shstrndx, unsigned workers, int exact, struct key128 *out,
	       struct diag *d)
{
	struct hash_run r = { .fd = in->fd };
	int err = list_sections(in, shstrndx, &r, d);
	uint64_t bytes = 0;
	for (size_t i = 0; i < r.npieces; i++)
		bytes += r.pieces[i].len;
	unsigned threads = pool_threads_for(workers, bytes, exact ? 0 : PER_THREAD);
	if (!err && !(r.bufs = calloc(threads, sizeof(*r.bufs))))
		err = -ENOMEM;
	for (unsigned t = 0; !err && t < threads; t++)
		if (!(r.bufs[t] = malloc(READ_CHUNK)))
			err = -ENOMEM;
	if (!err && (err = pool_ordered(threads, r.npieces, r.npieces ? r.npieces : 1, hash_piece, NULL, &r))) {
		/* The lowest piece that failed, as one thread would have met it
		 * (none when the threads did not start). */
		size_t i = 0;
		while (i < r.npieces && !r.pieces[i].err)
			i++;
		if (i < r.npieces)
			err = diag_fail(d, -r.pieces[i].err, "%s: section %s: cannot read: %s", in->path,
					r.secs[r.pieces[i].sec].name, inputfile_pread_failure(r.pieces[i].err));
	}
	if (!err) {
		XXH3_state_t st;
		XXH3_128bits_reset(&st);
		for (size_t s = 0; s < r.nsecs; s++) {
			uint8_t size[8];
			le64_put(size, r.secs[s].size);
			XXH3_128bits_update(&st, r.secs[s].name, strlen(r.secs[s].name) + 1);
			XXH3_128bits_update(&st, size, sizeof(size));
			for (size_t k = 0; k < r.secs[s].count; k++)
				XXH3_128bits_update(&st, r.pieces[r.secs[s].first + k].digest, 16);
		}
		XXH128_hash_t h = XXH3_128bits_digest(&st);
		*out = (struct key128){ h.low64, h.high64 };
	}
	for (unsigned t = 0; r.bufs && t < threads; t++)
		free(r.bufs[t]);
	free(r.bufs);
	free(r.pieces);
	free(r.secs);
	return err;
}
