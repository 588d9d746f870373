/* reloc.c: an x86-64 relocatable file's (.o, .ko) debug sections relocated
 * here, with the result libdwfl gives (see extract.h reloc_open()).
 *
 * Why: libdwfl relocates through one gelf_getrela(), gelf_getsymshndx() and
 * gelf_update_rela() per relocation, serially, before any unit is read:
 * 27% of kvm.ko's extraction. Here a relocation is a load and a store.
 *
 * What libdwfl does, and so this (elfutils 0.188, libdwfl/offline.c,
 * dwfl_report_elf.c, relocate.c):
 *  - Layout: the first offline module's base is 0x10000 rounded up to
 *    0x100; each SHF_ALLOC section in index order at the end of the last,
 *    rounded up to its alignment; when a section's alignment exceeds the
 *    base's, the base is rounded up to it and the sections so far are laid
 *    out again. The addresses go into the section headers, where
 *    input.c reads them (addresses become section-relative there).
 *  - A symbol's value: st_value, plus its section's address when that
 *    section is SHF_ALLOC; SHN_ABS as is.
 *  - RELA of the simple types, S + A stored little-endian: R_X86_64_64 as
 *    8 bytes, R_X86_64_32 and _32S as 4 (truncated, unchecked).
 * Anything else (another machine, class or byte order, a section with an
 * address already, REL sections, a compressed or .zdebug section, an
 * undefined or common symbol, another relocation type, a relocation outside
 * its section, a symbol table with any doubt about it, a debug section that
 * is SHF_ALLOC or lies over headers or tables, no .debug_info of its own) is
 * left to libdwfl, whole. (Symbol 0 is S = 0, as libdwfl takes it.)
 */
#include "reloc.h"
#include "../../common/buf.h"

#include "../../common/mapfile.h"
#include "../../common/pool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OFFLINE_BASE 0x10000u	/* libdwfl's OFFLINE_REDZONE */
#define REL_MIN_ALIGN 0x100u

static int is_pow2(uint64_t a)
{
	return a && !(a & (a - 1));
}

/* libdwfl's layout of the SHF_ALLOC sections into addr (0 for the other
 * sections); 0 when it does not apply. */
static int layout(Elf *elf, size_t shnum, uint64_t *addr)
{
	uint64_t base = (OFFLINE_BASE + REL_MIN_ALIGN - 1) & ~(uint64_t)(REL_MIN_ALIGN - 1);
	uint64_t end = base;
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(elf_getscn(elf, i), &sh))
			return 0;
		addr[i] = 0;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		uint64_t align = sh.sh_addralign ? sh.sh_addralign : 1;
		if (sh.sh_addr || !is_pow2(align))
			return 0;
		uint64_t next = (end + align - 1) & ~(align - 1);
		addr[i] = next;
		if (end == base) {
			base = next; /* the first section placed: the base */
		} else if (base & (align - 1)) {
			base = end = (base + align - 1) & ~(align - 1);
			for (size_t j = 1; j <= i; j++) {
				GElf_Shdr sj;
				if (!gelf_getshdr(elf_getscn(elf, j), &sj))
					return 0;
				if (!(sj.sh_flags & SHF_ALLOC))
					continue;
				uint64_t aj = sj.sh_addralign ? sj.sh_addralign : 1;
				addr[j] = (end + aj - 1) & ~(aj - 1);
				end = addr[j] + sj.sh_size;
			}
			continue;
		}
		end = addr[i] + sh.sh_size;
	}
	return 1;
}

struct symtab {
	const Elf64_Sym *syms;
	size_t n;
	const Elf32_Word *xndx;	/* SHT_SYMTAB_SHNDX, or NULL */
	size_t nx;
	/* Per symbol, sym_value()'s answer, worked out once (a module's debug
	 * sections have ~50 relocations per symbol): val[i] when ok[i]. */
	uint64_t *val;
	uint8_t *ok;
};

/* S for relocations against symbol i; 0 when libdwfl must decide. addr is
 * layout()'s: a section's address, 0 for one that is not SHF_ALLOC (its
 * symbols are worth their st_value), so no section header is read per
 * relocation. */
static int sym_value(const struct symtab *st, size_t i, size_t shnum, const uint64_t *addr, uint64_t *out)
{
	if (i == 0) {
		*out = 0; /* STN_UNDEF: libdwfl takes 0 without reading the entry */
		return 1;
	}
	if (i >= st->n)
		return 0;
	const Elf64_Sym *s = &st->syms[i];
	size_t shndx = s->st_shndx;
	if (shndx == SHN_XINDEX) {
		if (!st->xndx || i >= st->nx)
			return 0;
		shndx = st->xndx[i];
		if (shndx == SHN_UNDEF)
			return 0;
	} else if (shndx == SHN_ABS) {
		*out = s->st_value;
		return 1;
	} else if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) {
		return 0; /* undefined, common: libdwfl looks further */
	}
	if (shndx >= shnum)
		return 0;
	*out = s->st_value + addr[shndx];
	return 1;
}

