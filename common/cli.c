/* cli.c: see cli.h. */
#include "cli.h"
#include "diag.h"

#include "stats.h"

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
