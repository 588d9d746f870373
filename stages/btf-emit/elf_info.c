/* elf_info.c: what btf-emit needs from the target ELF: section names and
 * addresses (for DATASECs) and function/object symbols (to decide which
 * functions and variables exist in the binary). */
#include "elf_info.h"
#include "../../common/diag.h"
#include "../../common/elf_head.h"
#include "../../common/pool.h"
#include "../../common/strsort.h"
#include "../../common/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The symbol table is read in chunks on the pool (a vmlinux has about
 * 120,000 symbols), in three passes, so that no step but a prefix sum over
 * the chunks runs on one thread:
 *  count  each chunk counts its function and object symbols, and its
 *         symbols in .BTF_ids (the kfunc sets' candidates);
 *  fill   each fills its part of both lists at the place the counts give,
 *         in symbol table order, and its part of the sort items;
 *  gather after strsort_threads(), each range of the sorted order copies
 *         its symbols from the unsorted list.
 * The names are not copied: they point into the string table of the ELF,
 * which stays open (mapped) until elf_info__free(). */
#define SYM_CHUNK 8192

struct sym_read {
	Elf_Data *data, *xdata;		/* the symbol table and its SHN_XINDEX table */
	const char *str;		/* the string table's bytes, str_size of them */
	size_t str_size;
	int str_ends;			/* its last byte is NUL: every offset inside is a string */
	size_t n;			/* symbols, 0 (the null symbol) included */
	uint32_t btfid_sec;		/* .BTF_ids' index, 0 none */
	size_t nchunks;
	size_t *nsym, *nbtfid;		/* per chunk: counts, then (prefix sums) first places */
	struct elf_sym *unsorted, *btfid;
	struct strsort_item *order;
	struct elf_sym *sorted;
	size_t total;
};

/* The name at st_name, or NULL when it is no string of the table. */
static const char *sym_name(const struct sym_read *r, uint32_t off)
{
	if (!r->str || off >= r->str_size)
		return NULL;
	const char *s = r->str + off;
	return r->str_ends || memchr(s, 0, r->str_size - off) ? s : NULL;
}

/* Symbol i as the table has it: 0, or -1 when it is unreadable (skipped). */
static int sym_at(const struct sym_read *r, size_t i, struct elf_sym *out)
{
	GElf_Sym sym;
	Elf32_Word xndx;
	if (!gelf_getsymshndx(r->data, r->xdata, (int)i, &sym, &xndx))
		return -1;
	*out = (struct elf_sym){ sym_name(r, sym.st_name), sym.st_value, sym.st_size,
				 sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx,
				 (uint8_t)GELF_ST_TYPE(sym.st_info), (uint8_t)GELF_ST_BIND(sym.st_info) };
	return 0;
}

static int is_kept(const struct elf_sym *s)
{
	return (s->type == STT_FUNC || s->type == STT_OBJECT) && s->name && *s->name;
}

static int is_btfid(const struct sym_read *r, const struct elf_sym *s)
{
	return r->btfid_sec && s->shndx == r->btfid_sec && s->name;
}

/* pass "count" (fill 0) and pass "fill" (fill 1) of chunk k. */
static void sym_chunk(struct sym_read *r, size_t k, int fill)
{
	size_t lo = k * SYM_CHUNK, hi = lo + SYM_CHUNK < r->n ? lo + SYM_CHUNK : r->n;
	size_t at = fill ? r->nsym[k] : 0, bat = fill ? r->nbtfid[k] : 0;
	for (size_t i = lo ? lo : 1; i < hi; i++) {
		struct elf_sym s;
		if (sym_at(r, i, &s))
			continue;
		if (is_kept(&s)) {
			if (fill) {
				r->unsorted[at] = s;
				r->order[at] = (struct strsort_item){ s.name, s.value, (uint32_t)at };
			}
			at++;
		}
		if (is_btfid(r, &s)) {
			if (fill)
				r->btfid[bat] = s;
			bat++;
		}
	}
	if (!fill) {
		r->nsym[k] = at;
		r->nbtfid[k] = bat;
	}
}

static int count_chunk(void *ctx, unsigned worker, size_t k)
{
	(void)worker;
	sym_chunk(ctx, k, 0);
	return 0;
}

static int fill_chunk(void *ctx, unsigned worker, size_t k)
{
	(void)worker;
	sym_chunk(ctx, k, 1);
	return 0;
}

static int gather_chunk(void *ctx, unsigned worker, size_t k)
{
	struct sym_read *r = ctx;
	(void)worker;
	size_t lo = k * SYM_CHUNK, hi = lo + SYM_CHUNK < r->total ? lo + SYM_CHUNK : r->total;
	for (size_t i = lo; i < hi; i++)
		r->sorted[i] = r->unsorted[r->order[i].idx];
	return 0;
}

/* Counts into first places; the totals. */
static size_t prefix_sum(size_t *v, size_t n)
{
	size_t sum = 0;
	for (size_t k = 0; k < n; k++) {
		size_t c = v[k];
		v[k] = sum;
		sum += c;
	}
	return sum;
}

static void sym_read_free(struct sym_read *r)
{
	free(r->nsym);
	free(r->nbtfid);
	free(r->unsorted);
	free(r->btfid);
	free(r->order);
	free(r->sorted);
}

/* The function and object symbols, sorted by name, then value, then symbol
 * table order (qsort()'s merge sort kept equal keys in that order;
 * strsort() states it), into ei->syms; the .BTF_ids symbols, in table
 * order, into *btfid (owned by the caller). */
static int read_syms(struct elf_info *ei, struct sym_read *r, unsigned threads,
		     struct elf_sym **btfid, size_t *nbtfid)
{
	int err = -ENOMEM;
	r->nchunks = (r->n + SYM_CHUNK - 1) / SYM_CHUNK;
	if (!(r->nsym = calloc(r->nchunks, sizeof(*r->nsym))) || !(r->nbtfid = calloc(r->nchunks, sizeof(*r->nbtfid))))
		goto out;
	if ((err = pool_ordered(threads, r->nchunks, r->nchunks, count_chunk, NULL, r)))
		goto out;
	r->total = prefix_sum(r->nsym, r->nchunks);
	*nbtfid = prefix_sum(r->nbtfid, r->nchunks);
	err = -ENOMEM;
	if ((r->total && (!(r->unsorted = malloc(r->total * sizeof(*r->unsorted))) ||
			  !(r->order = malloc(r->total * sizeof(*r->order))) ||
			  !(r->sorted = malloc(r->total * sizeof(*r->sorted))))) ||
	    (*nbtfid && !(r->btfid = malloc(*nbtfid * sizeof(*r->btfid)))))
		goto out;
	if ((err = pool_ordered(threads, r->nchunks, r->nchunks, fill_chunk, NULL, r)) ||
	    (err = strsort_threads(r->order, r->total, threads)))
		goto out;
	size_t ngather = (r->total + SYM_CHUNK - 1) / SYM_CHUNK;
	if ((err = pool_ordered(threads, ngather, ngather, gather_chunk, NULL, r)))
		goto out;
	ei->syms = r->sorted;
	ei->nsyms = r->total;
	r->sorted = NULL;
	*btfid = r->btfid;
	r->btfid = NULL;
out:
	sym_read_free(r);
	return err;
}

static int cmp_kfunc(const void *a, const void *b)
{
	return strcmp(((const struct kfunc *)a)->name, ((const struct kfunc *)b)->name);
}

/* The NAME of a __BTF_ID__func__NAME__N symbol, given what follows the
 * prefix: btf_ids.h pastes "__" and a counter (digits) after the name, and
 * the name itself may hold "__" anywhere (__bpf_trap, foo___v2), so the cut
 * is at the last '_' when the one before it is '_' too, as pahole 1.32
 * cuts. Returns the name's length, 0 where there is no such cut. */
static size_t kfunc_name_len(const char *fn)
{
	const char *end = strrchr(fn, '_');
	return end && end > fn + 1 && end[-1] == '_' ? (size_t)(end - 1 - fn) : 0;
}

/* kfuncs: the __BTF_ID__func__NAME__N symbols that lie inside a
 * __BTF_ID__set8__* set whose flags have BTF_SET8_KFUNCS. A set8 is
 * { u32 cnt; u32 flags; { u32 id; u32 flags; } pairs[cnt]; }, read as words
 * in the file's byte order (elf_getdata_rawchunk converts). Its extent is
 * its symbol's size, as pahole reads it: the kernel's btf_ids.h gives the
 * set symbol a .size at BTF_SET8_END and leaves cnt 0 for resolve_btfids,
 * which runs after pahole, to fill. cnt counts only where the size is 0.
 * sym: the symbols of section sec (.BTF_ids), in symbol table order. */
static int read_kfuncs(struct elf_info *ei, Elf *elf, uint32_t sec, const struct elf_sym *sym, size_t nsym,
		       const char *path, struct diag *d)
{
	if (!sec)
		return 0;
	Elf_Scn *scn = elf_getscn(elf, sec);
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size % 4)
		return 0;
	Elf_Data *words = elf_getdata_rawchunk(elf, (int64_t)sh.sh_offset, sh.sh_size, ELF_T_WORD);
	if (!words)
		return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: .BTF_ids unreadable: %s", path, elf_errmsg(-1));
	const uint32_t *w = words->d_buf;
	size_t nw = sh.sh_size / 4, cap = 0;
	uint64_t base = ei->is_rel ? 0 : sh.sh_addr;
	/* Two passes over the symbols: the sets, then the functions inside them. */
	struct range { uint64_t lo, hi; } *sets = NULL;
	size_t nsets = 0, capsets = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nsym; i++) {
			const char *name = sym[i].name;
			if (sym[i].value < base || (sym[i].value - base) % 4)
				continue;
			size_t at = (size_t)(sym[i].value - base) / 4;
			if (!pass && !strncmp(name, "__BTF_ID__set8__", 16) && at + 2 <= nw &&
			    (w[at + 1] & BTF_SET8_KFUNCS)) {
				uint64_t hi = sym[i].size ? at + sym[i].size / 4 : at + 2 + 2 * (uint64_t)w[at];
				if (hi > nw)
					hi = nw;
				if (vec_grow(&sets, &capsets, nsets + 1)) {
					free(sets);
					return -ENOMEM;
				}
				sets[nsets++] = (struct range){ at + 2, hi };
			} else if (pass && !strncmp(name, "__BTF_ID__func__", 16)) {
				for (size_t k = 0; k < nsets; k++) {
					if (at < sets[k].lo || at >= sets[k].hi || (at - sets[k].lo) % 2)
						continue;
					const char *fn = name + 16;
					size_t len = kfunc_name_len(fn);
					if (!len)
						break;
					if (vec_grow(&ei->kfuncs, &cap, ei->nkfuncs + 1) ||
					    !(ei->kfuncs[ei->nkfuncs].name = strndup(fn, len))) {
						free(sets);
						return -ENOMEM;
					}
					ei->kfuncs[ei->nkfuncs++].flags = w[at + 1];
					break;
				}
			}
		}
	}
	free(sets);
	if (ei->nkfuncs)
		qsort(ei->kfuncs, ei->nkfuncs, sizeof(*ei->kfuncs), cmp_kfunc);
	return 0;
}

