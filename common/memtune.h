/* memtune.h: big inputs run with glibc's malloc in huge pages.
 *
 * Why: on the hosts we run on (a paravirtualized guest with page-table
 * isolation) a fresh 4 KiB page costs about 8 us to fault in, and on the
 * cloud vmlinux the three stages fault in some 100,000 of them, most in
 * malloc's heaps. glibc can grow its heaps 64 MiB at a time and ask for
 * transparent huge pages over them (its glibc.malloc.hugetlb and
 * glibc.malloc.top_pad tunables), which cuts the faults to about 10,000
 * and the vmlinux's three stages from 3.5 to 2.5 s at -j2 (measured
 * 2026-12-01). The tunables are read only when a process starts, so a stage
 * whose input is big starts itself again, once, with them set.
 *
 * The output bytes cannot depend on it: only where malloc's memory comes
 * from changes.
 */
#ifndef BTFPIPE_MEMTUNE_H
#define BTFPIPE_MEMTUNE_H

#include <stddef.h>

/* Inputs smaller than this in all (a module) gain less than the 3-4 ms a
 * second start costs. */
#define MEMTUNE_MIN_INPUT ((unsigned long long)8 << 20)

/* Called from main() once the options are parsed, before any thread or
 * file is opened: when the regular files among paths[0..n) hold at least
 * MEMTUNE_MIN_INPUT bytes, or $BTFPIPE_MEMTUNE is "1" (the tests), execs
 * /proc/self/exe with argv and the tunables added to GLIBC_TUNABLES.
 * Returns (doing nothing) when the input is small, when $BTFPIPE_MEMTUNE is
 * "0", when this process is already that second start, in a sanitizer
 * build (its allocator is not glibc's), or when the exec fails: the stage
 * then runs as it is, only slower. */
void memtune__reexec(char **argv, const char *const *paths, size_t n);

/* 1 in the second start (for --stats: "memtune 1"), else 0. */
int memtune__active(void);

#endif
