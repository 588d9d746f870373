/* cus.h: the `.cus` per-CU record format (spec: format/CU-RECORDS.md).
 *
 * Three parts, one job each:
 *  - struct cus_cu: one CU's records in memory, the unit both the writer
 *    (dwarf-extract) and the reader (dedup-merge) work with;
 *  - cus_cu__encode()/cus_cu__decode(): a CU to and from its blob;
 *  - struct cus_writer / struct cus_file: the whole file (header, identity,
 *    blobs, index), written atomically and read with full validation.
 * A change to any byte layout here changes CUS_FORMAT_VERSION and the spec.
 */
#ifndef BTFPIPE_CUS_H
#define BTFPIPE_CUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/buf.h"
#include "../common/hash.h"
#include "../common/outfile.h"

struct diag;

#define CUS_MAGIC "BTFPCUS"	/* 8 bytes with its NUL */
#define CUS_FORMAT_VERSION 3
#define CUS_HEADER_SIZE 64
#define CUS_INDEX_ENTRY_SIZE 64
#define CUS_ADDR_SIZE 16	/* an address table entry */
#define CUS_BLOB_MAGIC "CU1"	/* 4 bytes with its NUL */

enum cus_kind {
	CUS_BASE = 1, CUS_PTR, CUS_CONST, CUS_VOLATILE, CUS_RESTRICT, CUS_ATOMIC,
	CUS_TYPEDEF, CUS_STRUCT, CUS_UNION, CUS_ENUM, CUS_ARRAY, CUS_SUBROUTINE,
	CUS_FUNC, CUS_PARAM, CUS_VAR, CUS_UNSPECIFIED, CUS_UNSUPPORTED,
	CUS_KIND_MAX = CUS_UNSUPPORTED,
};

enum cus_flag {
	CUS_F_DECL = 1u << 0,
	CUS_F_EXTERNAL = 1u << 1,
	CUS_F_ARTIFICIAL = 1u << 2,
	CUS_F_ANNOT = 1u << 3,
	CUS_F_PROTOTYPED = 1u << 4,
	CUS_F_VARARGS = 1u << 5,
	CUS_F_HAS_PC = 1u << 6,
	CUS_F_HAS_ADDR = 1u << 7,
	CUS_F_SIGNED = 1u << 8,
	CUS_F_TOPLEVEL = 1u << 9,
	CUS_F_CLASS = 1u << 10,
	CUS_F_TEMPLATE = 1u << 11,
	CUS_F_CONST_VALUE = 1u << 12,
	CUS_F_ALL = (1u << 13) - 1,
};

/* A DIE of the dwz alternate file (.gnu_debugaltlink) is named by its offset
 * in that file's .debug_info with this bit set; so is such a unit's cu_offset. */
#define CUS_ALT_BIT (1ull << 62)

/* File header flags. */
#define CUS_FILE_ET_REL 1u

/* Parameter location kinds (cus_rec.loc). */
enum cus_loc { CUS_LOC_NONE, CUS_LOC_REG, CUS_LOC_CONST, CUS_LOC_EXPR, CUS_LOC_EMPTY, CUS_LOC_PIECES,
	       CUS_LOC_STACK };
/* CUS_LOC_PIECES: an aggregate of one to two registers' size described by
 * DW_OP_pieces (true_signature reads it): loc_reg holds the register in its
 * low 16 bits (CUS_PIECE_NO_REG: none named) and, in bits 16..23, the byte
 * offset + 1 of the one piece left, or 0 when more than one is. */
/* CUS_LOC_STACK: in the caller's frame (DW_OP_fbreg), as an aggregate
 * larger than two registers is passed; loc_reg 0. */
#define CUS_PIECE_NO_REG 0xffffu
#define CUS_PIECE_REG(v) ((v) & 0xffffu)
#define CUS_PIECE_AT(v) (((v) >> 16) & 0xffu)

/* Type refs: 0 = void/absent, 2(k+1) = record k, 2e+1 = extern e. */
typedef uint32_t cus_ref;
static inline cus_ref cus_ref_local(uint32_t k) { return 2 * (k + 1); }
static inline cus_ref cus_ref_extern(uint32_t e) { return 2 * e + 1; }
static inline int cus_ref_is_extern(cus_ref r) { return r & 1; }
static inline uint32_t cus_ref_index(cus_ref r) { return (r & 1) ? r >> 1 : (r >> 1) - 1; }

