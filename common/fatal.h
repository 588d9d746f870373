/* fatal.h: what the stage says when a library gives up on the process.
 *
 * libdw does not return every failed allocation as an error: where it
 * cannot (its abbreviation hash table growing, its obstacks) it calls
 * error(EXIT_FAILURE, ENOMEM, "libdw") or an assert() fails and aborts.
 * Under a memory limit (ulimit -v) that is how a big input ends, and the
 * build log must then read like any out-of-memory exit of ours: one line
 * "btfpipe: WHERE: error: out of memory in phase P: ...", exit 4, not a
 * libdw line, exit 1, or SIGABRT. One failure libdw does not even notice:
 * its abbreviation table's init (fatal.c), wrapped as well. The output is
 * an unnamed temp file until its rename (outfile.c), so ending the process
 * here leaves nothing behind.
 *
 * How: the static stages link with --wrap=error, --wrap=__assert_fail and
 * --wrap=Dwarf_Abbrev_Hash_init, so a library's fatal error() and failed
 * assert() land here. A failed assert is said as out of memory only under
 * a memory limit (ulimit -v or -d), where it is an allocation that failed;
 * without one it stays glibc's message and abort, core and all: a
 * library's bug.
 */
#ifndef BTFPIPE_FATAL_H
#define BTFPIPE_FATAL_H

#include "diag.h"

/* From main(), once where and d exist: d->file names the file in the
 * message (diag_file()), else *where (a pointer to the stage's default,
 * which may change as it goes); d->phase the pass. Both must live until
 * the process ends. */
void fatal__init(const char *const *where, const struct diag *d);

#endif
