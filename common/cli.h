/* cli.h: command-line pieces the stages share. */
#ifndef BTFPIPE_CLI_H
#define BTFPIPE_CLI_H

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

#endif