struct cus_annot {
	uint32_t name, value; /* string refs */
};

/* A member, enumerator, array dimension or subroutine parameter. */
struct cus_item {
	uint32_t flags;		/* members: CUS_F_ARTIFICIAL, CUS_F_ANNOT */
	uint32_t name;
	cus_ref type;		/* members, subroutine parameters */
	uint32_t bit_size;	/* members: 0 unless a bitfield */
	uint64_t value;		/* member: bit offset; enumerator: value (two's complement
				 * when the enum is SIGNED); dimension: count + 1, 0 unknown */
	uint32_t annot_first, annot_count;
};

struct cus_rec {
	uint8_t kind;
	uint32_t flags;
	uint64_t die;		/* DIE offset relative to the CU start */
	uint32_t name, linkage;	/* string refs */
	cus_ref type, origin, spec;
	uint64_t size;		/* DW_AT_byte_size: base, ptr, struct, union, enum */
	uint64_t addr;		/* func: pc (HAS_PC); var: addr (HAS_ADDR) */
	uint32_t shndx;		/* the ELF section holding addr */
	uint32_t encoding;	/* base: DW_ATE_* */
	uint32_t bit_size, bit_offset; /* base */
	uint32_t alignment;	/* struct, union */
	uint32_t inline_kind, cc; /* func: DW_AT_inline, DW_AT_calling_convention */
	uint32_t loc, loc_reg;	/* param: enum cus_loc and register (or pieces) */
	uint32_t tag;		/* unsupported: the DWARF tag */
	/* struct/union: members; enum: enumerators; array: dimensions;
	 * subroutine: parameters; func: the number of param records after it. */
	uint32_t item_first, item_count;
	uint32_t annot_first, annot_count;
};

/* Each record kind, described once: the encoder and decoder
 * (cus_codec.c) and the JSON-lines dump (cus_json.c) are all made from
 * these tables, so none of them can disagree on a field, and a new field
 * is a line here (and the spec, and CUS_FORMAT_VERSION).
 *
 * The fixed fields of each kind, in their order in the blob after kind,
 * die delta and flags (CU-RECORDS.md, "Records"): F(field, enc), each a
 * ULEB128 of struct cus_rec's field, which enc says how to read: str (a
 * string offset, checked to start a string), ref (a record or extern
 * reference, checked), u32, u64, or a u32 that names something: ate
 * (DW_ATE_*), tag (DW_TAG_*), loc (enum cus_loc). After them come the
 * items of the kinds whose items table is not CUS_ITEMS_NONE, then the
 * address and section of a func with CUS_F_HAS_PC or a var with
 * CUS_F_HAS_ADDR, then the annotations of a record with CUS_F_ANNOT. */
#define CUS_FIELDS_BASE(F) F(name, str) F(encoding, ate) F(size, u64) F(bit_size, u32) F(bit_offset, u32)
#define CUS_FIELDS_PTR(F) F(type, ref) F(size, u64)
#define CUS_FIELDS_QUAL(F) F(type, ref)
#define CUS_FIELDS_TYPEDEF(F) F(name, str) F(type, ref)
#define CUS_FIELDS_STRUCT(F) F(name, str) F(size, u64) F(alignment, u32)
#define CUS_FIELDS_ENUM(F) F(name, str) F(size, u64) F(type, ref)
#define CUS_FIELDS_ARRAY(F) F(type, ref)
#define CUS_FIELDS_SUBROUTINE(F) F(name, str) F(type, ref)
#define CUS_FIELDS_FUNC(F) \
	F(name, str) F(linkage, str) F(type, ref) F(inline_kind, u32) F(cc, u32) F(origin, ref) F(spec, ref) \
	F(item_count, u32)
#define CUS_FIELDS_PARAM(F) F(name, str) F(type, ref) F(origin, ref) F(loc, loc) F(loc_reg, u32)
#define CUS_FIELDS_VAR(F) F(name, str) F(linkage, str) F(type, ref) F(spec, ref)
#define CUS_FIELDS_UNSPECIFIED(F) F(name, str)
#define CUS_FIELDS_UNSUPPORTED(F) F(tag, tag) F(name, str) F(type, ref)
/* Each item of a kind that has them, after the item count: F(field, enc)
 * of struct cus_item, with two encodings of their own: mflags (a member's
 * flags: CUS_F_ARTIFICIAL and CUS_F_ANNOT only; with CUS_F_ANNOT the
 * member's annotations follow its fields) and eval (an enumerator's value:
 * an SLEB128 when the enum is CUS_F_SIGNED, else a ULEB128). */
