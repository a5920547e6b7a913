/* The run's environment fingerprint: what each rank saw (host, binding, GPU, locality) and what
 * the job ran on (versions of CUDA, NCCL, MPI, hwloc; InfiniBand ports; launcher variables),
 * as one JSON object that `run` stores beside its results and `doctor` prints. A result without
 * its fingerprint cannot be compared with another. */
#ifndef FB_FINGERPRINT_H
#define FB_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "facts.h"
#include "session.h"
#include "status.h"
#include "topo.h"
#include "verdict.h"

/* Fills *mine from the open session and this node's topology (topo may be NULL when it could
 * not be loaded: binding and locality are then ""); a node's local rank 0 also reads its
 * InfiniBand ports (node_read). Not collective; never fails for want of a fact (an unknown is
 * recorded as ""), so it returns FB_OK unless an argument is wrong. */
fb_status fb_fingerprint_collect(const struct fb_session *s, struct fb_topo *topo,
                                 struct fb_rank_facts *mine);

/* Collective over the session's ranks: gathers every rank's facts to rank 0. On rank 0 *all is
 * a malloc'ed array of world.size facts, ordered by rank (free() it); NULL on other ranks. All
 * ranks return the same status (FB_ERR_NOMEM when rank 0 cannot allocate, FB_ERR_MPI). */
fb_status fb_fingerprint_gather(const struct fb_session *s, const struct fb_rank_facts *mine,
                                struct fb_rank_facts **all);

/* Builds the fingerprint object from rank 0's view: this host (via `topo`, may be NULL), the
 * session, every rank's facts (`all`, world.size of them), versions, the InfiniBand ports of
 * this host, every node's host, ranks, GPUs and InfiniBand ports ("hosts", from the facts of
 * each node's local rank 0) and the launcher environment. `run_status` is a free word ("ok",
 * "failed", "doctor"). Not collective: call it on rank 0 only. Returns a new object owned by
 * the caller (cJSON_Delete), NULL when out of memory. */
cJSON *fb_fingerprint_json(const struct fb_session *s, struct fb_topo *topo,
                           const struct fb_rank_facts *all, const char *run_status);

#endif