int elf_info__kfunc(const struct elf_info *ei, const char *name, uint32_t *flags)
{
	struct kfunc key = { (char *)name, 0 };
	const struct kfunc *k = ei->nkfuncs ? bsearch(&key, ei->kfuncs, ei->nkfuncs, sizeof(key), cmp_kfunc) : NULL;
	if (k)
		*flags = k->flags;
	return k != NULL;
}

int elf_info__read(struct elf_info *ei, const char *path, unsigned threads, int exact, struct diag *d)
{
	memset(ei, 0, sizeof(*ei));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int err = errno;
		return diag_fail(d, err, "%s: cannot open: %s", path, strerror(err));
	}
	elf_version(EV_CURRENT);
	errno = 0; /* diag_lib_errno() below: only these calls' ENOMEM counts */
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		ei->elf = elf;
		ei->fd = fd;
	} else {
		close(fd);
	}
	struct elf_head h;
	struct sym_read r = { 0 };
	struct elf_sym *btfid = NULL;
	size_t nbtfid = 0;
	int err = elf_head_read(elf, &h);
	if (err) {
		err = diag_fail(d, -err, err == -ENOMEM ? "%s: reading the ELF header" : "%s: not an ELF file", path);
		goto out;
	}
	size_t shnum = h.shnum, shstrndx = h.shstrndx;
	ei->is_rel = h.eh.e_type == ET_REL;
	ei->machine = h.eh.e_machine;
	ei->secs = calloc(shnum + 1, sizeof(*ei->secs));
	if (!ei->secs) {
		err = -ENOMEM;
		goto out;
	}
	ei->nsecs = shnum;
	Elf_Scn *symtab = NULL;
	GElf_Shdr symsh = { 0 };
	for (size_t i = 0; i < shnum; i++) {
		errno = 0;
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		if (!scn || !gelf_getshdr(scn, &sh)) {
			err = diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: section %zu header unreadable: %s",
					path, i, elf_errmsg(-1));
			goto out;
		}
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		ei->secs[i] = (struct elf_section){ strdup(name ? name : ""), sh.sh_addr, sh.sh_size, sh.sh_type };
		if (!ei->secs[i].name) {
			err = -ENOMEM;
			goto out;
		}
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			symsh = sh;
		}
		if (i && !r.btfid_sec && !strcmp(ei->secs[i].name, ".BTF_ids"))
			r.btfid_sec = (uint32_t)i;
	}
	if (!symtab)
		goto out; /* a stripped binary: no functions or variables to gate on */
	r.data = elf_getdata(symtab, NULL);
	r.n = r.data && symsh.sh_entsize ? symsh.sh_size / symsh.sh_entsize : 0;
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		if (scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == elf_ndxscn(symtab))
			r.xdata = elf_getdata(scn, NULL);
	}
	/* The names' table, loaded here: the workers only read it. */
	Elf_Data *str = elf_getdata(elf_getscn(elf, symsh.sh_link), NULL);
	if (str && str->d_buf && str->d_size) {
		r.str = str->d_buf;
		r.str_size = str->d_size;
		r.str_ends = !r.str[r.str_size - 1];
	}
	if (r.n > 1) {
		if (!exact)
			threads = pool_threads_for(threads, r.n, 4 * SYM_CHUNK);
		if ((err = read_syms(ei, &r, threads, &btfid, &nbtfid)))
			goto out;
	}
	err = read_kfuncs(ei, elf, r.btfid_sec, btfid, nbtfid, path, d);
