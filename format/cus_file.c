/* cus_file.c: the whole `.cus` file: writing it atomically, and opening it
 * with every check the spec asks for before a single record is trusted. */
#include "cus.h"
#include "../common/diag.h"
#include "../common/mapfile.h"
#include "../common/vec.h"
#include "../common/version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void ident_encode(struct buf *b, const struct cus_ident *id)
{
	size_t nlen = strnlen(id->name, sizeof(id->name) - 1);
	buf_uleb(b, nlen);
	buf_put(b, id->name, nlen);
	buf_le64(b, id->size);
	buf_le64(b, id->dwarf_hash.lo);
	buf_le64(b, id->dwarf_hash.hi);
	buf_uleb(b, id->build_id_len);
	buf_put(b, id->build_id, id->build_id_len);
}

static int ident_decode(struct cus_ident *id, const uint8_t *p, size_t n)
{
	struct cursor c;
	cursor_init(&c, p, n);
	uint64_t nlen = cur_uleb(&c);
	const uint8_t *name = nlen < sizeof(id->name) ? cur_bytes(&c, (size_t)nlen) : NULL;
	if (!name)
		return -EBADMSG;
	if (nlen)
		memcpy(id->name, name, (size_t)nlen);
	id->name[nlen] = 0;
	id->size = cur_le64(&c);
	id->dwarf_hash.lo = cur_le64(&c);
	id->dwarf_hash.hi = cur_le64(&c);
	uint64_t blen = cur_uleb(&c);
	const uint8_t *bid = blen <= sizeof(id->build_id) ? cur_bytes(&c, (size_t)blen) : NULL;
	if (!bid || c.err || cursor_left(&c))
		return -EBADMSG;
	if (blen)
		memcpy(id->build_id, bid, (size_t)blen);
	id->build_id_len = (uint32_t)blen;
	return 0;
}

static void header_encode(uint8_t h[CUS_HEADER_SIZE], const struct cus_ident *id, uint32_t count,
			  uint64_t file_size, uint64_t ident_off, uint32_t ident_size, uint64_t index_off)
{
	memset(h, 0, CUS_HEADER_SIZE);
	memcpy(h, CUS_MAGIC, 8);
	le32_put(h + 8, CUS_FORMAT_VERSION);
	le32_put(h + 12, BTFPIPE_VERSION_CODE);
	le32_put(h + 16, id->flags);
	le32_put(h + 20, count);
	le64_put(h + 24, file_size);
	le64_put(h + 32, ident_off);
	le32_put(h + 40, ident_size);
	le16_put(h + 44, id->e_machine);
	h[46] = id->ei_class;
	h[47] = id->ei_data;
	le64_put(h + 48, index_off);
}

static void index_encode(uint8_t *p, const struct cus_index_entry *e)
{
	le64_put(p, e->blob_off);
	le32_put(p + 8, e->blob_size);
	le16_put(p + 12, e->language);
	p[14] = e->unit_type;
	p[15] = e->dwarf_version;
	le64_put(p + 16, e->cu_offset);
	le64_put(p + 24, e->key.lo);
	le64_put(p + 32, e->key.hi);
	le64_put(p + 40, e->content.lo);
	le64_put(p + 48, e->content.hi);
	le32_put(p + 56, e->addr_count);
	le32_put(p + 60, e->nexterns);
}

static void addr_encode(uint8_t *p, const struct cus_addr *a)
{
	le64_put(p, a->addr);
	le32_put(p + 8, a->shndx);
	le32_put(p + 12, 0);
}

/* The header check: xxh3-64 over header bytes 0..55, identity, address
 * table, index. */
static uint64_t header_check(const uint8_t *h, const uint8_t *ident, size_t ident_size,
			     const uint8_t *addrs, size_t addrs_size, const uint8_t *index, size_t index_size)
{
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, h, 56);
	XXH3_64bits_update(&st, ident, ident_size);
	XXH3_64bits_update(&st, addrs, addrs_size);
	XXH3_64bits_update(&st, index, index_size);
	return XXH3_64bits_digest(&st);
}