/* The symbol table, when there is no doubt which one libdwfl would use and
 * that it would use it: exactly one SHT_SYMTAB, well formed, with a
 * readable string table, and at most one SHT_SYMTAB_SHNDX, linked to it and
 * covering every symbol. */
static int read_symtab(Elf *elf, size_t shnum, struct symtab *st)
{
	size_t symi = 0, xi = 0;
	memset(st, 0, sizeof(*st));
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(elf_getscn(elf, i), &sh))
			return 0;
		if (sh.sh_type == SHT_SYMTAB) {
			if (symi)
				return 0;
			symi = i;
		} else if (sh.sh_type == SHT_SYMTAB_SHNDX) {
			if (xi)
				return 0;
			xi = i;
		}
	}
	GElf_Shdr sh;
	if (!symi || !gelf_getshdr(elf_getscn(elf, symi), &sh) || sh.sh_entsize != sizeof(Elf64_Sym) ||
	    sh.sh_link == 0 || sh.sh_link >= shnum || !elf_getdata(elf_getscn(elf, sh.sh_link), NULL))
		return 0;
	Elf_Data *d = elf_getdata(elf_getscn(elf, symi), NULL);
	if (!d || d->d_type != ELF_T_SYM)
		return 0;
	st->syms = d->d_buf;
	st->n = d->d_size / sizeof(Elf64_Sym);
	if (sh.sh_info > st->n)
		return 0;
	if (xi) {
		GElf_Shdr xs;
		Elf_Data *x = elf_getdata(elf_getscn(elf, xi), NULL);
		if (!gelf_getshdr(elf_getscn(elf, xi), &xs) || xs.sh_link != symi || !x || x->d_type != ELF_T_WORD)
			return 0;
		st->xndx = x->d_buf;
		st->nx = x->d_size / sizeof(Elf32_Word);
		if (st->nx < st->n)
			return 0;
	}
	return 1;
}

/* val[] and ok[] of every symbol, from sym_value(). Returns -ENOMEM or 0. */
static int symtab_values(struct symtab *st, size_t shnum, const uint64_t *addr)
{
	size_t n = st->n ? st->n : 1; /* symbol 0 even in an empty table */
	st->val = malloc(n * sizeof(*st->val));
	st->ok = malloc(n);
	if (!st->val || !st->ok)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		st->ok[i] = (uint8_t)sym_value(st, i, shnum, addr, &st->val[i]);
	return 0;
}

/* Do file ranges [a, a + n) and [b, b + m) share a byte? */
static int overlap(uint64_t a, uint64_t n, uint64_t b, uint64_t m)
{
	return n && m && a < b + m && b < a + n;
}

/* A target section lying over the headers, a relocation section or the
 * symbol table would change what is being read while it is written (the
 * private mapping holds them all): libdwfl refuses such files, so they
 * are its to refuse. */
static int target_overlaps(Elf *elf, size_t shnum, const GElf_Shdr *t)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return 1;
	if (overlap(t->sh_offset, t->sh_size, 0, eh.e_ehsize) ||
	    overlap(t->sh_offset, t->sh_size, eh.e_shoff, (uint64_t)shnum * eh.e_shentsize) ||
	    overlap(t->sh_offset, t->sh_size, eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize))
		return 1;
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(elf_getscn(elf, i), &sh))
			return 1;
		if ((sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL || sh.sh_type == SHT_SYMTAB ||
		     sh.sh_type == SHT_SYMTAB_SHNDX || sh.sh_type == SHT_STRTAB) &&
		    overlap(t->sh_offset, t->sh_size, sh.sh_offset, sh.sh_size))
			return 1;
	}
	return 0;
}

/* A relocation's size in bytes: 8 or 4, 0 for R_X86_64_NONE, -1 for a
 * type libdwfl must handle. */
static int rel_size(const Elf64_Rela *r)
{
	switch ((unsigned)ELF64_R_TYPE(r->r_info)) {
	case R_X86_64_NONE: return 0;
	case R_X86_64_64: return 8;
	case R_X86_64_32: case R_X86_64_32S: return 4;
	}
	return -1;
}

/* Whether relocation r, of rel_size() size > 0, is one reloc.c may apply:
 * inside its target of `target_size` bytes, on a symbol whose value is
 * known. */
static int rel_ok(const Elf64_Rela *r, int size, uint64_t target_size, const struct symtab *st)
{
	size_t sym = ELF64_R_SYM(r->r_info);
	return r->r_offset <= target_size && target_size - r->r_offset >= (uint64_t)size &&
	       sym < (st->n ? st->n : 1) && st->ok[sym];
}

