/* elf_info.c: what btf-emit needs from the target ELF: section names and
 * addresses (for DATASECs) and function/object symbols (to decide which
 * functions and variables exist in the binary). */
#include "emit.h"
#include "../../common/diag.h"
#include "../../common/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->value < y->value ? -1 : x->value > y->value;
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
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int err = 0;
	size_t shnum, shstrndx, cap = 0;
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx)) {
		err = diag_fail(d, ENOEXEC, "%s: not an ELF file", path);
		goto out;
	}
	ei->is_rel = eh.e_type == ET_REL;
	ei->secs = calloc(shnum + 1, sizeof(*ei->secs));
	if (!ei->secs) {
		err = -ENOMEM;
		goto out;
	}
	ei->nsecs = shnum;
	Elf_Scn *symtab = NULL;
	GElf_Shdr symsh;
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		if (!scn || !gelf_getshdr(scn, &sh)) {
			err = diag_fail(d, EBADMSG, "%s: section %zu header unreadable", path, i);
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
	qsort(ei->syms, ei->nsyms, sizeof(*ei->syms), cmp_sym);
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
	for (size_t i = 0; i < ei->nsecs; i++)
		free(ei->secs[i].name);
	for (size_t i = 0; i < ei->nsyms; i++)
		free(ei->syms[i].name);
	free(ei->secs);
	free(ei->syms);
	memset(ei, 0, sizeof(*ei));
}

const struct elf_sym *elf_info__find(const struct elf_info *ei, const char *name, size_t *count)
{
	size_t lo = 0, hi = ei->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(ei->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t n = 0;
	while (lo + n < ei->nsyms && !strcmp(ei->syms[lo + n].name, name))
		n++;
	if (count)
		*count = n;
	return n ? &ei->syms[lo] : NULL;
}