#define CUS_ITEMS_NONE(F)
#define CUS_ITEMS_MEMBER(F) F(flags, mflags) F(name, str) F(type, ref) F(value, u64) F(bit_size, u32)
#define CUS_ITEMS_ENUMERATOR(F) F(name, str) F(value, eval)
#define CUS_ITEMS_DIM(F) F(value, u64)
#define CUS_ITEMS_PARAM(F) F(type, ref)
/* K(kind, its fields, its items), for every kind. */
#define CUS_RECORD_KINDS(K) \
	K(CUS_BASE, CUS_FIELDS_BASE, CUS_ITEMS_NONE) K(CUS_PTR, CUS_FIELDS_PTR, CUS_ITEMS_NONE) \
	K(CUS_CONST, CUS_FIELDS_QUAL, CUS_ITEMS_NONE) K(CUS_VOLATILE, CUS_FIELDS_QUAL, CUS_ITEMS_NONE) \
	K(CUS_RESTRICT, CUS_FIELDS_QUAL, CUS_ITEMS_NONE) K(CUS_ATOMIC, CUS_FIELDS_QUAL, CUS_ITEMS_NONE) \
	K(CUS_TYPEDEF, CUS_FIELDS_TYPEDEF, CUS_ITEMS_NONE) K(CUS_STRUCT, CUS_FIELDS_STRUCT, CUS_ITEMS_MEMBER) \
	K(CUS_UNION, CUS_FIELDS_STRUCT, CUS_ITEMS_MEMBER) K(CUS_ENUM, CUS_FIELDS_ENUM, CUS_ITEMS_ENUMERATOR) \
	K(CUS_ARRAY, CUS_FIELDS_ARRAY, CUS_ITEMS_DIM) K(CUS_SUBROUTINE, CUS_FIELDS_SUBROUTINE, CUS_ITEMS_PARAM) \
	K(CUS_FUNC, CUS_FIELDS_FUNC, CUS_ITEMS_NONE) K(CUS_PARAM, CUS_FIELDS_PARAM, CUS_ITEMS_NONE) \
	K(CUS_VAR, CUS_FIELDS_VAR, CUS_ITEMS_NONE) K(CUS_UNSPECIFIED, CUS_FIELDS_UNSPECIFIED, CUS_ITEMS_NONE) \
	K(CUS_UNSUPPORTED, CUS_FIELDS_UNSUPPORTED, CUS_ITEMS_NONE)

/* Do records of this kind carry items in the blob (members, enumerators,
 * dimensions, parameter types)? Those whose items table has fields. A
 * func counts its param records instead. */
#define CUS_ITEM_ONE_(field, enc) +1
#define CUS_HAS_ITEMS_(kind, fields, items) \
	case kind:                           \
		return (0 items(CUS_ITEM_ONE_)) > 0;
static inline int cus_kind_has_items(unsigned kind)
{
	switch (kind) {
		CUS_RECORD_KINDS(CUS_HAS_ITEMS_)
	}
	return 0;
}
#undef CUS_HAS_ITEMS_
#undef CUS_ITEM_ONE_

/* One CU. The decoder fills `str` with a pointer into the blob (borrowed: the
 * blob must outlive the cus_cu); the encoder reads `str` whatever owns it. */
struct cus_cu {
	uint64_t cu_offset;
	uint32_t unit_type, dwarf_version, addr_size, language;
	uint32_t producer, name, comp_dir; /* string refs */
	const char *str;
	size_t str_size;
	uint64_t *externs;
	size_t nexterns, cap_externs;
	struct cus_rec *recs;
	size_t nrecs, cap_recs;
	struct cus_item *items;
	size_t nitems, cap_items;
	struct cus_annot *annots;
	size_t nannots, cap_annots;
	uint32_t head_nrecs;	/* cus_cu__decode_head(): the record count the blob
				 * declares, 0 when that is not plausible (the full
				 * decode then says what is wrong) */
	uint32_t *rec_off;	/* cus_cu__decode(): each record's offset in the blob */
	size_t cap_rec_off;
	/* cus_cu__decode(): where each address pair is in the blob (a func's
	 * pc, a var's addr), in blob order: cus_blob__content()'s addr_at. */
	uint32_t *addr_at;
	size_t naddr, cap_addr_at;
	/* The bytes cus_file__decode*() read the blob into, owned here and
	 * reused: str points into them until the next such decode or free. */
	uint8_t *blob;
	size_t cap_blob;
};

