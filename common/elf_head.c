/* elf_head.c: see elf_head.h. */
#include "elf_head.h"
#include "diag.h"

#include <errno.h>

int elf_head_read(Elf *elf, struct elf_head *h)
{
	if (elf && elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (!elf || !gelf_getehdr(elf, &h->eh) || elf_getshdrnum(elf, &h->shnum) ||
	    elf_getphdrnum(elf, &h->phnum) || elf_getshdrstrndx(elf, &h->shstrndx))
		return -diag_lib_errno(elf_errmsg(-1), ENOEXEC);
	return 0;
}
