/* elf_write.c: a copy of an ELF file with a .BTF section added or replaced,
 * with no objcopy: libelf reads the input's headers, the bytes are ours.
 *
 * Every existing section keeps its file offset, so program headers and
 * anything that points into the file stay valid; the new .BTF bytes and a
 * grown section name table go after the last byte the other sections use
 * (an old .BTF outside every segment gives its place up: find_end()), then
 * the section header table. With a distilled base, .BTF.base is written
 * beside .BTF the same way. The copy is written to an unnamed temporary
 * file and renamed over the target only when complete (common/outfile.c),
 * so the target is never half-written, even when it is the input itself.
 *
 * The input's bytes up to that end are copied by the kernel
 * (outfile__copy_head()), not written by libelf's elf_update() from a
 * mapping of the input, which took several times as long on a vmlinux
 * (bench/README.md, "The ELF with .BTF"). The result is the file libelf
 * made with ELF_F_LAYOUT, byte for byte: what no kept section, the ELF
 * header or the program headers cover is zeros (zero_uncovered()), and the
 * headers are libelf's own translation (gelf_xlatetof()).
 */
#include "elf_write.h"
#include "diag.h"
#include "elf_head.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* A section written: .BTF, and with a distilled base .BTF.base. */
struct ew_sec {
	const char *name;
	const void *data;
	size_t size;
	size_t index;		/* the input's section of that name, or 0: a new one */
	uint32_t name_off;	/* a new one's name in the grown names */
};

/* One rewrite: the input, the output being made, and where things go. */
struct ew {
	Elf *in;
	const char *in_path, *out_path;
	struct elf_head h;	/* the input's */
	uint64_t end;		/* the end of everything the output uses so far */
	struct ew_sec sec[2];
	size_t nsec, nnew;	/* sections written, of which new */
	char *names;		/* the section names grown by the new ones, or NULL */
	size_t names_size;	/* the input's section names' size */
	size_t names_grown;	/* and the grown names' */
	struct diag *d;
};

/* Input section i's header into *sh; a failure (libelf out of memory,
 * too: errno is cleared for diag_lib_errno()) said in w->d. */
static int in_shdr(struct ew *w, size_t i, GElf_Shdr *sh)
{
	errno = 0;
	if (!gelf_getshdr(elf_getscn(w->in, i), sh))
		return diag_fail(w->d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: section %zu header unreadable: %s",
				 w->in_path, i, elf_errmsg(-1));
	return 0;
}

/* Whether input section sh, one we write again, may give its bytes up: no
 * segment holds it (not SHF_ALLOC, and no program header's file range
 * reaches into it), so nothing but its own header points at them. */
static int reusable(struct ew *w, const GElf_Shdr *sh)
{
	if (sh->sh_flags & SHF_ALLOC)
		return 0;
	for (size_t i = 0; i < w->h.phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(w->in, (int)i, &ph))
			return 0;
		if (ph.p_filesz && ph.p_offset < sh->sh_offset + sh->sh_size && sh->sh_offset < ph.p_offset + ph.p_filesz)
			return 0;
	}
	return 1;
}

/* The sections of the names we write, and the end of everything the
 * output keeps of the input. A section we write again is left out of
 * that end when it is reusable(), so its new bytes start where the next
 * free byte after the others is: when our own earlier output is the
 * input (a kernel relink runs -J again on the .ko it wrote), the new .BTF
 * lands where the old one was and the same BTF gives the same file,
 * instead of a file grown by one .BTF per run that no cache key matches. */
static int find_end(struct ew *w)
{
	w->end = w->h.eh.e_phoff + (uint64_t)w->h.phnum * w->h.eh.e_phentsize;
	for (size_t i = 1; i < w->h.shnum; i++) {
		GElf_Shdr sh;
		int err = in_shdr(w, i, &sh);
		if (err)
			return err;
		const char *name = elf_strptr(w->in, w->h.shstrndx, sh.sh_name);
		int again = 0;
		for (size_t k = 0; k < w->nsec; k++)
			if (name && !strcmp(name, w->sec[k].name)) {
				w->sec[k].index = i;
				again = 1;
			}
		if (sh.sh_type == SHT_NOBITS || (again && reusable(w, &sh)))
			continue;
		if (sh.sh_offset + sh.sh_size > w->end)
			w->end = sh.sh_offset + sh.sh_size;
	}
	for (size_t k = 0; k < w->nsec; k++)
		w->nnew += !w->sec[k].index;
	return 0;
}