/* The relocations are applied in chunks on the pool when they are sorted
 * by offset without overlap (as assemblers write them): then no two chunks
 * store to the same bytes and the result is the serial loop's at any
 * thread count. Otherwise (or on one thread) the loop runs in order. On
 * xfs.ko (730,000 relocations into 20 MB of .debug_info) the relocation was
 * most of the extraction's open phase, one thread. */
#define RELOC_CHUNK 65536u

struct apply_run {
	const Elf64_Rela *rel;
	size_t n;
	uint8_t *buf;
	size_t size;
	const struct symtab *st;
	/* per chunk, from the check: */
	uint8_t *bad;		/* a relocation libdwfl must do */
	uint8_t *unsorted;	/* offsets not increasing, or overlapping */
	uint64_t *lo, *hi;	/* the bytes it stores to: [lo, hi), lo == hi for none */
};

/* Where chunk c's relocations end (they start at c * RELOC_CHUNK). */
static size_t chunk_end(const struct apply_run *a, size_t c)
{
	return (c + 1) * RELOC_CHUNK < a->n ? (c + 1) * RELOC_CHUNK : a->n;
}

static int check_chunk(void *ctx, unsigned worker, size_t c)
{
	(void)worker;
	struct apply_run *a = ctx;
	uint64_t lo = UINT64_MAX, prev = 0;
	for (size_t k = c * RELOC_CHUNK; k < chunk_end(a, c); k++) {
		const Elf64_Rela *r = &a->rel[k];
		int size = rel_size(r);
		if (size == 0)
			continue;
		if (size < 0 || !rel_ok(r, size, a->size, a->st)) {
			a->bad[c] = 1;
			return 0;
		}
		if (lo == UINT64_MAX)
			lo = r->r_offset;
		else if (r->r_offset < prev)
			a->unsorted[c] = 1;
		prev = r->r_offset + (uint64_t)size;
	}
	a->lo[c] = lo == UINT64_MAX ? 0 : lo;
	a->hi[c] = lo == UINT64_MAX ? 0 : prev;
	return 0;
}

static void store(const struct apply_run *a, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++) {
		const Elf64_Rela *r = &a->rel[k];
		int size = rel_size(r);
		if (size <= 0)
			continue; /* R_X86_64_NONE: its symbol is not checked, nor read */
		uint64_t v = a->st->val[ELF64_R_SYM(r->r_info)] + (uint64_t)r->r_addend;
		if (size == 8)
			le64_put(a->buf + r->r_offset, v);
		else if (size == 4)
			le32_put(a->buf + r->r_offset, (uint32_t)v);
	}
}

static int apply_chunk(void *ctx, unsigned worker, size_t c)
{
	(void)worker;
	struct apply_run *a = ctx;
	/* Each store would be the first to its page, a copy-on-write fault,
	 * one trap per 4 KiB and slow on a VM: the copies are made at once. */
	if (a->hi[c] > a->lo[c])
		mapfile_will_write(a->buf + a->lo[c], a->hi[c] - a->lo[c]);
	store(a, c * RELOC_CHUNK, chunk_end(a, c));
	return 0;
}

/* One RELA section's relocations into its target's bytes (writable: the
 * Elf is a private mapping), on up to `threads` threads (at most one per
 * chunk). 1 when done, 0 when libdwfl must do the file, -ENOMEM or -EAGAIN
 * (a thread could not start). */
