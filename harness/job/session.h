/* A session: the MPI world, the chosen device backend and collectives, and the GPU this rank
 * drives. `run` and `doctor` open one the same way, so doctor checks exactly what run uses.
 * Local rank picks the GPU; more local ranks than GPUs is oversubscription. */
#ifndef FB_SESSION_H
#define FB_SESSION_H

#include <stdbool.h>

#include "backend.h"
#include "coll.h"
#include "world.h"

struct fb_session {
    struct fb_world world;
    const struct fb_backend *be;
    char be_why[200];          /* one line: why this backend */
    const struct fb_coll *coll;
    char coll_why[240];        /* one line: why these collectives */
    int visible_gpus;          /* GPUs this rank can see (0 with none) */
    char no_gpu_why[160];      /* why none, when visible_gpus == 0 */
    int min_local_gpus;        /* fewest GPUs seen by any rank (for auto) */
    bool oversubscribed;       /* some node has more ranks than GPUs (cuda only) */
    struct fb_device_info dev; /* what this rank opened */
    bool opened;
    /* The largest last-level cache of the job's nodes (hwloc, fb_topo_summary), bytes; 0 when
     * unknown. Set by `run` and `expect` (fb_session_set_llc: agreed across ranks), read by h2d's
     * --beyond-llc and the headline's "fits in the cache" note. */
    unsigned long long llc_bytes;
};

/* Collective over MPI_COMM_WORLD (MPI initialised). backend and coll are "auto" or a name.
 * Refuses oversubscription (FB_ERR_OVERSUBSCRIBED) unless allow_oversubscribe; a name that
 * cannot work here is FB_ERR_USAGE or FB_ERR_NO_DEVICE with a message. All ranks return the
 * same status. */
fb_status fb_session_open(struct fb_session *s, const char *backend, const char *coll,
                          bool allow_oversubscribe);
void fb_session_close(struct fb_session *s);

/* --self-bind: this rank binds itself (hwloc) to its GPU's socket, or without a GPU to the
 * socket its local rank falls on when the node's ranks are dealt over the sockets in blocks
 * (fb_topo_rank_home), unless it already runs inside it. One info line when it moved; a
 * warning when it could not (best effort, as the launcher's binding would be). Not collective. */
void fb_session_bind_home(const struct fb_session *s);

/* --device-memory: gives the opened backend a device memory of `bytes` (0: nothing to do).
 * Only host-strict takes one; another backend is FB_ERR_USAGE with a line naming it. Collective:
 * all ranks return the same status. */
fb_status fb_session_device_memory(struct fb_session *s, size_t bytes);

/* Collective: s->llc_bytes, the largest last-level cache among the job's nodes, from this
 * rank's `mine` (hwloc's, fb_topo_summary; 0 unknown). FB_ERR_MPI. */
fb_status fb_session_set_llc(struct fb_session *s, unsigned long long mine);

#endif