/* The section name table, grown by the names of the new sections. */
static int grow_names(struct ew *w)
{
	Elf_Data *names_in = elf_getdata(elf_getscn(w->in, w->h.shstrndx), NULL);
	w->names_size = w->names_grown = names_in ? names_in->d_size : 0;
	if (!w->nnew)
		return 0;
	size_t more = 0;
	for (size_t k = 0; k < w->nsec; k++)
		more += w->sec[k].index ? 0 : strlen(w->sec[k].name) + 1;
	if (!(w->names = malloc(w->names_size + more)))
		return -ENOMEM;
	if (w->names_size)
		memcpy(w->names, names_in->d_buf, w->names_size);
	for (size_t k = 0; k < w->nsec; k++) {
		if (w->sec[k].index)
			continue;
		w->sec[k].name_off = (uint32_t)w->names_grown;
		memcpy(w->names + w->names_grown, w->sec[k].name, strlen(w->sec[k].name) + 1);
		w->names_grown += strlen(w->sec[k].name) + 1;
	}
	return 0;
}

/* The section written as input section i, or as the new one i (i >=
 * shnum): NULL when i is the input's own. */
static struct ew_sec *written(struct ew *w, size_t i)
{
	size_t nth = i >= w->h.shnum ? i - w->h.shnum : SIZE_MAX;
	for (size_t k = 0; k < w->nsec; k++) {
		if (w->sec[k].index ? w->sec[k].index == i : nth == 0)
			return &w->sec[k];
		if (!w->sec[k].index && nth != SIZE_MAX)
			nth--;
	}
	return NULL;
}

/* The output's section headers, sh[0 .. shnum + nnew): every input
 * section where it was, the grown names and the sections we write placed
 * after the last byte in use (w->end, moved past them). */
static int plan_sections(struct ew *w, GElf_Shdr *sh)
{
	memset(&sh[0], 0, sizeof(sh[0]));
	for (size_t i = 1; i < w->h.shnum + w->nnew; i++) {
		struct ew_sec *ws = written(w, i);
		if (i < w->h.shnum) {
			int err = in_shdr(w, i, &sh[i]);
			if (err)
				return err;
			if (i == w->h.shstrndx && w->names) {
				sh[i].sh_size = w->names_grown;
				sh[i].sh_offset = w->end;
				w->end += sh[i].sh_size;
			}
		} else {
			memset(&sh[i], 0, sizeof(sh[i]));
			sh[i].sh_name = ws->name_off;
			sh[i].sh_type = SHT_PROGBITS;
			sh[i].sh_addralign = 4;
		}
		if (ws) {
			sh[i].sh_size = ws->size;
			sh[i].sh_offset = w->end = align_up(w->end, 4);
			w->end += ws->size;
		}
	}
	return 0;
}

