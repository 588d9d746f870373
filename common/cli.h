/* cli.h: command-line pieces the stages share. */
#ifndef BTFPIPE_CLI_H
#define BTFPIPE_CLI_H

/* -j N: a number from 1 to 1024. Returns 0, or prints the usage error for
 * `tool` and returns -1. */
int cli_parse_jobs(const char *tool, const char *arg, unsigned *jobs);

/* --stats[=text|json]: sets *stats to 1 (text) or 2 (json). Returns 0, or
 * prints the usage error for `tool` and returns -1. */
int cli_parse_stats(const char *tool, const char *arg, int *stats);

/* $BTFPIPE_JOBS_EXACT set (and not "0"): -j N means N threads even for an
 * input too small to share (pool_threads_for()); the tests set it so that
 * their small fixtures still run the threaded paths. */
int cli_jobs_exact(void);

#endif
