/* input.c: the ELF being extracted: its Dwarf handles, its allocated
 * sections (to turn addresses into section + offset), its identity, and the
 * list of its units.
 *
 * Threading: everything libelf/libdwfl mutates (section data, relocation,
 * decompression) happens here, on the main thread, before any worker runs.
 * Each worker then reads only through its own Dwarf handle, all built over
 * the same Elf, so the mapped file is shared and counted once in RSS; and,
 * for the DWARF hash (dwarf_hash.c), the unit it walked in info_map or
 * pieces of the file with pread(), neither of which libelf mutates.
 */
#include "input.h"
#include "inflate.h"
#include "reloc.h"
#include "../../common/pool.h"
#include "../../common/diag.h"
#include "../../common/mapfile.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int cmp_section(const void *a, const void *b)
{
	const struct section *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int collect_sections(struct input *in, struct diag *d)
{
	size_t shnum, cap = 0;
	if (elf_getshdrnum(in->elf, &shnum))
		return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: cannot read section headers: %s", in->path, elf_errmsg(-1));
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(in->elf, i);
		GElf_Shdr sh;
		if (!scn || !gelf_getshdr(scn, &sh))
			return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: section %zu header unreadable: %s", in->path, i,
					 elf_errmsg(-1));
		/* TLS NOBITS sections overlap the sections after them; TLS
		 * variables have no static address anyway. */
		if (!(sh.sh_flags & SHF_ALLOC) || !sh.sh_size ||
		    (sh.sh_type == SHT_NOBITS && (sh.sh_flags & SHF_TLS)))
			continue;
		if (vec_grow(&in->secs, &cap, in->nsecs + 1))
			return -ENOMEM;
		in->secs[in->nsecs++] = (struct section){ sh.sh_addr, sh.sh_size, (uint32_t)i };
	}
	if (in->nsecs) /* (qsort of NULL is undefined, even for 0 items) */
		qsort(in->secs, in->nsecs, sizeof(*in->secs), cmp_section);
	return 0;
}

/* The sections of an ELF whose header and name can be read, in order:
 *	for (scn_iter_begin(&it, elf); scn_iter_next(&it);) ... it.name, it.sh, it.scn
 * None when the section name table cannot be found. */
struct scn_iter {
	Elf *elf;
	size_t shstrndx;
	int ok;
	Elf_Scn *scn;
	GElf_Shdr sh;
	const char *name;
};

static void scn_iter_begin(struct scn_iter *it, Elf *elf)
{
	it->elf = elf;
	it->scn = NULL;
	it->ok = !elf_getshdrstrndx(elf, &it->shstrndx);
}

static int scn_iter_next(struct scn_iter *it)
{
	while (it->ok && (it->scn = elf_nextscn(it->elf, it->scn)))
		if (gelf_getshdr(it->scn, &it->sh) && (it->name = elf_strptr(it->elf, it->shstrndx, it->sh.sh_name)))
			return 1;
	it->ok = 0; /* at the end it stays there */
	return 0;
}

/* The DWARF sections cu_key.c reads, as libdw reads them: after the Dwarf
 * handles are open, so that libdw has decompressed them in place, and from
 * in->elf, which for ET_REL holds the relocated data (reloc.c's or
 * libdwfl's). Any doubt (a section still compressed) leaves key_ok 0:
 * nothing is cached, nothing is wrong. dws_ok says more: the sections are
 * little-endian too, as the DIE reader (die_reader.c) needs; the key reads
 * either byte order. */
static void collect_dwarf_sections(struct input *in)
{
	static const char *const names[DWS_N] = {
		[DWS_INFO] = ".debug_info", [DWS_ABBREV] = ".debug_abbrev", [DWS_STR] = ".debug_str",
		[DWS_LINE_STR] = ".debug_line_str", [DWS_STR_OFF] = ".debug_str_offsets",
		[DWS_LOCLISTS] = ".debug_loclists", [DWS_LOC] = ".debug_loc",
	};
	in->dws_ok = in->key_ok = 0;
	if (in->ident.ei_data != ELFDATA2LSB && in->ident.ei_data != ELFDATA2MSB)
		return;
	struct scn_iter it;
	for (scn_iter_begin(&it, in->elf); scn_iter_next(&it);) {
		for (int k = 0; k < DWS_N; k++) {
			if (strcmp(it.name, names[k]))
				continue;
			Elf_Data *data = it.sh.sh_type == SHT_NOBITS ? NULL : elf_getdata(it.scn, NULL);
			/* Two sections of one name (COMDAT groups in a .o): which one
			 * libdw reads is its business; the cache stays out of it. */
			if ((it.sh.sh_flags & SHF_COMPRESSED) || !data || (!data->d_buf && data->d_size) ||
			    in->dws[k].p)
				return;
			in->dws[k] = (struct dwsec){ data->d_buf, data->d_size };
		}
	}
	in->key_ok = in->dws[DWS_INFO].n && in->dws[DWS_ABBREV].n;
	in->dws_ok = in->key_ok && in->ident.ei_data == ELFDATA2LSB;
}