/* ---- writer ------------------------------------------------------------ */

int cus_writer__open(struct cus_writer *w, const char *path, const struct cus_ident *id,
		     struct diag *d)
{
	memset(w, 0, sizeof(*w));
	w->ident = *id;
	int err = outfile__open(&w->out, path, d);
	if (err)
		return err;
	ident_encode(&w->identbuf, id);
	if (w->identbuf.err)
		return w->identbuf.err;
	/* The header is written last, at offset 0, once the index is known. */
	w->pos = CUS_HEADER_SIZE;
	err = outfile__pwrite(&w->out, w->identbuf.data, w->identbuf.len, w->pos, d);
	w->pos += w->identbuf.len;
	return err;
}

int cus_writer__set_ident(struct cus_writer *w, const struct cus_ident *id, struct diag *d)
{
	struct buf b = { 0 };
	ident_encode(&b, id);
	int err = b.err;
	/* Only a field of fixed size may change (the DWARF hash): the blobs
	 * after the block stay where they are. */
	if (!err)
		err = VERIFY(d, b.len == w->identbuf.len, "the identity block changed size (%zu -> %zu bytes)",
			     w->identbuf.len, b.len);
	if (!err)
		err = outfile__pwrite(&w->out, b.data, b.len, CUS_HEADER_SIZE, d);
	if (err) {
		buf_free(&b);
		return err;
	}
	buf_free(&w->identbuf);
	w->identbuf = b;
	w->ident = *id;
	return 0;
}

int cus_writer__place(struct cus_writer *w, size_t size, const struct cus_index_entry *meta,
		      const struct cus_addr *addrs, uint64_t *off, struct diag *d)
{
	if (size > UINT32_MAX)
		return diag_fail(d, E2BIG, "CU at 0x%llx: records take %zu bytes, over the format's 4 GiB per CU",
				 (unsigned long long)meta->cu_offset, size);
	if (w->count >= UINT32_MAX || vec_grow(&w->index, &w->cap, w->count + 1) ||
	    vec_grow(&w->addrs, &w->cap_addrs, w->naddrs + meta->addr_count))
		return -ENOMEM;
	if (meta->addr_count)
		memcpy(w->addrs + w->naddrs, addrs, meta->addr_count * sizeof(*addrs));
	w->naddrs += meta->addr_count;
	struct cus_index_entry *e = &w->index[w->count++];
	*e = *meta;
	e->blob_off = w->pos;
	e->blob_size = (uint32_t)size;
	*off = w->pos;
	w->pos += size;
	return 0;
}

int cus_writer__write_at(struct cus_writer *w, const uint8_t *blob, size_t size, uint64_t off, struct diag *d)
{
	return outfile__pwrite(&w->out, blob, size, off, d); /* pwrite(): no state of w's changes */
}

int cus_writer__finish(struct cus_writer *w, struct diag *d)
{
	size_t isize = w->count * CUS_INDEX_ENTRY_SIZE, asize = w->naddrs * CUS_ADDR_SIZE;
	uint8_t *index = malloc(isize + asize + 1);
	if (!index)
		return -ENOMEM;
	/* The address table, then the index, one after the other. */
	uint8_t *table = index + isize;
	for (size_t i = 0; i < w->naddrs; i++)
		addr_encode(table + i * CUS_ADDR_SIZE, &w->addrs[i]);
	for (size_t i = 0; i < w->count; i++)
		index_encode(index + i * CUS_INDEX_ENTRY_SIZE, &w->index[i]);
	uint64_t table_off = w->pos, index_off = w->pos + asize;
	uint8_t h[CUS_HEADER_SIZE];
	header_encode(h, &w->ident, (uint32_t)w->count, index_off + isize, CUS_HEADER_SIZE,
		      (uint32_t)w->identbuf.len, index_off);
	le64_put(h + 56, header_check(h, w->identbuf.data, w->identbuf.len, table, asize, index, isize));
	int err = outfile__pwrite(&w->out, table, asize, table_off, d);
	if (!err)
		err = outfile__pwrite(&w->out, index, isize, index_off, d);
	if (!err)
		err = outfile__pwrite(&w->out, h, sizeof(h), 0, d);
	free(index);
	if (!err)
		err = outfile__commit(&w->out, d);
	cus_writer__abort(w);
	return err;
}

