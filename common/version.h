/* version.h: btfpipe's own version, recorded in every file it writes. */
#ifndef BTFPIPE_VERSION_H
#define BTFPIPE_VERSION_H

#define BTFPIPE_VERSION "0.1.0"
#define BTFPIPE_VERSION_CODE ((0u << 16) | (1u << 8) | 0u)

#endif
