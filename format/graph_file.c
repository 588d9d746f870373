/* graph_file.c: what the `.graph` file's writer (graph_write.c) and reader
 * (graph_read.c) share, and a graph's names and ownership (spec:
 * format/TYPE-GRAPH.md). */
#include "graph.h"
#include "graph_sections.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

const char *const graph_section_names[] = {
	[S_STRINGS] = "strings", [S_INPUTS] = "inputs", [S_CUS] = "cus", [S_NODES] = "nodes",
	[S_PROV] = "provenance", [S_FUNCS] = "funcs", [S_VARS] = "vars",
};

const char *graph_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[G_BASE] = "base", [G_PTR] = "ptr", [G_CONST] = "const", [G_VOLATILE] = "volatile",
		[G_RESTRICT] = "restrict", [G_ATOMIC] = "atomic", [G_TYPEDEF] = "typedef",
		[G_STRUCT] = "struct", [G_UNION] = "union", [G_ENUM] = "enum", [G_ARRAY] = "array",
		[G_FUNC_PROTO] = "func_proto", [G_FWD] = "fwd", [G_UNSPEC] = "unspecified",
		[G_UNSUPPORTED] = "unsupported",
	};
	return kind >= 1 && kind <= G_KIND_MAX ? names[kind] : "?";
}

void graph__free(struct graph *g)
{
	if (g->map)
		munmap(g->map, g->map_size);
	else
		free(g->str);
	free(g->inputs);
	free(g->cus);
	free(g->nodes);
	free(g->items);
	free(g->annots);
	free(g->prov_off);
	free(g->prov);
	free(g->funcs);
	free(g->locs);
	free(g->vars);
	memset(g, 0, sizeof(*g));
}