void cus_writer__abort(struct cus_writer *w)
{
	outfile__abort(&w->out);
	free(w->index);
	w->index = NULL;
	free(w->addrs);
	w->addrs = NULL;
	buf_free(&w->identbuf);
}

/* ---- reader ------------------------------------------------------------ */

void cus_file__cu_what(const struct cus_file *f, size_t i, char what[CUS_WHAT_SIZE])
{
	snprintf(what, CUS_WHAT_SIZE, "%s: CU %zu (0x%llx)", f->path, i,
		 (unsigned long long)f->index[i].cu_offset);
}

/* blob_size bytes of CU i into cu->blob (grown, owned by the cu), and
 * their checksum checked when `check`. */
static int read_blob(const struct cus_file *f, size_t i, struct cus_cu *cu, int check, struct diag *d)
{
	const struct cus_index_entry *e = &f->index[i];
	if (vec_grow(&cu->blob, &cu->cap_blob, e->blob_size))
		return -ENOMEM;
	char what[CUS_WHAT_SIZE];
	int err = inputfile_pread(f->fd, cu->blob, e->blob_size, e->blob_off);
	if (err) {
		cus_file__cu_what(f, i, what);
		return diag_fail(d, -err, "%s: cannot read its blob (offset %llu, %u bytes): %s", what,
				 (unsigned long long)e->blob_off, e->blob_size,
				 inputfile_pread_failure(err));
	}
	if (!check || key128_eq(key128_of(cu->blob, e->blob_size), e->key))
		return 0;
	cus_file__cu_what(f, i, what);
	return diag_fail(d, EBADMSG, "%s: blob checksum mismatch (blob at offset %llu, %u bytes): "
			 "the file is corrupted", what, (unsigned long long)e->blob_off, e->blob_size);
}

/* check_blobs: every blob's checksum now (cus_file__open), or left to the
 * caller, CU by CU (cus_file__open_unchecked). The header, identity and
 * index are read into memory; blobs are read with pread() when decoded, so
 * the reader's resident memory is what it decodes, whatever the page
 * cache holds of the file. */
/* Where the header puts the identity and the index. */
struct cus_layout {
	uint32_t count, ident_size;
	uint64_t ident_off, index_off;
	uint64_t table_off, naddrs;	/* the address table, before the index */
};

/* The header into h and *l: magic, version, flags, and sizes and offsets
 * that agree with the file's size. 0, or a negative errno with the detail. */