/* Zeroes the counts, keeping the arrays and their room for the next decode. */
void cus_cu__clear(struct cus_cu *cu);
void cus_cu__free(struct cus_cu *cu);

/* Append the CU's blob to out. Returns: 0 or -ENOMEM. */
int cus_cu__encode(const struct cus_cu *cu, struct buf *out);
/* The same, and for each record i with an address (HAS_PC, HAS_ADDR)
 * addr_pos[i] (nrecs entries) = the offset of its addr field in the blob;
 * other entries are left as they were. */
int cus_cu__encode_at(const struct cus_cu *cu, struct buf *out, uint32_t *addr_pos);

/* Decode and validate a blob (every ref, string and count is checked).
 * `what` names the blob in messages ("FILE: CU 3 (0x1a2b)").
 * Returns: 0, -EBADMSG with the detail in d, or -ENOMEM. */
int cus_cu__decode(struct cus_cu *cu, const uint8_t *blob, size_t size,
		   const char *what, struct diag *d);

/* A reader that decodes a blob again in part keeps every CUS_REC_STRIDE-th
 * record's offset from its first, full decode (cu->rec_off[q * STRIDE]):
 * an eighth of the memory of every offset (16 MB of a vmlinux merge's
 * peak), for at most STRIDE - 1 records decoded on the way to one. */
#define CUS_REC_STRIDE 8u

/* Decode the head and only records idx[0..n) (ascending) into
 * recs[idx[j]], reaching each from the nearest checkpoint: ckpt[q] is the
 * blob offset of record q * CUS_REC_STRIDE, from an earlier full decode
 * of the same bytes, for each q below ceil(nrecs / CUS_REC_STRIDE). The
 * other records of the nrecs hold whatever they held (stale or
 * uninitialized): read only the decoded ones (the items of records passed
 * over are decoded too, and left unused). Each record decoded and its
 * references are checked again; the blob's end is not. The die field is
 * not restored (deltas need the record before). For a reader that needs a
 * few records of a blob it decoded before. */
int cus_cu__decode_some(struct cus_cu *cu, const uint8_t *blob, size_t size, const uint32_t *idx,
			const uint32_t *ckpt, size_t n, uint32_t nrecs, const char *what, struct diag *d);

/* Decode only the head (CU fields, strings, externs), not the records; the
 * record count is peeked into head_nrecs. */
int cus_cu__decode_head(struct cus_cu *cu, const uint8_t *blob, size_t size,
			const char *what, struct diag *d);

/* A func's pc or a var's addr, and the section holding it. */
struct cus_addr {
	uint64_t addr;
	uint32_t shndx;
};

/* The blob's address-free identity (cus_normal.c; spec: "Content and
 * addresses"): its normal form's xxh3-128 into *content, and, when addrs
 * is not NULL, its n address pairs, at blob offsets addr_at[0..n) (each
 * one's uleb addr then uleb shndx, ascending), into addrs[0..n); and the
 * head's extern count into *nexterns when that is not NULL. Returns
 * 0 or -EBADMSG when a position or value does not fit the blob. */
int cus_blob__content(const uint8_t *blob, size_t size, const uint32_t *addr_at, size_t n,
		      struct key128 *content, struct cus_addr *addrs, uint32_t *nexterns);

/* A string ref as a C string ("" when 0). The ref was validated by decode. */
static inline const char *cus_str(const struct cus_cu *cu, uint32_t ref)
{
	return cu->str + ref;
}

/* The input a .cus file describes. */
struct cus_ident {
	char name[256];
	uint64_t size;
	struct key128 dwarf_hash;
	uint8_t build_id[64];
	uint32_t build_id_len;
	uint16_t e_machine;
	uint8_t ei_class, ei_data;
	uint32_t flags; /* CUS_FILE_* */
};

struct cus_index_entry {
	uint64_t blob_off;
	uint32_t blob_size;
	uint16_t language;
	uint8_t unit_type, dwarf_version;
	uint64_t cu_offset;
	struct key128 key;
	struct key128 content;	/* the normal form's xxh3-128 (cus_blob__content) */
	uint32_t addr_count;	/* its address pairs in the file's address table */
	uint32_t nexterns;	/* the blob's extern table's length */
	uint64_t addr_first;	/* reader: the first one's index there */
};

