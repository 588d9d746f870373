/* skip_log.c: see skip_log.h. The lines are kept in memory and written
 * only at the end, so a failed run leaves no report that disagrees with
 * the BTF it did not write. */
#include "skip_log.h"
#include "../../common/outfile.h"
#include "../../format/graph.h"

#include <errno.h>
#include <stdlib.h>

int skip_log__open(struct skip_log *s)
{
	s->f = open_memstream(&s->text, &s->len);
	return s->f ? 0 : -ENOMEM;
}

void skip_log__add(struct skip_log *s, const char *what, const char *name, const char *why,
		   const struct graph *g, uint32_t cu)
{
	s->count++;
	if (!s->f)
		return;
	fprintf(s->f, "%s %s: %s (CU %s)\n", what, name, why,
		cu < g->ncus ? graph_str(g, g->cus[cu].name) : "?");
}

int skip_log__write(struct skip_log *s, const char *path, struct diag *d)
{
	if (s->f && fclose(s->f)) {
		s->f = NULL;
		return -ENOMEM;
	}
	s->f = NULL;
	return outfile__write_all(path, s->text ? s->text : "", s->len, d);
}

void skip_log__free(struct skip_log *s)
{
	if (s->f)
		fclose(s->f);
	free(s->text);
	s->f = NULL;
	s->text = NULL;
	s->len = 0;
}
