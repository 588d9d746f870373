/* elf_match.c: refuse an --elf file that is not the one the graph was made
 * from (elf_match.h).
 *
 * btf-emit picks the functions and variables it encodes by the --elf
 * file's symbol table, and nothing else ties that file to the graph: given
 * another program, it wrote BTF whose FUNCs and VARs the wrong symbols had
 * chosen, without a word. The graph records each input's build id,
 * machine, class and byte order (section `inputs`), and each CU's offset
 * in its input's .debug_info (section `cus`; format/TYPE-GRAPH.md). So:
 *
 *  - Only a graph of one input is checked. Merged from several .cus (the
 *    objects of one program, LTO-style), the ELF is rightly another file
 *    than each of them.
 *  - Two GNU build ids decide alone: equal, the ELF is the graph's input;
 *    different, it is another program or the same one rebuilt.
 *  - Else (a .o or .ko, a program linked with --build-id=none, one whose
 *    note was removed) the ELF must be for the input's e_machine, class and
 *    byte order, and its .debug_info units must start where the graph's CUs
 *    did, as many of them. Only the unit headers' lengths are walked, never
 *    a DIE. A relocatable file's unit lengths are never relocated, so its
 *    offsets are the ones dwarf-extract saw after relocating. The units of
 *    a dwz alternate file (CUS_ALT_BIT) are not in the ELF's own
 *    .debug_info and are passed over.
 *  - What cannot be compared is accepted: an ELF without .debug_info (a
 *    stripped file given on purpose: t0730 gives one that lacks the symbol
 *    it tests), a compressed one (its unit headers would cost inflating
 *    the section), headers that do not walk to the section's end. So is a
 *    file that cannot be read here at all: the read that follows says what
 *    is wrong with it, as it did before this check. Nothing read here can
 *    make a refusal out of a failure (out of memory in libelf, a short
 *    file): a refusal needs two values read and found different.
 *
 * The same program without its build id (objcopy --remove-section) has the
 * same units: accepted. Two objects of one CU each start it at offset 0:
 * without build ids they cannot be told apart, and are accepted.
 *
 * Cost, for main.c to run it before the cache: the graph's header, its
 * inputs section (checked against its checksum) and one name; the ELF's
 * headers and notes. Only without a build id pair also the CUs section
 * (checksummed: a few bytes per CU) and one unit header per CU, each with
 * one pread() (a vmlinux without build id: thousands of units). Neither the
 * strings nor the sections after the CUs are hashed or read, and nothing
 * is allocated here but by libelf.
 *
 * The graph is read with graph__peek() (format/graph.h), not with
 * graph__read_flags(), which decodes and checks the whole file (most of a
 * cached run's time on a vmlinux). A graph the peek cannot read is left to
 * that reader to refuse.
 */
#include "elf_match.h"
#include "../../common/diag.h"
#include "../../common/mapfile.h"
#include "../../format/cus.h"
#include "../../format/graph.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HINT "--elf must be the file the graph was extracted from"

/* The --elf file, open: its header and its build id (when it has one). */
struct elf_side {
	int fd;
	Elf *elf;
	GElf_Ehdr eh;
	const uint8_t *build_id;
	size_t build_id_len;	/* 0: none */
};

/* Returns 1 with *e filled (elf_side_close() it), or 0: no ELF file that
 * libelf reads (left to elf_info__read() to say why). The build id is
 * found as dwarf-extract found the graph's, by dwelf_elf_gnu_build_id(). */
static int elf_side_open(const char *path, struct elf_side *e)
{
	struct stat st;
	memset(e, 0, sizeof(*e));
	e->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (e->fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if (fstat(e->fd, &st) || !S_ISREG(st.st_mode) || !(e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL)) ||
	    elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &e->eh)) {
		elf_end(e->elf);
		close(e->fd);
		return 0;
	}
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(e->elf, &id);
	if (n > 0) {
		e->build_id = id;
		e->build_id_len = (size_t)n;
	}
	return 1;
}

static void elf_side_close(struct elf_side *e)
{
	elf_end(e->elf);
	close(e->fd);
}