static int read_header(struct cus_file *f, uint8_t h[CUS_HEADER_SIZE], struct cus_layout *l, struct diag *d)
{
	const char *path = f->path;
	int err = inputfile_pread(f->fd, h, CUS_HEADER_SIZE, 0);
	if (err)
		return diag_fail(d, -err, "%s: cannot read the header: %s", path, inputfile_pread_failure(err));
	if (memcmp(h, CUS_MAGIC, 8))
		return diag_fail(d, EBADMSG, "%s: not a .cus file (bad magic at offset 0)", path);
	f->format_version = le32_get(h + 8);
	if (f->format_version != CUS_FORMAT_VERSION)
		return diag_fail(d, EPROTO, "%s: .cus format version %u, this btfpipe reads version %u: "
				 "extract again with this btfpipe", path, f->format_version, CUS_FORMAT_VERSION);
	f->producer_version = le32_get(h + 12);
	f->ident.flags = le32_get(h + 16);
	l->count = le32_get(h + 20);
	uint64_t fsize = le64_get(h + 24);
	l->ident_off = le64_get(h + 32);
	l->index_off = le64_get(h + 48);
	l->ident_size = le32_get(h + 40);
	f->ident.e_machine = le16_get(h + 44);
	f->ident.ei_class = h[46];
	f->ident.ei_data = h[47];
	if (fsize != f->size)
		return diag_fail(d, EBADMSG, "%s: file is %zu bytes but its header says %llu (truncated or appended to)",
				 path, f->size, (unsigned long long)fsize);
	if (f->ident.flags & ~CUS_FILE_ET_REL)
		return diag_fail(d, EBADMSG, "%s: unknown header flags 0x%x at offset 16", path, f->ident.flags);
	if (l->ident_off != CUS_HEADER_SIZE || l->ident_size > fsize - l->ident_off ||
	    l->index_off < l->ident_off + l->ident_size || l->index_off > fsize ||
	    (uint64_t)l->count * CUS_INDEX_ENTRY_SIZE != fsize - l->index_off)
		return diag_fail(d, EBADMSG, "%s: header offsets inconsistent (index at offset %llu, %u CUs)", path,
				 (unsigned long long)l->index_off, l->count);
	return 0;
}

/* The index entries into f->index: each blob right after the one before
 * it, the last one ending where the address table starts; and the address
 * table into f->addrs. */
static int decode_index(struct cus_file *f, const uint8_t *index, const uint8_t *table,
			const struct cus_layout *l, struct diag *d)
{
	f->index = calloc(l->count ? l->count : 1, sizeof(*f->index));
	f->addrs = calloc(l->naddrs ? l->naddrs : 1, sizeof(*f->addrs));
	if (!f->index || !f->addrs)
		return -ENOMEM;
	f->count = l->count;
	f->naddrs = l->naddrs;
	for (uint64_t i = 0; i < l->naddrs; i++) {
		const uint8_t *p = table + i * CUS_ADDR_SIZE;
		f->addrs[i] = (struct cus_addr){ .addr = le64_get(p), .shndx = le32_get(p + 8) };
		if (le32_get(p + 12))
			return diag_fail(d, EBADMSG, "%s: address table entry %llu (offset %llu): reserved bytes not 0",
					 f->path, (unsigned long long)i,
					 (unsigned long long)(l->table_off + i * CUS_ADDR_SIZE));
	}
	uint64_t expect = l->ident_off + l->ident_size, first = 0;
	for (uint32_t i = 0; i < l->count; i++) {
		const uint8_t *p = index + (size_t)i * CUS_INDEX_ENTRY_SIZE;
		struct cus_index_entry *e = &f->index[i];
		e->blob_off = le64_get(p);
		e->blob_size = le32_get(p + 8);
		e->language = le16_get(p + 12);
		e->unit_type = p[14];
		e->dwarf_version = p[15];
		e->cu_offset = le64_get(p + 16);
		e->key.lo = le64_get(p + 24);
		e->key.hi = le64_get(p + 32);
		e->content.lo = le64_get(p + 40);
		e->content.hi = le64_get(p + 48);
		e->addr_count = le32_get(p + 56);
		e->addr_first = first;
		first += e->addr_count;
		e->nexterns = le32_get(p + 60);
		if (e->blob_off != expect || e->blob_size > l->table_off - e->blob_off)
			return diag_fail(d, EBADMSG, "%s: CU %u: blob at offset %llu size %u is out of place",
					 f->path, i, (unsigned long long)e->blob_off, e->blob_size);
		expect += e->blob_size;
	}
	if (expect != l->table_off)
		return diag_fail(d, EBADMSG, "%s: %llu stray bytes between the last blob and the address table "
				 "at offset %llu", f->path, (unsigned long long)(l->table_off - expect),
				 (unsigned long long)l->table_off);
	return 0;
}

