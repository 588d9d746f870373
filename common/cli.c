/* cli.c: see cli.h. */
#include "cli.h"
#include "diag.h"

#include "pool.h"
#include "stats.h"
#include "version.h"

#include <stdlib.h>
#include <string.h>

int cli_parse_jobs(const char *tool, const char *arg, unsigned *jobs)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (*arg == 0 || *end || n < 1 || n > 1024) {
		diag_error(tool, "-j wants a number from 1 to 1024, not '%s'", arg);
		return -1;
	}
	*jobs = (unsigned)n;
	return 0;
}

int cli_parse_stats(const char *tool, const char *arg, int *stats)
{
	int v = stats_parse(arg);
	if (v < 0) {
		diag_error(tool, "--stats takes text or json, not '%s'", arg);
		return -1;
	}
	*stats = v;
	return 0;
}

int cli_env_flag(const char *name)
{
	const char *env = getenv(name);
	return env && *env && strcmp(env, "0") != 0;
}

void cli_common_init(struct cli_common *c)
{
	*c = (struct cli_common){ .jobs = pool_ncpus(), .jobs_exact = cli_env_flag("BTFPIPE_JOBS_EXACT") };
}

int cli_common_opt(struct cli_common *c, const char *tool, int opt, const char *arg,
		   void (*usage)(FILE *))
{
	switch (opt) {
	case 'j': return cli_parse_jobs(tool, arg, &c->jobs) ? -1 : 1;
	case 'o': c->output = arg; return 1;
	case CLI_OPT_STATS: return cli_parse_stats(tool, arg, &c->stats) ? -1 : 1;
	case 'q': c->quiet = 1; return 1;
	case 'v': c->stats = c->stats ? c->stats : 1; return 1;
	case 'h': usage(stdout); exit(0);
	case CLI_OPT_VERSION: printf("%s (btfpipe) " BTFPIPE_VERSION "\n", tool); exit(0);
	}
	return 0;
}

void cli_warn_threads(const char *where, unsigned jobs)
{
	unsigned missing = pool_threads_missing();
	if (missing)
		diag_warn(where, "%u worker thread start%s failed (a memory or thread limit; -j %u): ran on fewer threads, "
			  "the output is the same", missing, missing == 1 ? "" : "s", jobs);
}