/* The ELF's .debug_info as the file holds it (the first section of that
 * name, the one libdw reads): 1 with its file offset and size in *off and
 * *n; 0 when there is none, or it holds no bytes in the file (SHT_NOBITS,
 * past its end) or compressed ones. */
static int debug_info(const struct elf_side *e, uint64_t *off, uint64_t *n)
{
	size_t shstrndx;
	struct stat st;
	if (elf_getshdrstrndx(e->elf, &shstrndx) || fstat(e->fd, &st))
		return 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e->elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e->elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".debug_info"))
			continue;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED) || sh.sh_offset > (uint64_t)st.st_size ||
		    sh.sh_size > (uint64_t)st.st_size - sh.sh_offset)
			return 0;
		*off = sh.sh_offset;
		*n = sh.sh_size;
		return 1;
	}
	return 0;
}

static uint64_t get_n(const uint8_t *p, int bytes, int big)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)p[big ? bytes - 1 - i : i] << (8 * i);
	return v;
}

/* The ELF's .debug_info: n bytes at file offset off, in the file's byte
 * order (big-endian when big). Its unit headers are read with pread(): a
 * vmlinux's 2,400 units are as many pages of its mapping, a fault each
 * (dwarf-extract's list_units_pread() says the same). */
struct info {
	int fd;
	uint64_t off, n;
	int big;
};

/* Where the unit after the one at `at` (< n) starts; 0 when no unit header
 * lies at `at` (its length is reserved or runs past the section, its
 * version is not 2 to 5, the file cannot be read there). Only the initial
 * length (4 bytes, or 0xffffffff and 8 for 64-bit DWARF) and the version
 * are read: they open the header in every version; DWARF 5's unit type,
 * and in all versions the abbreviation offset and address size, follow. */
static uint64_t next_unit(const struct info *in, uint64_t at)
{
	uint8_t h[14];
	uint64_t left = in->n - at;
	if (left < 6 || inputfile_pread(in->fd, h, left < sizeof(h) ? (size_t)left : sizeof(h), in->off + at))
		return 0;
	uint64_t len = get_n(h, 4, in->big), lsize = 4;
	if (len == 0xffffffff) {
		if (left < 14)
			return 0;
		len = get_n(h + 4, 8, in->big);
		lsize = 12;
	} else if (len >= 0xfffffff0) {
		return 0;
	}
	if (len < 2 || len > left - lsize)
		return 0;
	uint64_t version = get_n(h + lsize, 2, in->big);
	return version >= 2 && version <= 5 ? at + lsize + len : 0;
}

/* Units from `at` to the end of .debug_info; UINT64_MAX when the headers
 * do not walk there. */
static uint64_t units_from(const struct info *in, uint64_t at)
{
	uint64_t k = 0;
	while (at < in->n && (at = next_unit(in, at)))
		k++;
	return at == in->n ? k : UINT64_MAX;
}

/* The next CU of the graph's own .debug_info (a dwz alternate file's are
 * passed over): its offset into *off; 0 at the end or on a malformed entry
 * (*bad set). */
static int next_cu(struct graph_peek_cus *it, int *bad, uint64_t *off)
{
	uint64_t input; /* 0, the only one */
	int r;
	while ((r = graph__peek_cu(it, &input, off)) > 0)
		if (!(*off & CUS_ALT_BIT))
			return 1;
	*bad = r < 0;
	return 0;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
}

/* The graph's CUs against the ELF's units, in order. Returns 0 when they
 * agree or cannot be compared, -EINVAL with the difference in d. no_id
 * says which file lacks a build id, for the message. */
