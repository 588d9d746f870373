/* elf_write.c: a copy of an ELF file with a .BTF section added or replaced,
 * through libelf, with no objcopy.
 *
 * Every existing section keeps its file offset (ELF_F_LAYOUT), so program
 * headers and anything that points into the file stay valid; the new .BTF
 * bytes and a grown section name table go after the last byte in use, then
 * the section header table. The copy is written to an unnamed temporary file
 * and renamed over the target only when complete (common/outfile.c), so the
 * target is never half-written, even when it is the input itself.
 */
#include "elf_write.h"
#include "../../common/diag.h"
#include "../../common/outfile.h"

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

int elf_write__btf(const char *in_path, const char *out_path, const void *btf, size_t btf_size,
		  struct diag *d)
{
	int fd = open(in_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		return diag_fail(d, err, "%s: cannot open: %s", in_path, strerror(err));
	}
	elf_version(EV_CURRENT);
	Elf *in = elf_begin(fd, ELF_C_READ_MMAP, NULL), *out = NULL;
	struct outfile of = { .fd = -1 };
	char *names = NULL;
	int err = 0;
	GElf_Ehdr eh;
	size_t shnum, phnum, shstrndx;
	if (!in || elf_kind(in) != ELF_K_ELF || !gelf_getehdr(in, &eh) || elf_getshdrnum(in, &shnum) ||
	    elf_getphdrnum(in, &phnum) || elf_getshdrstrndx(in, &shstrndx)) {
		err = diag_fail(d, ENOEXEC, "%s: not an ELF file we can rewrite", in_path);
		goto out;
	}
	if (shnum >= SHN_LORESERVE) {
		err = diag_fail(d, ENOTSUP, "%s: %zu sections: writing .BTF into ELF files with more than "
				"%d sections is not supported; use a detached BTF file", in_path, shnum,
				SHN_LORESERVE - 1);
		goto out;
	}
	if ((err = outfile__open(&of, out_path, d)))
		goto out;
	struct stat st;
	if (fstat(fd, &st) == 0)
		of.mode = st.st_mode & 07777; /* an executable stays executable */
	out = elf_begin(of.fd, ELF_C_WRITE, NULL);
	if (!out || !gelf_newehdr(out, gelf_getclass(in)) || (phnum && !gelf_newphdr(out, phnum))) {
		err = diag_fail(d, EIO, "%s: cannot start the new ELF: %s", out_path, elf_errmsg(-1));
		goto out;
	}
	elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph)) {
			err = diag_fail(d, EIO, "%s: program header %zu: %s", in_path, i, elf_errmsg(-1));
			goto out;
		}
	}

	/* The end of everything the file already uses. */
	uint64_t end = eh.e_phoff + (uint64_t)phnum * eh.e_phentsize;
	size_t btf_index = 0;
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		gelf_getshdr(elf_getscn(in, i), &sh);
		const char *name = elf_strptr(in, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".BTF"))
			btf_index = i;
		if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > end)
			end = sh.sh_offset + sh.sh_size;
	}

	/* The section name table, grown by ".BTF" when the section is new. */
	Elf_Data *names_in = elf_getdata(elf_getscn(in, shstrndx), NULL);
	size_t names_size = names_in ? names_in->d_size : 0;
	uint32_t btf_name = 0;
	if (!btf_index) {
		names = malloc(names_size + 5);
		if (!names) {
			err = -ENOMEM;
			goto out;
		}
		if (names_size)
			memcpy(names, names_in->d_buf, names_size);
		memcpy(names + names_size, ".BTF", 5);
		btf_name = (uint32_t)names_size;
	}

	for (size_t i = 1; i < shnum + (btf_index ? 0 : 1); i++) {
		Elf_Scn *so = elf_newscn(out);
		Elf_Data *dout = so ? elf_newdata(so) : NULL;
		GElf_Shdr sh;
		if (!dout) {
			err = diag_fail(d, EIO, "%s: %s", out_path, elf_errmsg(-1));
			goto out;
		}
		if (i < shnum) {
			Elf_Scn *si = elf_getscn(in, i);
			gelf_getshdr(si, &sh);
			Elf_Data *din = elf_rawdata(si, NULL);
			if (din) {
				dout->d_buf = din->d_buf;
				dout->d_size = din->d_size;
				dout->d_type = ELF_T_BYTE;
				dout->d_align = 1;
			}
			if (i == shstrndx && names) {
				dout->d_buf = names;
				dout->d_size = names_size + 5;
				sh.sh_size = names_size + 5;
				sh.sh_offset = end;
				end += sh.sh_size;
			}
		} else {
			memset(&sh, 0, sizeof(sh));
			sh.sh_name = btf_name;
			sh.sh_type = SHT_PROGBITS;
			sh.sh_addralign = 4;
		}
		if (i == btf_index || i == shnum) {
			dout->d_buf = (void *)btf;
			dout->d_size = btf_size;
			dout->d_type = ELF_T_BYTE;
			dout->d_align = 1;
			sh.sh_size = btf_size;
			sh.sh_offset = end = align_up(end, 4);
			end += btf_size;
		}
		if (!gelf_update_shdr(so, &sh)) {
			err = diag_fail(d, EIO, "%s: section %zu: %s", out_path, i, elf_errmsg(-1));
			goto out;
		}
	}
	GElf_Ehdr oh = eh;
	oh.e_shoff = align_up(end, 8);
	oh.e_shnum = (uint16_t)(shnum + (btf_index ? 0 : 1));
	if (!gelf_update_ehdr(out, &oh) || elf_update(out, ELF_C_WRITE) < 0) {
		err = diag_fail(d, EIO, "%s: writing the ELF failed: %s", out_path, elf_errmsg(-1));
		goto out;
	}
	elf_end(out);
	out = NULL;
	err = outfile__commit(&of, d);
out:
	if (out)
		elf_end(out);
	outfile__abort(&of);
	free(names);
	if (in)
		elf_end(in);
	close(fd);
	return err;
}
