/* elf_write.c: a copy of an ELF file with a .BTF section added or replaced,
 * through libelf, with no objcopy.
 *
 * Every existing section keeps its file offset (ELF_F_LAYOUT), so program
 * headers and anything that points into the file stay valid; the new .BTF
 * bytes and a grown section name table go after the last byte the other
 * sections use (an old .BTF outside every segment gives its place up:
 * find_end()), then the section header table. With a distilled base,
 * .BTF.base is written beside .BTF the same way. The copy is written to an unnamed temporary file
 * and renamed over the target only when complete (common/outfile.c), so the
 * target is never half-written, even when it is the input itself.
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
	Elf *in, *out;
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

static int copy_phdrs(struct ew *w)
{
	for (size_t i = 0; i < w->h.phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(w->in, (int)i, &ph) || !gelf_update_phdr(w->out, (int)i, &ph))
			return diag_fail(w->d, diag_lib_errno(elf_errmsg(-1), EIO), "%s: program header %zu: %s", w->in_path, i, elf_errmsg(-1));
	}
	return 0;
}

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

/* Every section copied where it was (ELF_F_LAYOUT), the grown names and
 * the sections we write after the last byte in use. */
static int copy_sections(struct ew *w)
{
	for (size_t i = 1; i < w->h.shnum + w->nnew; i++) {
		/* elf_newscn() (elfutils 0.188) returns a half-made section, no
		 * header and no Elf, when its header's calloc fails: only its
		 * error code tells, so that is cleared before and read after. */
		(void)elf_errno();
		Elf_Scn *so = elf_newscn(w->out);
		int e = elf_errno();
		Elf_Data *dout = so && !e ? elf_newdata(so) : NULL;
		struct ew_sec *ws = written(w, i);
		GElf_Shdr sh;
		if (!dout) {
			const char *msg = elf_errmsg(e ? e : -1);
			return diag_fail(w->d, diag_lib_errno(msg, EIO), "%s: section %zu: %s", w->out_path, i, msg);
		}
		if (i < w->h.shnum) {
			int err = in_shdr(w, i, &sh);
			if (err)
				return err;
			/* A section with bytes whose data cannot be had (libelf out
			 * of memory) is an error: left without data, libelf writes
			 * it as zeros at its offset (ELF_F_LAYOUT), and the copy
			 * would lose the input's bytes with exit 0. */
			(void)elf_errno();
			Elf_Data *din = elf_rawdata(elf_getscn(w->in, i), NULL);
			if (!din && sh.sh_type != SHT_NOBITS && sh.sh_size) {
				int e = elf_errno();
				const char *msg = e ? elf_errmsg(e) : "its data cannot be read";
				return diag_fail(w->d, diag_lib_errno(msg, EIO), "%s: section %zu: %s", w->in_path, i, msg);
			}
			if (din) {
				dout->d_buf = din->d_buf;
				dout->d_size = din->d_size;
				dout->d_type = ELF_T_BYTE;
				dout->d_align = 1;
			}
			if (i == w->h.shstrndx && w->names) {
				dout->d_buf = w->names;
				dout->d_size = w->names_grown;
				sh.sh_size = w->names_grown;
				sh.sh_offset = w->end;
				w->end += sh.sh_size;
			}
		} else {
			memset(&sh, 0, sizeof(sh));
			sh.sh_name = ws->name_off;
			sh.sh_type = SHT_PROGBITS;
			sh.sh_addralign = 4;
		}
		if (ws) {
			dout->d_buf = (void *)ws->data;
			dout->d_size = ws->size;
			dout->d_type = ELF_T_BYTE;
			dout->d_align = 1;
			sh.sh_size = ws->size;
			sh.sh_offset = w->end = align_up(w->end, 4);
			w->end += ws->size;
		}
		if (!gelf_update_shdr(so, &sh))
			return diag_fail(w->d, diag_lib_errno(elf_errmsg(-1), EIO), "%s: section %zu: %s", w->out_path, i, elf_errmsg(-1));
	}
	return 0;
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
	if (fstat(fd, &st) == 0)
		of->mode = st.st_mode & 07777; /* an executable stays executable */
	w.out = elf_begin(of->fd, ELF_C_WRITE, NULL);
	if (!w.out || !gelf_newehdr(w.out, gelf_getclass(w.in)) || (w.h.phnum && !gelf_newphdr(w.out, w.h.phnum))) {
		err = diag_fail(d, diag_lib_errno(elf_errmsg(-1), EIO), "%s: cannot start the new ELF: %s", out_path, elf_errmsg(-1));
		goto out;
	}
	elf_flagelf(w.out, ELF_C_SET, ELF_F_LAYOUT);
	if ((err = copy_phdrs(&w)))
		goto out;
	if ((err = find_end(&w)) || (err = grow_names(&w)) || (err = copy_sections(&w)))
		goto out;
	GElf_Ehdr oh = w.h.eh;
	oh.e_shoff = align_up(w.end, 8);
	oh.e_shnum = (uint16_t)(w.h.shnum + w.nnew);
	errno = 0;
	if (!gelf_update_ehdr(w.out, &oh) || elf_update(w.out, ELF_C_WRITE) < 0) {
		/* libelf says only "cannot write data to file"; the write's own
		 * errno (ENOSPC on a full disk) is what the user can act on. */
		int e = errno;
		const char *m = elf_errmsg(-1);
		if (e && e != ENOMEM)
			err = diag_fail(d, e, "%s: writing the ELF failed: %s (%s)", out_path, strerror(e), m);
		else
			err = diag_fail(d, diag_lib_errno(m, EIO), "%s: writing the ELF failed: %s", out_path, m);
		goto out;
	}
	elf_end(w.out);
	w.out = NULL;
	err = outfile__prepare(of, d);
out:
	if (w.out)
		elf_end(w.out);
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