struct span {
	uint64_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Zeros over what of [0, keep) the output does not hold: the copy brought
 * the input's bytes there, libelf writes its fill (0) between what it
 * lays out. Held: the ELF header, the program headers and every input
 * section sh leaves where it was (not NOBITS; not the grown names, not
 * one we write again: plan_sections() moved those). */
static int zero_uncovered(struct ew *w, const GElf_Shdr *sh, uint64_t keep, struct outfile *of)
{
	struct span *sp = malloc((w->h.shnum + 2) * sizeof(*sp));
	size_t n = 0;
	int err = 0;
	if (!sp)
		return -ENOMEM;
	sp[n++] = (struct span){ 0, w->h.eh.e_ehsize };
	sp[n++] = (struct span){ w->h.eh.e_phoff, w->h.eh.e_phoff + (uint64_t)w->h.phnum * w->h.eh.e_phentsize };
	for (size_t i = 1; i < w->h.shnum; i++) {
		int moved = (i == w->h.shstrndx && w->names) || written(w, i);
		if (!moved && sh[i].sh_type != SHT_NOBITS && sh[i].sh_size)
			sp[n++] = (struct span){ sh[i].sh_offset, sh[i].sh_offset + sh[i].sh_size };
	}
	qsort(sp, n, sizeof(*sp), by_lo);
	static const uint8_t zeros[4096];
	uint64_t at = 0;
	for (size_t k = 0; k <= n && !err; k++) {
		uint64_t lo = k < n && sp[k].lo < keep ? sp[k].lo : keep;
		while (at < lo && !err) {
			size_t len = lo - at < sizeof(zeros) ? (size_t)(lo - at) : sizeof(zeros);
			err = outfile__pwrite(of, zeros, len, at, w->d);
			at += len;
		}
		if (k < n && sp[k].hi > at)
			at = sp[k].hi;
	}
	free(sp);
	return err;
}

/* table (n entries of type t, as the input's class has them in memory)
 * translated to the input's byte order and written at off. */
static int put_table(struct ew *w, Elf_Type t, void *table, size_t size, uint64_t off, struct outfile *of)
{
	void *file = malloc(size ? size : 1);
	if (!file)
		return -ENOMEM;
	Elf_Data src = { .d_buf = table, .d_type = t, .d_size = size, .d_version = EV_CURRENT };
	Elf_Data dst = { .d_buf = file, .d_type = t, .d_size = size, .d_version = EV_CURRENT };
	int err = gelf_xlatetof(w->in, &dst, &src, w->h.eh.e_ident[EI_DATA])
			  ? outfile__pwrite(of, file, size, off, w->d)
			  : diag_fail(w->d, diag_lib_errno(elf_errmsg(-1), EIO), "%s: %s", w->out_path, elf_errmsg(-1));
	free(file);
	return err;
}

/* The section header table at oh->e_shoff, then the ELF header oh. */
static int put_headers(struct ew *w, const GElf_Shdr *sh, size_t nsh, const GElf_Ehdr *oh, struct outfile *of)
{
	int c64 = gelf_getclass(w->in) == ELFCLASS64;
	size_t one = c64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint8_t *tab = calloc(nsh, one);
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < nsh; i++) {
		if (c64) {
			memcpy(tab + i * one, &sh[i], one); /* GElf_Shdr is Elf64_Shdr */
			continue;
		}
		Elf32_Shdr s32 = { (Elf32_Word)sh[i].sh_name, (Elf32_Word)sh[i].sh_type, (Elf32_Word)sh[i].sh_flags,
				   (Elf32_Addr)sh[i].sh_addr, (Elf32_Off)sh[i].sh_offset, (Elf32_Word)sh[i].sh_size,
				   (Elf32_Word)sh[i].sh_link, (Elf32_Word)sh[i].sh_info,
				   (Elf32_Word)sh[i].sh_addralign, (Elf32_Word)sh[i].sh_entsize };
		memcpy(tab + i * one, &s32, one);
	}
	int err = put_table(w, ELF_T_SHDR, tab, nsh * one, oh->e_shoff, of);
	free(tab);
	if (err)
		return err;
	if (c64) {
		Elf64_Ehdr e = *oh;
		return put_table(w, ELF_T_EHDR, &e, sizeof(e), 0, of);
	}
	Elf32_Ehdr e;
	memcpy(e.e_ident, oh->e_ident, EI_NIDENT);
	e.e_type = oh->e_type;
	e.e_machine = oh->e_machine;
	e.e_version = (Elf32_Word)oh->e_version;
	e.e_entry = (Elf32_Addr)oh->e_entry;
	e.e_phoff = (Elf32_Off)oh->e_phoff;
	e.e_shoff = (Elf32_Off)oh->e_shoff;
	e.e_flags = oh->e_flags;
	e.e_ehsize = oh->e_ehsize;
	e.e_phentsize = oh->e_phentsize;
	e.e_phnum = oh->e_phnum;
	e.e_shentsize = oh->e_shentsize;
	e.e_shnum = oh->e_shnum;
	e.e_shstrndx = oh->e_shstrndx;
	return put_table(w, ELF_T_EHDR, &e, sizeof(e), 0, of);
}

