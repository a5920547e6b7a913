/* Where each pair of ranks runs: on different nodes ("network"), or on one node, the link
 * between their GPUs (or, on the host backend, between their CPU bindings). The p2p matrix and
 * every row about a pair carry this label. */
#ifndef FB_LINKS_H
#define FB_LINKS_H

#include "session.h"
#include "status.h"

enum { FB_LINK_LABEL = 16, FB_RANK_NAME = 96 };

/* Collective. Each rank labels its own row with its own node's topology (hwloc, and NVML when
 * the driver has it), since a rank can read only the node it runs on; rank 0 gathers the rows
 * into *out (malloc'ed, size * size labels, out[src * size + dst]; NULL on other ranks: pass
 * NULL there). A label that cannot be read is "same-node"; the diagonal is "self". *names gets
 * each rank's "host gpu-bus-id" (or "host cpus LIST" on host), also on rank 0 only. */
fb_status fb_links_compute(const struct fb_session *s, char (**out)[FB_LINK_LABEL],
                           char (**names)[FB_RANK_NAME]);

#endif