/* The identity and the index, read into one buffer and checked against the
 * header's checksum before either is believed. */
static int read_meta(struct cus_file *f, const uint8_t h[CUS_HEADER_SIZE], const struct cus_layout *l,
		     struct diag *d)
{
	const char *path = f->path;
	size_t isize = (size_t)l->count * CUS_INDEX_ENTRY_SIZE;
	uint8_t *meta = malloc(l->ident_size + isize + 1), *table = NULL;
	if (!meta)
		return -ENOMEM;
	uint8_t *ident = meta, *index = meta + l->ident_size;
	int err;
	if ((err = inputfile_pread(f->fd, meta, l->ident_size, l->ident_off)) ||
	    (err = inputfile_pread(f->fd, index, isize, l->index_off))) {
		free(meta);
		return diag_fail(d, -err, "%s: cannot read the identity and index: %s", path,
				 inputfile_pread_failure(err));
	}
	/* The address table's size is the sum of the index's counts: taken
	 * from the bytes before the checksum is checked, and only bounded
	 * here (by where the identity ends); the checksum then covers it. */
	struct cus_layout lt = *l;
	for (uint32_t i = 0; i < l->count; i++)
		lt.naddrs += le32_get(index + (size_t)i * CUS_INDEX_ENTRY_SIZE + 56);
	uint64_t asize = lt.naddrs * CUS_ADDR_SIZE;
	if (asize > l->index_off - (l->ident_off + l->ident_size)) {
		free(meta);
		return diag_fail(d, EBADMSG, "%s: header checksum mismatch or index corrupted: its address "
				 "counts (%llu) do not fit before the index at offset %llu", path,
				 (unsigned long long)lt.naddrs, (unsigned long long)l->index_off);
	}
	lt.table_off = l->index_off - asize;
	if (!(table = malloc(asize + 1)))
		err = -ENOMEM;
	else if ((err = inputfile_pread(f->fd, table, asize, lt.table_off)))
		err = diag_fail(d, -err, "%s: cannot read the address table: %s", path, inputfile_pread_failure(err));
	else if (header_check(h, ident, l->ident_size, table, asize, index, isize) != le64_get(h + 56))
		err = diag_fail(d, EBADMSG, "%s: header checksum mismatch: the header (offset 0), identity "
				"(offset %llu), address table (offset %llu) or index (offset %llu) is corrupted",
				path, (unsigned long long)l->ident_off, (unsigned long long)lt.table_off,
				(unsigned long long)l->index_off);
	else if (ident_decode(&f->ident, ident, l->ident_size))
		err = diag_fail(d, EBADMSG, "%s: identity block malformed at offset %llu", path,
				(unsigned long long)l->ident_off);
	else
		err = decode_index(f, index, table, &lt, d);
	free(table);
	free(meta);
	return err;
}

static int open_file(struct cus_file *f, const char *path, int check_blobs, struct diag *d)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -1;
	uint8_t h[CUS_HEADER_SIZE];
	struct cus_layout l = { 0 };
	int err = inputfile_open(path, CUS_HEADER_SIZE, ".cus header", &f->fd, &f->size, d);
	if (err)
		return err;
	if (!(err = read_header(f, h, &l, d)) && !(err = read_meta(f, h, &l, d)) && check_blobs) {
		struct cus_cu scratch = { 0 };
		for (size_t i = 0; i < f->count && !err; i++)
			err = read_blob(f, i, &scratch, 1, d);
		cus_cu__free(&scratch);
	}
	if (err)
		cus_file__close(f);
	return err;
}

int cus_file__open(struct cus_file *f, const char *path, struct diag *d)
{
	return open_file(f, path, 1, d);
}

int cus_file__open_unchecked(struct cus_file *f, const char *path, struct diag *d)
{
	return open_file(f, path, 0, d);
}

