/* skips.c: btf-emit's skip report worded as pahole --verbose words it.
 * The report's lines are "func NAME: WHY (CU NAME)"; pahole's own tests
 * grep its wording, so the reasons are mapped onto its short phrases. */
#include "skips.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The start of our reason -> pahole's words for it. */
static const struct { const char *ours, *pahole; } reasons[] = {
	{ "optimized parameters", "optimized parameters" },
	{ "inconsistent prototype", "inconsistent prototype" },
	{ "reordered parameters", "reordered parameters" },
	{ "uncertain parameter location", "uncertain parameter location" },
	{ "ambiguous address", "ambiguous address" },
};

int skips_print(const char *path, FILE *out)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "func ", 5))
			continue;
		char *name = line + 5, *colon = strstr(name, ": ");
		if (!colon || memchr(name, ' ', (size_t)(colon - name)))
			continue;
		*colon = 0;
		const char *why = colon + 2, *words = NULL;
		for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]) && !words; i++)
			if (!strncmp(why, reasons[i].ours, strlen(reasons[i].ours)))
				words = reasons[i].pahole;
		if (!words && strstr(why, "unexpected register"))
			words = "unexpected register usage for parameter";
		if (words)
			fprintf(out, "%s : skipping BTF encoding of function due to %s\n", name, words);
	}
	free(line);
	fclose(f);
	return 0;
}
