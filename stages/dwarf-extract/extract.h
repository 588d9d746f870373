/* extract.h: dwarf-extract's design, its files, and its options.
 *
 * The flow (main.c): input__open() maps the ELF and lists its units;
 * pool_ordered() runs cu_walk__extract() for each unit on a worker's own
 * Dwarf handle and hands the blobs, in unit order, to the .cus writer; the
 * same pool hashes the DWARF's pieces (dwarf_hash.c), each unit's by its
 * walker and the rest as items after the units, for the identity block
 * the writer gets last.
 *   input.c       the ELF: handles, sections, identity, the unit list
 *   dwarf_hash.c  the identity's DWARF hash, hashed in pieces by the workers
 *   abbrev.c      a unit's abbreviation table, from .debug_abbrev's bytes
 *   die_reader.c  tags, children, siblings and attribute values read from
 *                 .debug_info's bytes (libdw for what it does not know)
 *   die_attrs.c   one pass over a DIE's attributes into struct die_attrs
 *   die_record.c  where a DWARF tag becomes a record
 *   cu_walk.c     the walk over one CU, references, records made on demand
 *   cu_recs.c     the records, strings and references die_record.c makes
 *   attr_bits.c   the one list of the attributes read
 *   cu_key.c, cached.c  the extracted-CU cache's key, and a unit through it
 *   reloc.c       a relocatable file's debug sections relocated
 * Each has a header of its own; this one has the stage's options.
 */
#ifndef BTFPIPE_EXTRACT_H
#define BTFPIPE_EXTRACT_H

#include "../../common/cachedir.h"
#include "../../common/cli.h"

struct extract_opts {
	const char *input;
	struct cli_common cli;	/* -j (workers: input__open()), -o, --stats, -q, ... */
	const char *dump;	/* --dump FILE.cus: print it and stop */
	int dump_json;		/* --json: that dump as JSON lines */
	struct cachedir_cli cache; /* --cache and friends (common/cachedir.h) */
	int cache_verify;	/* --cache-verify or $BTFPIPE_CACHE_VERIFY */
	int libdw_only;		/* --libdw-only: no DIE reader (die_reader.c), libdwfl relocates */
};

#endif