void cus_file__close(struct cus_file *f)
{
	/* A zeroed struct was never opened: its fd 0 is not ours to close. */
	if (f->path && f->fd >= 0)
		close(f->fd);
	free(f->index);
	free(f->addrs);
	f->path = NULL;
	f->fd = -1;
	f->index = NULL;
	f->addrs = NULL;
	f->count = f->naddrs = 0;
}

/* A decoded blob's content and address pairs are the index's and the
 * address table's: what a reader that trusts those without decoding (the
 * merge's memo) takes them for. */
static int check_content(const struct cus_file *f, size_t i, const struct cus_cu *cu, const char *what,
			 struct diag *d)
{
	const struct cus_index_entry *e = &f->index[i];
	if (cu->naddr != e->addr_count)
		return diag_fail(d, EBADMSG, "%s: the blob has %zu address pairs, its index entry says %u", what,
				 cu->naddr, e->addr_count);
	struct key128 content;
	if (cus_blob__content(cu->blob, e->blob_size, cu->addr_at, cu->naddr, &content, NULL, NULL) ||
	    !key128_eq(content, e->content) || cu->nexterns != e->nexterns)
		return diag_fail(d, EBADMSG, "%s: the blob's content key or extern count is not its index entry's", what);
	/* The records with an address, in record order, are the blob's pairs. */
	const struct cus_addr *a = f->addrs + e->addr_first;
	size_t k = 0;
	for (size_t r = 0; r < cu->nrecs; r++) {
		const struct cus_rec *rec = &cu->recs[r];
		if (!((rec->kind == CUS_FUNC && (rec->flags & CUS_F_HAS_PC)) ||
		      (rec->kind == CUS_VAR && (rec->flags & CUS_F_HAS_ADDR))))
			continue;
		if (k >= e->addr_count || a[k].addr != rec->addr || a[k].shndx != rec->shndx)
			return diag_fail(d, EBADMSG, "%s: record %zu's address is not the address table's "
					 "entry %llu", what, r, (unsigned long long)(e->addr_first + k));
		k++;
	}
	return 0;
}

int cus_file__decode(const struct cus_file *f, size_t i, struct cus_cu *cu, struct diag *d)
{
	const struct cus_index_entry *e = &f->index[i];
	int err = read_blob(f, i, cu, 0, d);
	if (err)
		return err;
	char what[CUS_WHAT_SIZE];
	cus_file__cu_what(f, i, what);
	err = cus_cu__decode(cu, cu->blob, e->blob_size, what, d);
	if (!err && (cu->cu_offset != e->cu_offset || cu->dwarf_version != e->dwarf_version ||
		     cu->unit_type != e->unit_type || cu->language != e->language))
		err = diag_fail(d, EBADMSG, "%s: the blob's unit fields disagree with its index entry", what);
	return err ? err : check_content(f, i, cu, what, d);
}

int cus_file__decode_head(const struct cus_file *f, size_t i, int check, struct cus_cu *cu, struct diag *d)
{
	const struct cus_index_entry *e = &f->index[i];
	int err = read_blob(f, i, cu, check, d);
	if (err)
		return err;
	char what[CUS_WHAT_SIZE];
	cus_file__cu_what(f, i, what);
	return cus_cu__decode_head(cu, cu->blob, e->blob_size, what, d);
}

int cus_file__decode_some(const struct cus_file *f, size_t i, struct cus_cu *cu, const uint32_t *idx,
			  const uint32_t *ckpt, size_t n, uint32_t nrecs, struct diag *d)
{
	const struct cus_index_entry *e = &f->index[i];
	int err = read_blob(f, i, cu, 0, d);
	if (err)
		return err;
	char what[CUS_WHAT_SIZE];
	cus_file__cu_what(f, i, what);
	return cus_cu__decode_some(cu, cu->blob, e->blob_size, idx, ckpt, n, nrecs, what, d);
}