/* Writer: blobs are added in CU order; finish writes the index and header. */
struct cus_writer {
	struct outfile out;
	struct cus_ident ident;
	struct cus_index_entry *index;
	size_t count, cap;
	uint64_t pos;
	struct buf identbuf;
	struct cus_addr *addrs;	/* the address table, in CU order */
	size_t naddrs, cap_addrs;
};

int cus_writer__open(struct cus_writer *w, const char *path, const struct cus_ident *id,
		     struct diag *d);
/* The identity block written anew, once its DWARF hash is known (the
 * writer is opened before: dwarf-extract hashes the DWARF beside the
 * units). Only the hash may differ from the one cus_writer__open() got. */
int cus_writer__set_ident(struct cus_writer *w, const struct cus_ident *id, struct diag *d);
/* A CU's blob in two halves, so that the in-order part is small: place, in
 * CU order on one thread, gives it its index entry and *off, where it goes;
 * write_at writes it there, from any thread (each with its own d), in any
 * order. meta gives language, unit_type, dwarf_version, cu_offset, the
 * blob's key, key128_of(blob, size), and its content, with its addr_count
 * address pairs in addrs (cus_blob__content()), all made by the caller
 * where it made the blob. Every placed blob must be written before
 * cus_writer__finish(). */
int cus_writer__place(struct cus_writer *w, size_t size, const struct cus_index_entry *meta,
		      const struct cus_addr *addrs, uint64_t *off, struct diag *d);
int cus_writer__write_at(struct cus_writer *w, const uint8_t *blob, size_t size, uint64_t off, struct diag *d);
int cus_writer__finish(struct cus_writer *w, struct diag *d);
void cus_writer__abort(struct cus_writer *w);

/* Reader: every check of the spec is made at open; blobs are read (pread)
 * when decoded, each into the decoding cus_cu's own buffer. */
struct cus_file {
	const char *path; /* borrowed from the caller */
	int fd;
	size_t size;
	uint32_t format_version, producer_version;
	struct cus_ident ident;
	struct cus_index_entry *index;
	size_t count;
	struct cus_addr *addrs;	/* the address table: CU i's are addrs[index[i].addr_first..] */
	size_t naddrs;
};

/* Returns: 0; -EBADMSG/-EPROTO (bad or foreign file) or an I/O errno, detail in d.
 * Every blob's checksum is checked before it returns. */
int cus_file__open(struct cus_file *f, const char *path, struct diag *d);
/* The same, but the blobs' checksums are the caller's to check, each with
 * cus_file__decode_head(check = 1) before anything else of that CU is read
 * (the merge does it in parallel, with each CU's first read). */
int cus_file__open_unchecked(struct cus_file *f, const char *path, struct diag *d);
void cus_file__close(struct cus_file *f);
/* "PATH: CU i (0xOFFSET)": how every message about CU i names it. */
#define CUS_WHAT_SIZE 600
void cus_file__cu_what(const struct cus_file *f, size_t i, char what[CUS_WHAT_SIZE]);
/* Decode CU i of an open file; its content and address pairs are checked
 * against the index's and the address table's (-EBADMSG, detail in d). */
int cus_file__decode(const struct cus_file *f, size_t i, struct cus_cu *cu, struct diag *d);
/* cus_cu__decode_head() on CU i of an open file; with `check`, the blob's
 * checksum first (-EBADMSG on a mismatch, detail in d). */
int cus_file__decode_head(const struct cus_file *f, size_t i, int check, struct cus_cu *cu, struct diag *d);
/* cus_cu__decode_some() on CU i of an open file. */
int cus_file__decode_some(const struct cus_file *f, size_t i, struct cus_cu *cu, const uint32_t *idx,
			  const uint32_t *ckpt, size_t n, uint32_t nrecs, struct diag *d);

/* Print the canonical text dump (spec: "Text dump"). */
int cus_file__dump(const struct cus_file *f, FILE *out, struct diag *d);
/* Print the JSON-lines dump (spec: "JSON-lines dump"), made from the
 * tables above: every field of every record, by its name here. */
int cus_file__dump_json(const struct cus_file *f, FILE *out, struct diag *d);

const char *cus_kind_name(unsigned kind);

#endif