out:
	free(btfid);
	if (err)
		elf_info__free(ei);
	return err;
}

void elf_info__free(struct elf_info *ei)
{
	for (size_t i = 0; i < ei->nkfuncs; i++)
		free(ei->kfuncs[i].name);
	free(ei->kfuncs);
	for (size_t i = 0; i < ei->nsecs; i++)
		free(ei->secs[i].name);
	free(ei->secs);
	free(ei->syms);
	if (ei->elf) {
		elf_end(ei->elf);
		close(ei->fd);
	}
	memset(ei, 0, sizeof(*ei));
}

size_t elf_info__lower_bound(const struct elf_info *ei, const char *name)
{
	size_t lo = 0, hi = ei ? ei->nsyms : 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(ei->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t elf_info__lower_bound_from(const struct elf_info *ei, const char *name, size_t hint)
{
	size_t n = ei ? ei->nsyms : 0;
	if (hint > n || (hint && strcmp(ei->syms[hint - 1].name, name) >= 0))
		return elf_info__lower_bound(ei, name); /* the answer is before hint */
	/* Every symbol before lo sorts before name; gallop until one does not. */
	size_t lo = hint, hi = hint, step = 1;
	while (hi < n && strcmp(ei->syms[hi].name, name) < 0) {
		lo = hi + 1;
		hi = lo + step < n ? lo + step : n;
		step *= 2;
	}
	while (lo < hi) { /* hi == n, or syms[hi] sorts at or after name */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ei->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct elf_sym *elf_info__find(const struct elf_info *ei, const char *name, size_t *count)
{
	size_t lo = elf_info__lower_bound(ei, name), n = 0;
	while (lo + n < ei->nsyms && !strcmp(ei->syms[lo + n].name, name))
		n++;
	if (count)
		*count = n;
	return n ? &ei->syms[lo] : NULL;
}
