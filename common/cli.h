/* cli.h: command-line pieces the stages share. */
#ifndef BTFPIPE_CLI_H
#define BTFPIPE_CLI_H

#include <stdio.h>

/* The options every stage has, parsed in one place. Each stage's options
 * struct holds one of these (as it holds a struct cachedir_cli) and puts
 * CLI_LONG_OPTIONS in its getopt_long() table and CLI_SHORT_OPTIONS at the
 * front of its short ones; each stage's --help says what -j and -o mean
 * for it. */
struct cli_common {
	unsigned jobs;		/* -j N: at most N threads (default: the CPUs) */
	int jobs_exact;		/* $BTFPIPE_JOBS_EXACT: exactly jobs threads, however small
				 * the input (the tests set it, so threaded paths run) */
	const char *output;	/* -o FILE */
	int stats;		/* --stats[=json]: 0 off, 1 text, 2 json; -v: text */
	int quiet;		/* -q: no progress line */
};

enum { CLI_OPT_STATS = 0x2000, CLI_OPT_VERSION };
#define CLI_SHORT_OPTIONS "j:o:hqv"
#define CLI_LONG_OPTIONS \
	{ "jobs", required_argument, NULL, 'j' }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "stats", optional_argument, NULL, CLI_OPT_STATS }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, CLI_OPT_VERSION }

/* The defaults: jobs = the CPUs, jobs_exact from the environment. */
void cli_common_init(struct cli_common *c);

/* Take getopt_long()'s option opt (argument arg) if it is one of
 * CLI_LONG_OPTIONS: returns 1 when it was, 0 when it is the stage's own,
 * -1 after printing a usage error for tool. -h prints usage(stdout) and
 * --version tool's version, then exit 0. */
int cli_common_opt(struct cli_common *c, const char *tool, int opt, const char *arg,
		   void (*usage)(FILE *));

/* -j N: a number from 1 to 1024. Returns 0, or prints the usage error for
 * `tool` and returns -1. */
int cli_parse_jobs(const char *tool, const char *arg, unsigned *jobs);

/* --stats[=text|json]: sets *stats to 1 (text) or 2 (json). Returns 0, or
 * prints the usage error for `tool` and returns -1. */
int cli_parse_stats(const char *tool, const char *arg, int *stats);

/* Whether the environment variable `name` turns a flag on: set, not empty
 * and not "0" (BTFPIPE_CACHE_READONLY, BTFPIPE_CACHE_VERIFY,
 * BTFPIPE_JOBS_EXACT). */
int cli_env_flag(const char *name);

/* At the end of a run: warn on stderr, naming `where`, when some worker
 * threads could not be started (pool_threads_missing(): a memory limit
 * leaves no room for their stacks). The run went on with fewer threads and
 * the output is the same; the warning says why it was slower. */
void cli_warn_threads(const char *where, unsigned jobs);

/* Whether a stage at its end, its output committed or dropped and its
 * messages printed, frees its memory piece by piece: only in the sanitizer
 * builds, where LeakSanitizer then checks that everything has an owner.
 * Elsewhere the kernel takes the whole address space back at exit at once:
 * dwarf-extract's frees after a vmlinux (libdw's trees, the walkers) cost
 * more than the exit. Files and temp outputs are never left to exit. */
static inline int cli_free_at_exit(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#else
	return 0;
#endif
}

#endif
