/* elf_info.c: what btf-emit needs from the target ELF: section names and
 * addresses (for DATASECs) and function/object symbols (to decide which
 * functions and variables exist in the binary). */
#include "elf_info.h"
#include "../../common/diag.h"
#include "../../common/elf_head.h"
#include "../../common/strsort.h"
#include "../../common/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The symbols by name, then value, then symbol table order (qsort()'s
 * merge sort kept equal keys in that order; strsort() states it). */
static int sort_syms(struct elf_info *ei)
{
	struct strsort_item *v = malloc(ei->nsyms * sizeof(*v));
	struct elf_sym *sorted = malloc(ei->nsyms * sizeof(*sorted));
	int err = -ENOMEM;
	if (v && sorted) {
		for (size_t i = 0; i < ei->nsyms; i++)
			v[i] = (struct strsort_item){ ei->syms[i].name, ei->syms[i].value, (uint32_t)i };
		if (!(err = strsort(v, ei->nsyms))) {
			for (size_t i = 0; i < ei->nsyms; i++)
				sorted[i] = ei->syms[v[i].idx];
			memcpy(ei->syms, sorted, ei->nsyms * sizeof(*sorted));
		}
	}
	free(v);
	free(sorted);
	return err;
}

static int cmp_kfunc(const void *a, const void *b)
{
	return strcmp(((const struct kfunc *)a)->name, ((const struct kfunc *)b)->name);
}

/* kfuncs: the __BTF_ID__func__NAME__N symbols that lie inside a
 * __BTF_ID__set8__* set whose flags have BTF_SET8_KFUNCS. A set8 is
 * { u32 cnt; u32 flags; { u32 id; u32 flags; } pairs[cnt]; }, read as words
 * in the file's byte order (elf_getdata_rawchunk converts). Its extent is
 * its symbol's size, as pahole reads it: the kernel's btf_ids.h gives the
 * set symbol a .size at BTF_SET8_END and leaves cnt 0 for resolve_btfids,
 * which runs after pahole, to fill. cnt counts only where the size is 0. */
static int read_kfuncs(struct elf_info *ei, Elf *elf, Elf_Data *symdata, Elf_Data *xdata, size_t nsym,
		       size_t strndx, const char *path, struct diag *d)
{
	uint32_t sec = 0;
	for (uint32_t i = 1; i < ei->nsecs && !sec; i++)
		if (!strcmp(ei->secs[i].name, ".BTF_ids"))
			sec = i;
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
		for (size_t i = 1; i < nsym; i++) {
			GElf_Sym sym;
			Elf32_Word xndx;
			if (!gelf_getsymshndx(symdata, xdata, (int)i, &sym, &xndx))
				continue;
			uint32_t shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
			const char *name = elf_strptr(elf, strndx, sym.st_name);
			if (shndx != sec || !name || sym.st_value < base || (sym.st_value - base) % 4)
				continue;
			size_t at = (size_t)(sym.st_value - base) / 4;
			if (!pass && !strncmp(name, "__BTF_ID__set8__", 16) && at + 2 <= nw &&
			    (w[at + 1] & BTF_SET8_KFUNCS)) {
				uint64_t hi = sym.st_size ? at + sym.st_size / 4 : at + 2 + 2 * (uint64_t)w[at];
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
					const char *fn = name + 16, *end = strstr(fn, "__");
					size_t len = end ? (size_t)(end - fn) : strlen(fn);
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

int elf_info__read(struct elf_info *ei, const char *path, struct diag *d)
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
	size_t cap = 0;
	struct elf_head h;
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
	}
	if (!symtab)
		goto out; /* a stripped binary: no functions or variables to gate on */
	Elf_Data *data = elf_getdata(symtab, NULL);
	size_t n = data && symsh.sh_entsize ? symsh.sh_size / symsh.sh_entsize : 0;
	Elf_Data *xdata = NULL;
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		if (scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == elf_ndxscn(symtab))
			xdata = elf_getdata(scn, NULL);
	}
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		Elf32_Word xndx;
		if (!gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx))
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_OBJECT)
			continue;
		const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (vec_grow(&ei->syms, &cap, ei->nsyms + 1)) {
			err = -ENOMEM;
			goto out;
		}
		uint32_t shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		ei->syms[ei->nsyms] = (struct elf_sym){ strdup(name), sym.st_value, sym.st_size, shndx,
							(uint8_t)type, (uint8_t)GELF_ST_BIND(sym.st_info) };
		if (!ei->syms[ei->nsyms++].name) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (ei->nsyms && (err = sort_syms(ei)))
		goto out;
	err = read_kfuncs(ei, elf, data, xdata, n, symsh.sh_link, path, d);
out:
	if (elf)
		elf_end(elf);
	close(fd);
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
	for (size_t i = 0; i < ei->nsyms; i++)
		free(ei->syms[i].name);
	free(ei->secs);
	free(ei->syms);
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