uint32_t input__section_of(const struct input *in, uint64_t *addr)
{
	size_t lo = 0, hi = in->nsecs;
	while (lo < hi) { /* first section with addr > *addr */
		size_t mid = (lo + hi) / 2;
		if (in->secs[mid].addr <= *addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Sections can nest or overlap; look back a little for one that holds it. */
	for (size_t k = lo, steps = 0; k > 0 && steps < 8; k--, steps++) {
		const struct section *s = &in->secs[k - 1];
		if (*addr - s->addr < s->size) {
			if (in->is_rel)
				*addr -= s->addr;
			return s->index;
		}
	}
	return 0;
}

/* The identity block: name, size, build id (the DWARF hash: dwarf_hash.c). */
static int identify(struct input *in, uint64_t size, struct diag *d)
{
	struct cus_ident *id = &in->ident;
	char *copy = strdup(in->path);
	if (!copy)
		return -ENOMEM;
	snprintf(id->name, sizeof(id->name), "%s", basename(copy));
	free(copy);
	id->size = size;

	GElf_Ehdr eh;
	if (!gelf_getehdr(in->elf, &eh))
		return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: ELF header unreadable: %s", in->path, elf_errmsg(-1));
	id->e_machine = eh.e_machine;
	id->ei_class = eh.e_ident[EI_CLASS];
	id->ei_data = eh.e_ident[EI_DATA];
	in->is_rel = eh.e_type == ET_REL;
	id->flags = in->is_rel ? CUS_FILE_ET_REL : 0;

	const void *bid;
	ssize_t blen = dwelf_elf_gnu_build_id(in->elf, &bid);
	if (blen > 0 && (size_t)blen <= sizeof(id->build_id)) {
		memcpy(id->build_id, bid, (size_t)blen);
		id->build_id_len = (uint32_t)blen;
	}

	size_t shstrndx;
	if (elf_getshdrstrndx(in->elf, &shstrndx))
		return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: no section name table: %s", in->path, elf_errmsg(-1));
	/* A truncated file keeps its section headers only if they sit early;
	 * say so plainly rather than let libdw call it "no DWARF". The bytes
	 * there are the file's, or inflate.c's copy of it (which a truncated
	 * file never gets). */
	size_t fsize = 0;
	const char *raw = elf_rawfile(in->elf, &fsize);
	size = raw ? fsize : size;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(in->elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)) {
			const char *name = elf_strptr(in->elf, shstrndx, sh.sh_name);
			return diag_fail(d, EBADMSG, "%s: truncated or corrupted ELF: section %s (index %zu) "
					 "ends at byte %llu, past the end of the file (%llu bytes)", in->path,
					 name ? name : "?", elf_ndxscn(scn),
					 (unsigned long long)(sh.sh_offset + sh.sh_size), (unsigned long long)size);
		}
	}
	in->raw_is_file_map = raw && mapfile_is_file_backed(raw, fsize);
	return 0;
}

/* ET_REL (.o, .ko): reloc.c relocates an x86-64 file's debug sections in a
 * private mapping, on up to `threads` threads (-j as given: reloc.c takes
 * one per 65536 relocations at most); for any other, libdwfl applies the
 * relocations to the debug sections of its own Elf. The workers' handles
 * are then built over that Elf. */
