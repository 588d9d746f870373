/* stats.h: --stats[=json] for the stages: named counters, the wall and CPU
 * time of named phases (CPU over all threads: CPU / wall says how parallel a
 * phase ran) and their serial time (pool_clock(): what no thread count
 * shortens, Amdahl's serial part), plus peak RSS, printed to stderr at the end (never mixed
 * into a dump on stdout). And the progress line a long run shows on a
 * terminal. Each stage owns one struct stats; nothing here is global. */
#ifndef BTFPIPE_STATS_H
#define BTFPIPE_STATS_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define STATS_MAX 32

struct stats {
	const char *tool;
	struct timespec start, mark, cpu_mark;
	const char *phase[STATS_MAX];
	double secs[STATS_MAX], cpu[STATS_MAX], serial[STATS_MAX];
	uint64_t pool_mark, crit_mark;	/* pool_clock() at the last mark */
	int nphases;
	const char *counter[STATS_MAX];
	uint64_t value[STATS_MAX];
	int ncounters;
};

void stats_init(struct stats *s, const char *tool);
/* The time since the last mark (or start) was phase `name`: its wall time,
 * the CPU time of every thread of the process, and its serial time: the
 * wall time outside pool_ordered() plus, of each call, the longer of its
 * emit callbacks and its longest item (pool_clock()). */
void stats_phase(struct stats *s, const char *name);
void stats_count(struct stats *s, const char *name, uint64_t value);
/* Text: one "tool: name value" line each ("tool: phase NAME W s cpu C s
 * serial S s"); json: one object on one line ("phases" the wall times,
 * "phase_cpu" the CPU times, "phase_serial" the serial times). */
void stats_print(const struct stats *s, FILE *o, int json);

/* --stats / --stats=json / --stats=text: 0 off, 1 text, 2 json, -1 bad. */
int stats_parse(const char *arg);

/* A progress line on stderr when it is a terminal and not -q: "TOOL: what
 * i/n", at most ten times a second, erased at the end. */
struct progress {
	int on;
	const char *tool, *what;
	size_t total;
	struct timespec last;
};
void progress_init(struct progress *p, const char *tool, const char *what, size_t total, int quiet);
void progress_step(struct progress *p, size_t done);
void progress_end(struct progress *p);

#endif