/* The output's bytes: the input's kept head, zeros where libelf would
 * fill, the sections we place, the section header table, the header. */
static int write_out(struct ew *w, int fd, uint64_t in_size, struct outfile *of)
{
	size_t nsh = w->h.shnum + w->nnew;
	uint64_t keep = w->end;
	GElf_Shdr *sh = calloc(nsh, sizeof(*sh));
	int err = 0;
	if (!sh)
		return -ENOMEM;
	if (keep > in_size) {
		err = diag_fail(w->d, EBADMSG, "%s: its sections or headers reach past its end (%llu bytes)",
				w->in_path, (unsigned long long)in_size);
		goto out;
	}
	if ((err = plan_sections(w, sh)) || (err = outfile__copy_head(of, fd, keep, w->d)) ||
	    (err = zero_uncovered(w, sh, keep, of)))
		goto out;
	if (w->names && (err = outfile__pwrite(of, w->names, w->names_grown, sh[w->h.shstrndx].sh_offset, w->d)))
		goto out;
	for (size_t i = 1; i < nsh && !err; i++) {
		struct ew_sec *ws = written(w, i);
		if (ws && ws->size)
			err = outfile__pwrite(of, ws->data, ws->size, sh[i].sh_offset, w->d);
	}
	if (err)
		goto out;
	GElf_Ehdr oh = w->h.eh;
	oh.e_shoff = align_up(w->end, 8);
	oh.e_shnum = (uint16_t)nsh;
	oh.e_shentsize = gelf_getclass(w->in) == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	err = put_headers(w, sh, nsh, &oh, of);
out:
	free(sh);
	return err;
}

int elf_write__btf_prepare(const char *in_path, const char *out_path, const void *btf, size_t btf_size,
			   const void *base, size_t base_size, struct outfile *of, struct diag *d)
{
	*of = (struct outfile){ .fd = -1 };
	int fd = open(in_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		return diag_fail(d, err, "%s: cannot open: %s", in_path, strerror(err));
	}
	elf_version(EV_CURRENT);
	struct ew w = { .in_path = in_path, .out_path = out_path, .d = d, .nsec = base ? 2 : 1,
			.sec = { { ".BTF", btf, btf_size, 0, 0 }, { ".BTF.base", base, base_size, 0, 0 } } };
	errno = 0; /* diag_lib_errno() below: only these calls' ENOMEM counts */
	w.in = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int err = 0;
	if ((err = elf_head_read(w.in, &w.h))) {
		err = diag_fail(d, -err, err == -ENOMEM ? "%s: reading the ELF header" : "%s: not an ELF file we can rewrite",
				in_path);
		goto out;
	}
	if (w.h.shnum + 2 >= SHN_LORESERVE) {
		err = diag_fail(d, ENOTSUP, "%s: %zu sections: writing .BTF into ELF files with more than "
				"%d sections is not supported; use a detached BTF file", in_path, w.h.shnum,
				SHN_LORESERVE - 1);
		goto out;
	}
	if ((err = outfile__open(of, out_path, d)))
		goto out;
	struct stat st;
	if (fstat(fd, &st)) {
		err = diag_fail(d, errno, "%s: %s", in_path, strerror(errno));
		goto out;
	}
	of->mode = st.st_mode & 07777; /* an executable stays executable */
	if ((err = find_end(&w)) || (err = grow_names(&w)) || (err = write_out(&w, fd, (uint64_t)st.st_size, of)))
		goto out;
	err = outfile__prepare(of, d);
out:
	if (err)
		outfile__abort(of);
	free(w.names);
	if (w.in)
		elf_end(w.in);
	close(fd);
	return err;
}

int elf_write__btf(const char *in_path, const char *out_path, const void *btf, size_t btf_size,
		   const void *base, size_t base_size, struct diag *d)
{
	struct outfile of;
	int err = elf_write__btf_prepare(in_path, out_path, btf, btf_size, base, base_size, &of, d);
	return err ? err : outfile__publish(&of, d);
}