static int compare_units(const struct graph_peek *p, const struct elf_side *e, const char *graph_path,
			 const char *elf_path, const char *no_id, struct diag *d)
{
	const char *name = p->input0.name;
	struct info info = { .fd = e->fd, .big = e->eh.e_ident[EI_DATA] == ELFDATA2MSB };
	struct graph_peek_cus it;
	if (!debug_info(e, &info.off, &info.n) || graph__peek_cus(p, &it, NULL))
		return 0;
	const uint64_t n = info.n;
	uint64_t at = 0, k = 0, off;
	int bad = 0;
	for (; next_cu(&it, &bad, &off); k++) {
		if (at == n) { /* the ELF has fewer units */
			uint64_t more = 1;
			while (next_cu(&it, &bad, &off))
				more++;
			if (bad)
				return 0;
			return diag_fail(d, EINVAL, "%s: %llu units in .debug_info, but the graph %s was made from "
					 "%.*s%s, which had %llu (%s): " HINT, elf_path, (unsigned long long)k,
					 graph_path, DIAG_CLIP(name), (unsigned long long)(k + more), no_id);
		}
		if (at != off)
			return diag_fail(d, EINVAL, "%s: .debug_info unit %llu starts at offset 0x%llx, but the graph %s "
					 "was made from %.*s%s, whose unit %llu started at 0x%llx (%s): " HINT, elf_path,
					 (unsigned long long)k, (unsigned long long)at, graph_path, DIAG_CLIP(name),
					 (unsigned long long)k, (unsigned long long)off, no_id);
		if (!(at = next_unit(&info, at)))
			return 0;
	}
	if (bad || at == n)
		return 0;
	uint64_t more = units_from(&info, at);
	if (more == UINT64_MAX)
		return 0;
	return diag_fail(d, EINVAL, "%s: %llu units in .debug_info, but the graph %s was made from %.*s%s, "
			 "which had %llu (%s): " HINT, elf_path, (unsigned long long)(k + more), graph_path,
			 DIAG_CLIP(name), (unsigned long long)k, no_id);
}

static const char *class_name(unsigned c)
{
	return c == ELFCLASS32 ? "32-bit" : c == ELFCLASS64 ? "64-bit" : "unknown class";
}

static const char *data_name(unsigned c)
{
	return c == ELFDATA2LSB ? "little-endian" : c == ELFDATA2MSB ? "big-endian" : "unknown byte order";
}

int elf_match__check(const char *graph_path, const char *elf_path, struct diag *d)
{
	struct graph_peek p;
	struct elf_side e;
	int err = 0;
	/* No detail into d: what the peek cannot read, graph__read_flags()
	 * reports, and d keeps only the first message. */
	if (graph__peek(&p, graph_path, NULL) || p.ninputs != 1 || !elf_side_open(elf_path, &e)) {
		graph__peek_end(&p);
		return 0;
	}
	const struct graph_input_id *g = &p.input0;
	char ours[2 * 64 + 1], theirs[2 * 64 + 1];
	const uint8_t *ident = e.eh.e_ident;
	if (g->build_id_len && e.build_id_len) {
		if (g->build_id_len != e.build_id_len || memcmp(g->build_id, e.build_id, g->build_id_len)) {
			hex(ours, e.build_id, e.build_id_len < 64 ? e.build_id_len : 64);
			hex(theirs, g->build_id, g->build_id_len);
			err = diag_fail(d, EINVAL, "%s: build id %s, but the graph %s was made from %.*s%s, build id %s: " HINT,
					elf_path, ours, graph_path, DIAG_CLIP(g->name), theirs);
		}
	} else if (e.eh.e_machine != g->e_machine || ident[EI_CLASS] != g->ei_class || ident[EI_DATA] != g->ei_data) {
		err = diag_fail(d, EINVAL, "%s: an ELF for e_machine %u (%s, %s), but the graph %s was made from %.*s%s, "
				"one for e_machine %u (%s, %s): " HINT, elf_path, e.eh.e_machine,
				class_name(ident[EI_CLASS]), data_name(ident[EI_DATA]), graph_path, DIAG_CLIP(g->name),
				g->e_machine, class_name(g->ei_class), data_name(g->ei_data));
	} else {
		char no_id[320];
		if (e.build_id_len)
			snprintf(no_id, sizeof(no_id), "%.*s%s had no build id to compare", DIAG_CLIP(g->name));
		else if (g->build_id_len)
			snprintf(no_id, sizeof(no_id), "%s has no build id to compare", elf_path);
		else
			snprintf(no_id, sizeof(no_id), "neither has a build id to compare");
		err = compare_units(&p, &e, graph_path, elf_path, no_id, d);
	}
	elf_side_close(&e);
	graph__peek_end(&p);
	return err;
}