static int apply(Elf_Scn *rscn, Elf_Data *target, const struct symtab *st, unsigned threads,
		 unsigned *used)
{
	Elf_Data *rd = elf_getdata(rscn, NULL);
	if (!rd || rd->d_type != ELF_T_RELA)
		return 0;
	struct apply_run a = { .rel = rd->d_buf, .n = rd->d_size / sizeof(Elf64_Rela), .buf = target->d_buf,
			       .size = target->d_size, .st = st };
	if (!a.n)
		return 1;
	size_t nchunks = (a.n + RELOC_CHUNK - 1) / RELOC_CHUNK;
	if (threads <= 1 || nchunks == 1) {
		/* One pass, checking as it goes (the private mapping is thrown
		 * away when a relocation turns out to be libdwfl's). */
		mapfile_will_write(a.buf, a.size);
		for (size_t k = 0; k < a.n; k++) {
			const Elf64_Rela *r = &a.rel[k];
			int size = rel_size(r);
			if (size < 0 || (size && !rel_ok(r, size, a.size, st)))
				return 0;
			store(&a, k, k + 1);
		}
		return 1;
	}
	a.bad = calloc(nchunks, 1);
	a.unsorted = calloc(nchunks, 1);
	a.lo = calloc(nchunks, sizeof(*a.lo));
	a.hi = calloc(nchunks, sizeof(*a.hi));
	int ret = -ENOMEM;
	if (!a.bad || !a.unsorted || !a.lo || !a.hi)
		goto out;
	unsigned t = nchunks < threads ? (unsigned)nchunks : threads;
	if ((ret = pool_ordered(t, nchunks, nchunks, check_chunk, NULL, &a)))
		goto out;
	int parallel = t > 1;
	ret = 0;
	for (size_t c = 0, last = SIZE_MAX; c < nchunks; c++) {
		if (a.bad[c])
			goto out;
		parallel &= !a.unsorted[c];
		if (a.hi[c] > a.lo[c]) {
			parallel &= last == SIZE_MAX || a.hi[last] <= a.lo[c];
			last = c;
		}
	}
	if (parallel) {
		*used = t > *used ? t : *used;
		ret = pool_ordered(t, nchunks, nchunks, apply_chunk, NULL, &a);
		ret = ret ? ret : 1;
		goto out;
	}
	/* In order, on this thread: where two relocations store to the same
	 * bytes, the later one wins, as in libdwfl (t0850). */
	mapfile_will_write(a.buf, a.size);
	store(&a, 0, a.n);
	ret = 1;
out:
	free(a.bad);
	free(a.unsorted);
	free(a.lo);
	free(a.hi);
	return ret;
}

static int is_debug_name(const char *name)
{
	return name && !strncmp(name, ".debug_", 7);
}

/* Every check before anything is written; 1 when the file is ours. */
static int ours(Elf *elf, size_t shnum, size_t shstrndx)
{
	GElf_Ehdr eh;
	const uint16_t one = 1;
	if (!*(const uint8_t *)&one || !gelf_getehdr(elf, &eh) || eh.e_type != ET_REL ||
	    eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return 0;
	int has_info = 0;
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(elf_getscn(elf, i), &sh))
			return 0;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !strncmp(name, ".zdebug", 7))
			return 0;
		if (is_debug_name(name) && (sh.sh_flags & SHF_COMPRESSED))
			return 0;
		if (!strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS && sh.sh_size)
			has_info = 1;
		if (sh.sh_type == SHT_REL) {
			GElf_Shdr t;
			if (sh.sh_info < shnum && gelf_getshdr(elf_getscn(elf, sh.sh_info), &t) &&
			    is_debug_name(elf_strptr(elf, shstrndx, t.sh_name)))
				return 0;
		}
	}
	return has_info;
}

int reloc_open(int fd, unsigned threads, Elf **out, unsigned *used)
{
	*out = NULL;
	*used = 1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	size_t shnum, shstrndx;
	uint64_t *addr = NULL;
	struct symtab st = { 0 };
	int done = 0, err = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrnum(elf, &shnum) ||
	    elf_getshdrstrndx(elf, &shstrndx) || !ours(elf, shnum, shstrndx))
		goto out;
	addr = calloc(shnum + 1, sizeof(*addr));
	if (!addr) {
		elf_end(elf);
		return -ENOMEM;
	}
	if (!layout(elf, shnum, addr) || !read_symtab(elf, shnum, &st))
		goto out;
	if ((err = symtab_values(&st, shnum, addr)))
		goto out;
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh, t;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		if (sh.sh_info >= shnum) {
			if (sh.sh_size)
				goto out; /* libdwfl fails such a file */
			continue;
		}
		Elf_Scn *tscn = elf_getscn(elf, sh.sh_info);
		if (!gelf_getshdr(tscn, &t))
			goto out;
		/* libdw reads only the .debug_* sections: the others keep theirs. */
		if (!is_debug_name(elf_strptr(elf, shstrndx, t.sh_name)))
			continue;
		if ((t.sh_flags & SHF_ALLOC) || t.sh_type == SHT_NOBITS || target_overlaps(elf, shnum, &t))
			goto out; /* libdwfl relocates (or refuses) it by its name: its call */
		Elf_Data *td = elf_getdata(tscn, NULL);
		if (td && td->d_size == 0)
			continue;
		if (!td || td->d_type != ELF_T_BYTE || !td->d_buf)
			goto out;
		int got = apply(scn, td, &st, threads, used);
		if (got <= 0) {
			err = got;
			goto out;
		}
	}
	/* The addresses, where input.c reads them, as libdwfl leaves them. */
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			goto out;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		sh.sh_addr = addr[i];
		if (!gelf_update_shdr(scn, &sh))
			goto out;
	}
	done = 1;
out:
	free(addr);
	free(st.val);
	free(st.ok);
	if (!done) {
		if (elf)
			elf_end(elf);
		return err;
	}
	*out = elf;
	return 1;
}