static int open_relocated(struct input *in, unsigned threads, int libdw_only, struct diag *d)
{
	if (!libdw_only) {
		int got = reloc_open(in->fd, threads, &in->rel_elf, &in->reloc_threads);
		if (got < 0)
			return got;
		if (got) {
			in->elf = in->rel_elf;
			return 0;
		}
	}
	int fd = dup(in->fd);
	if (fd < 0)
		return -errno;
	in->dwfl = dwfl_begin(&offline_callbacks);
	if (!in->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(in->dwfl);
	Dwfl_Module *mod = dwfl_report_offline(in->dwfl, in->ident.name, in->path, fd);
	dwfl_report_end(in->dwfl, NULL, NULL);
	Dwarf_Addr bias;
	if (!mod || !dwfl_module_getdwarf(mod, &bias))
		return diag_fail(d, diag_lib_errno(dwfl_errmsg(-1), ENODATA), "%s: no usable DWARF: %s", in->path, dwfl_errmsg(-1));
	in->elf = dwfl_module_getelf(mod, &bias);
	if (!in->elf)
		return diag_fail(d, diag_lib_errno(dwfl_errmsg(-1), EBADMSG), "%s: %s", in->path, dwfl_errmsg(-1));
	return 0;
}

/* The units of one Dwarf (the file's, or its dwz alternate file's, whose
 * offsets get CUS_ALT_BIT), appended to in->units. */
static int list_units_of(struct input *in, Dwarf *dw, uint64_t bit, size_t *cap, struct diag *d)
{
	Dwarf_Half version;
	uint8_t ut;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	int res;
	while ((res = dwarf_get_units(dw, cu, &cu, &version, &ut, &cudie, &subdie)) == 0) {
		uint64_t uoff = dwarf_dieoffset(&cudie) - dwarf_cuoffset(&cudie);
		if (ut == DW_UT_type)
			return diag_fail(d, ENOTSUP, "%s: unit at 0x%llx is a DWARF 5 type unit "
					 "(-fdebug-types-section): type units are not supported yet; build "
					 "without -fdebug-types-section", in->path, (unsigned long long)uoff);
		if (ut == DW_UT_skeleton || ut == DW_UT_split_compile || ut == DW_UT_split_type)
			return diag_fail(d, ENOTSUP, "%s: unit at 0x%llx is a split-DWARF skeleton "
					 "(-gsplit-dwarf): its types live in a .dwo file, which btfpipe "
					 "does not read; build without -gsplit-dwarf",
					 in->path, (unsigned long long)uoff);
		if (vec_grow(&in->units, cap, in->nunits + 1))
			return -ENOMEM;
		Dwarf_Off next;
		size_t hsize;
		uint64_t end = dwarf_next_unit(dw, uoff, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) == 0
				       ? next : uoff;
		in->units[in->nunits++] = (struct unit){ uoff | bit, end, ut, (uint8_t)version };
	}
	if (res < 0)
		return diag_fail(d, diag_lib_errno(dwarf_errmsg(-1), EBADMSG), "%s: %s.debug_info unreadable after %zu units: %s", in->path,
				 bit ? "the dwz alternate file's " : "", in->nunits, dwarf_errmsg(-1));
	return 0;
}

/* The file's units from their headers, read with pread(), when .debug_info
 * is the file's own bytes (info_map). Through libdw, listing them touched
 * every unit header in the mapping: a page fault per unit, on one thread
 * before any worker started (and the workers fault the pages in again when
 * they read the units). Returns 1
 * when listed; 0 when a header is anything but a DWARF 5 compile or partial
 * unit inside the section, or libdw reads another .debug_info (then libdw
 * lists them, and says what is wrong, as before); or -ENOMEM. */
static int list_units_pread(struct input *in, size_t *cap)
{
	size_t fsize;
	const char *raw = elf_rawfile(in->file_elf, &fsize);
	if (!in->info_map || !raw || (const char *)in->info_map < raw || in->ident.ei_data != ELFDATA2LSB)
		return 0;
	uint64_t file_off = (uint64_t)((const char *)in->info_map - raw), at = 0, n = in->info_size;
	uint64_t die0 = 0; /* the first unit's DIE, past its header */
	while (at < n) {
		uint8_t h[16];
		size_t got = n - at < sizeof(h) ? (size_t)(n - at) : sizeof(h);
		if (got < 8 || inputfile_pread(in->fd, h, got, file_off + at))
			break;
		uint64_t len;
		size_t lsize;
		if (unit_initial_length(h, got, 0, &len, &lsize) || got < lsize + 4)
			break; /* (and the version and unit type, read below) */
		/* DWARF 5 only: before it, a unit is a skeleton by its DIE's
		 * DW_AT_GNU_dwo_id, which libdw reads (and the header cannot say). */
		unsigned version = le16_get(h + lsize);
		uint8_t ut = h[lsize + 2];
		size_t rest = lsize == 12 ? 12 : 8; /* version, type, address size, abbrev offset */
		if (version != 5 || (ut != DW_UT_compile && ut != DW_UT_partial) || len < rest ||
		    len > n - at - lsize)
			break;
		if (!at)
			die0 = lsize + rest;
		if (vec_grow(&in->units, cap, in->nunits + 1))
			return -ENOMEM;
		in->units[in->nunits++] = (struct unit){ at, at + lsize + len, ut, (uint8_t)version };
		at += lsize + len;
	}
	/* libdw must be reading these same bytes: find_info_map() takes the
	 * last section named .debug_info, libdw the first (and a compressed or
	 * grouped one its own way). The first unit's DIE tells, for one page. */
	Dwarf_Die die;
	if (at == n && (!in->nunits || (dwarf_offdie(in->dw[0], die0, &die) &&
					(const uint8_t *)die.addr == in->info_map + die0)))
		return 1;
	in->nunits = 0;
	return 0;
}

/* The file's units, then those of its dwz alternate file (.gnu_debugaltlink),
 * which its DIEs refer into: they are extracted too, so the merge resolves
 * those references like any other cross-CU one. */
static int list_units(struct input *in, struct diag *d)
{
	size_t cap = 0;
	int got = list_units_pread(in, &cap);
	if (got < 0)
		return got;
	int err = got ? 0 : list_units_of(in, in->dw[0], 0, &cap, d);
	/* libdw's listing touched every unit header, and with the kernel's
	 * fault-around that maps most of .debug_info: let it go until each
	 * unit is read. */
	if (!err && !got && in->info_map)
		mapfile_done_with(in->info_map, in->info_size);
	if (!err && in->alt[0])
		err = list_units_of(in, in->alt[0], CUS_ALT_BIT, &cap, d);
	return err;
}

/* Whether elf has a section named want; its size in *size (may be NULL),
 * uncompressed when it is SHF_COMPRESSED. */
static int has_section(Elf *elf, const char *want, uint64_t *size)
{
	struct scn_iter it;
	for (scn_iter_begin(&it, elf); scn_iter_next(&it);) {
		if (!strcmp(it.name, want)) {
			GElf_Chdr ch;
			if (size)
				*size = (it.sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(it.scn, &ch) ? ch.ch_size
												: it.sh.sh_size;
			return 1;
		}
	}
	return 0;
}

/* Every string a DIE names by offset (strp, line_strp, strx, dwz's
 * strp_alt) is read up to its NUL, and libdw does not look for one: in a
 * .debug_str or .debug_line_str whose last byte is not NUL, the last string
 * runs on into whatever follows the section (a name took the next section's
 * bytes). A string section must end in NUL (gABI, SHF_STRINGS), so such a
 * file is refused here, whichever DIE would have read it. Checked after
 * dwarf_begin_elf(), which decompresses the sections in place; one still
 * compressed is not libdw's to read. WHO names the file in the message. */
static int check_string_sections(Elf *elf, const char *who, struct diag *d)
{
	struct scn_iter it;
	for (scn_iter_begin(&it, elf); scn_iter_next(&it);) {
		/* GNU's .zdebug_ sections keep their name once libdw has
		 * decompressed them; one it could not still starts with "ZLIB". */
		int gnu = !strcmp(it.name, ".zdebug_str") || !strcmp(it.name, ".zdebug_line_str");
		if ((!gnu && strcmp(it.name, ".debug_str") && strcmp(it.name, ".debug_line_str")) ||
		    it.sh.sh_type == SHT_NOBITS || (it.sh.sh_flags & SHF_COMPRESSED))
			continue;
		Elf_Data *data = elf_getdata(it.scn, NULL);
		if (!data || !data->d_size || !data->d_buf ||
		    (gnu && data->d_size >= 4 && !memcmp(data->d_buf, "ZLIB", 4)))
			continue;
		if (((const char *)data->d_buf)[data->d_size - 1] != 0)
			return diag_fail(d, EBADMSG, "%s: %s (%zu bytes, section %zu) does not end in a NUL byte: "
					 "its last string has no end", who, it.name, data->d_size, elf_ndxscn(it.scn));
	}
	return 0;
}

/* dwz's alternate file, named by .gnu_debugaltlink (a path, then the 20-byte
 * build id): as written, beside the input, or in /usr/lib/debug/.dwz or the
 * build-id tree. Its build id must match. Opened once, on the main thread;
 * each worker gets its own Dwarf handle over it, set as its handle's alt. */
static int open_alt(struct input *in, unsigned workers, struct diag *d)
{
	const char *name = NULL;
	const void *want_id = NULL;
	ssize_t want_len = dwelf_dwarf_gnu_debugaltlink(in->dw[0], &name, &want_id);
	in->alt_fd = -1;
	if (want_len <= 0)
		return 0; /* no dwz alternate file */
	char *dir = strdup(in->path), cand[4][4096];
	if (!dir)
		return -ENOMEM;
	const uint8_t *id = want_id;
	snprintf(cand[0], sizeof(cand[0]), "%s", name);
	snprintf(cand[1], sizeof(cand[1]), "%s/%s", dirname(dir), name);
	const char *base = strrchr(name, '/');
	snprintf(cand[2], sizeof(cand[2]), "/usr/lib/debug/.dwz/%s", base ? base + 1 : name);
	int n = snprintf(cand[3], sizeof(cand[3]), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (ssize_t i = 1; i < want_len && n < 4000; i++)
		n += snprintf(cand[3] + n, sizeof(cand[3]) - (size_t)n, "%02x", id[i]);
	snprintf(cand[3] + n, sizeof(cand[3]) - (size_t)n, ".debug");
	free(dir);
	for (int c = 0; c < 4 && !in->alt_elf; c++) {
		/* The name comes from the input: like the input itself, only a regular
		 * file is read, so a crafted link to a FIFO cannot hang us. */
		int fd = open(cand[c], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		const void *got;
		ssize_t got_len = e ? dwelf_elf_gnu_build_id(e, &got) : -1;
		if (got_len == want_len && !memcmp(got, want_id, (size_t)want_len)) {
			in->alt_fd = fd;
			in->alt_elf = e;
			break;
		}
		if (e)
			elf_end(e);
		close(fd);
	}
	if (!in->alt_elf)
		return diag_fail(d, ENOENT, "%s: its DWARF refers to the dwz alternate file %s "
				 "(.gnu_debugaltlink), which was not found with a matching build id beside it, "
				 "as written, in /usr/lib/debug/.dwz or in the build-id tree", in->path, name);
	for (unsigned i = 0; i < workers; i++) {
		in->alt[i] = dwarf_begin_elf(in->alt_elf, DWARF_C_READ, NULL);
		if (!in->alt[i])
			return diag_fail(d, diag_lib_errno(dwarf_errmsg(-1), ENOTSUP),
					 "%s: the dwz alternate file %s has no .debug_info libdw "
					 "can open (%s); a strings-only alternate file (dwz -m over programs "
					 "that share no types) cannot be read with elfutils 0.188", in->path, name,
					 dwarf_errmsg(-1));
		dwarf_setalt(in->dw[i], in->alt[i]);
	}
	char who[4200];
	snprintf(who, sizeof(who), "%s: the dwz alternate file %s", in->path, name);
	return check_string_sections(in->alt_elf, who, d);
}

static void find_info_map(struct input *in)
{
	size_t fsize;
	const char *raw = in->is_rel ? NULL : elf_rawfile(in->elf, &fsize);
	if (!raw)
		return;
	struct scn_iter it;
	for (scn_iter_begin(&it, in->elf); scn_iter_next(&it);) {
		if (strcmp(it.name, ".debug_info") || (it.sh.sh_flags & SHF_COMPRESSED))
			continue;
		Elf_Data *data = elf_getdata(it.scn, NULL);
		if (data && (const char *)data->d_buf >= raw && data->d_size <= fsize &&
		    (const char *)data->d_buf + data->d_size <= raw + fsize &&
		    in->raw_is_file_map) {
			in->info_map = data->d_buf;
			in->info_size = data->d_size;
		}
	}
}

/* Pages are dropped this many bytes at a time, not unit by unit: each
 * madvise() interrupts the other workers' CPUs to flush their TLBs, and per
 * unit that was 11% of the cloud vmlinux's extract at -j2 (2,172 units). */
#define INFO_DROP_BATCH ((size_t)32 << 20)

void input__done_with_unit(struct input *in, const struct unit *u)
{
	if (!in->info_map || (u->offset & CUS_ALT_BIT) || u->end > in->info_size || u->end <= in->info_dropped)
		return;
	if (u->end - in->info_dropped < INFO_DROP_BATCH && u->end < in->info_size)
		return;
	mapfile_done_with(in->info_map + in->info_dropped, u->end - in->info_dropped);
	in->info_dropped = u->end;
}

int input__open(struct input *in, const char *path, unsigned workers, uint64_t info_per_worker,
		int libdw_only, struct diag *d)
{
	memset(in, 0, sizeof(*in));
	in->alt_fd = -1;
	in->path = path;
	in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in->fd < 0) {
		int err = errno;
		return diag_fail(d, err, "%s: cannot open: %s", path, strerror(err));
	}
	struct stat st;
	if (fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return diag_fail(d, EINVAL, "%s: not a regular file", path);
	elf_version(EV_CURRENT);
	errno = 0; /* diag_lib_errno() below: only this call's ENOMEM counts */
	Elf *file_elf = elf_begin(in->fd, ELF_C_READ_MMAP, NULL);
	if (!file_elf || elf_kind(file_elf) != ELF_K_ELF) {
		/* elf_begin() also fails when it cannot allocate: that is no
		 * verdict on the file. */
		int e = file_elf ? ENOEXEC : diag_lib_errno(elf_errmsg(-1), ENOEXEC);
		if (file_elf)
			elf_end(file_elf);
		return diag_fail(d, e, e == ENOMEM ? "%s: elf_begin" : "%s: not an ELF file", path);
	}
	/* Compressed sections: from here on the input is a copy that stores
	 * them plainly (inflate.c), under the file's name and size. */
	int plain = -1, err = inflate_open(file_elf, path, (size_t)st.st_size, &plain, d);
	if (err < 0) {
		elf_end(file_elf);
		return err;
	}
	if (err) {
		elf_end(file_elf);
		close(in->fd);
		in->fd = plain;
		errno = 0;
		file_elf = elf_begin(in->fd, ELF_C_READ_MMAP, NULL);
		if (!file_elf)
			return diag_fail(d, diag_lib_errno(elf_errmsg(-1), EBADMSG), "%s: its sections uncompressed: %s",
					 path, elf_errmsg(-1));
	}
	in->file_elf = in->elf = file_elf;
	err = identify(in, (uint64_t)st.st_size, d);
	if (!err && has_section(file_elf, ".debug_types", NULL))
		err = diag_fail(d, ENOTSUP, "%s: DWARF 4 type units (.debug_types, -fdebug-types-section) "
				"are not supported yet; build without -fdebug-types-section", path);
	if (!err && in->is_rel)
		err = open_relocated(in, workers, libdw_only, d); /* in->elf becomes the relocated Elf */
	if (err)
		return err;

	/* A worker per info_per_worker bytes of .debug_info: below that a
	 * second worker costs more than it saves (a small module is slower on
	 * two). No .debug_info by that name (.zdebug_info): as many workers
	 * as asked. */
	uint64_t info = 0;
	if (info_per_worker && has_section(file_elf, ".debug_info", &info))
		workers = pool_threads_for(workers, info, info_per_worker);
	in->dw = calloc(workers, sizeof(*in->dw));
	in->alt = calloc(workers, sizeof(*in->alt));
	if (!in->dw || !in->alt)
		return -ENOMEM;
	for (unsigned i = 0; i < workers; i++, in->ndw++) {
		in->dw[i] = dwarf_begin_elf(in->elf, DWARF_C_READ, NULL);
		if (!in->dw[i]) {
			int e = dwarf_errno(), err = diag_lib_errno(dwarf_errmsg(e), ENODATA);
			if (err == ENOMEM)
				return diag_fail(d, err, "%s: dwarf_begin_elf", path);
			return diag_fail(d, err, "%s: no DWARF debug info (%s); build with -g", path, dwarf_errmsg(e));
		}
	}
	if ((err = check_string_sections(in->elf, path, d)) || (err = open_alt(in, workers, d)))
		return err;
	err = collect_sections(in, d);
	if (!err)
		collect_dwarf_sections(in);
	if (!err)
		find_info_map(in);
	if (!err)
		err = list_units(in, d);
	return err;
}

void input__close(struct input *in)
{
	for (unsigned i = 0; i < in->ndw; i++)
		dwarf_end(in->dw[i]);
	free(in->dw);
	for (unsigned i = 0; in->alt && i < in->ndw; i++)
		if (in->alt[i])
			dwarf_end(in->alt[i]);
	free(in->alt);
	if (in->alt_elf)
		elf_end(in->alt_elf);
	if (in->alt_fd >= 0)
		close(in->alt_fd);
	if (in->dwfl)
		dwfl_end(in->dwfl); /* owns in->elf for ET_REL */
	if (in->rel_elf)
		elf_end(in->rel_elf);
	if (in->file_elf)
		elf_end(in->file_elf);
	if (in->fd >= 0)
		close(in->fd);
	free(in->secs);
	free(in->units);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}
