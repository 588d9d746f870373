/* graph_sections.h: the `.graph` file's section ids and names, shared by
 * its writer (graph_write.c) and its reader (graph_read.c); not for the
 * stages, which see a graph through graph.h only. */
#ifndef BTFPIPE_GRAPH_SECTIONS_H
#define BTFPIPE_GRAPH_SECTIONS_H

enum { S_STRINGS = 1, S_INPUTS, S_CUS, S_NODES, S_PROV, S_FUNCS, S_VARS };

/* By section id, for messages. */
extern const char *const graph_section_names[];

#endif
