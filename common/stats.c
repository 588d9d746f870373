/* stats.c: see stats.h. */
#include "stats.h"
#include "pool.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void stats_init(struct stats *s, const char *tool)
{
	memset(s, 0, sizeof(*s));
	s->tool = tool;
	clock_gettime(CLOCK_MONOTONIC, &s->start);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s->cpu_mark);
	s->mark = s->start;
	pool_clock(&s->pool_mark, &s->crit_mark);
}

void stats_phase(struct stats *s, const char *name)
{
	struct timespec now, cpu;
	uint64_t in_pool, in_crit;
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	pool_clock(&in_pool, &in_crit);
	if (s->nphases < STATS_MAX) {
		double wall = since(&s->mark, &now);
		double serial = wall - (double)(in_pool - s->pool_mark) / 1e9 + (double)(in_crit - s->crit_mark) / 1e9;
		s->phase[s->nphases] = name;
		s->cpu[s->nphases] = since(&s->cpu_mark, &cpu);
		s->serial[s->nphases] = serial < 0 ? 0 : serial > wall ? wall : serial; /* clocks read apart */
		s->secs[s->nphases++] = wall;
	}
	s->mark = now;
	s->cpu_mark = cpu;
	s->pool_mark = in_pool;
	s->crit_mark = in_crit;
}

void stats_count(struct stats *s, const char *name, uint64_t value)
{
	if (s->ncounters < STATS_MAX) {
		s->counter[s->ncounters] = name;
		s->value[s->ncounters++] = value;
	}
}

void stats_print(const struct stats *s, FILE *o, int json)
{
	struct rusage ru;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (json) {
		fprintf(o, "{\"tool\":\"%s\",\"wall_s\":%.6f,\"cpu_s\":%.6f,\"peak_rss_kib\":%ld,\"phases\":{",
			s->tool, since(&s->start, &now), cpu, ru.ru_maxrss);
		for (int i = 0; i < s->nphases; i++)
			fprintf(o, "%s\"%s\":%.6f", i ? "," : "", s->phase[i], s->secs[i]);
		fputs("},\"phase_cpu\":{", o);
		for (int i = 0; i < s->nphases; i++)
			fprintf(o, "%s\"%s\":%.6f", i ? "," : "", s->phase[i], s->cpu[i]);
		fputs("},\"phase_serial\":{", o);
		for (int i = 0; i < s->nphases; i++)
			fprintf(o, "%s\"%s\":%.6f", i ? "," : "", s->phase[i], s->serial[i]);
		fputs("},\"counts\":{", o);
		for (int i = 0; i < s->ncounters; i++)
			fprintf(o, "%s\"%s\":%llu", i ? "," : "", s->counter[i], (unsigned long long)s->value[i]);
		fputs("}}\n", o);
		return;
	}
	fprintf(o, "%s: wall %.6f s, cpu %.6f s, peak rss %ld KiB\n", s->tool, since(&s->start, &now), cpu,
		ru.ru_maxrss);
	for (int i = 0; i < s->nphases; i++)
		fprintf(o, "%s: phase %-10s %.6f s cpu %.6f s serial %.6f s\n", s->tool, s->phase[i], s->secs[i],
			s->cpu[i], s->serial[i]);
	for (int i = 0; i < s->ncounters; i++)
		fprintf(o, "%s: %-16s %llu\n", s->tool, s->counter[i], (unsigned long long)s->value[i]);
}

int stats_parse(const char *arg)
{
	if (!arg || !strcmp(arg, "text"))
		return 1;
	if (!strcmp(arg, "json"))
		return 2;
	return -1;
}

void progress_init(struct progress *p, const char *tool, const char *what, size_t total, int quiet)
{
	memset(p, 0, sizeof(*p));
	p->on = !quiet && isatty(STDERR_FILENO);
	p->tool = tool;
	p->what = what;
	p->total = total;
}

void progress_step(struct progress *p, size_t done)
{
	if (!p->on)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (done < p->total && since(&p->last, &now) < 0.1)
		return;
	p->last = now;
	fprintf(stderr, "\r%s: %s %zu/%zu", p->tool, p->what, done, p->total);
	fflush(stderr);
}

void progress_end(struct progress *p)
{
	if (p->on)
		fputs("\r\033[K", stderr);
}
