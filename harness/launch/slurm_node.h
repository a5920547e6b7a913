/* One Slurm node's state through scontrol (never a shell): read, and drained with a reason
 * unless an administrator drained it first. No MPI. */
#ifndef FB_SLURM_NODE_H
#define FB_SLURM_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* What `scontrol show node -o NAME` says of a node: its state ("IDLE+DRAIN", "MIXED", ...) and
 * its reason ("" when none), each cut to its field. */
struct fb_slurm_node {
    char state[64];
    char reason[512];
};

/* Parses one line of `scontrol show node -o` (NodeName=... State=... Reason=text [user@time]).
 * FB_ERR_USAGE when it has no State=. */
fb_status fb_slurm_node_parse(const char *line, struct fb_slurm_node *n);

/* Whether the state is drained, draining or down (DRAIN, DRAINING, DRAINED, DOWN, FAIL). */
bool fb_slurm_node_out(const struct fb_slurm_node *n);

enum fb_slurm_drain_result {
    FB_SLURM_DRAINED,  /* scontrol update took the node out with our reason */
    FB_SLURM_LEFT,     /* already out with a reason not ours (an administrator's): left as is */
    FB_SLURM_FAILED,   /* scontrol could not be run or refused (its exit in *exit_status) */
};

/* Drains `node` with Reason=`reason` through `scontrol update`, unless `scontrol show node`
 * says it is already out with a reason that does not begin with `ours` (an administrator's
 * drain is never overwritten; our own is refreshed). The state read goes to *seen (may be
 * NULL; empty when it could not be read). */
enum fb_slurm_drain_result fb_slurm_drain(const char *node, const char *reason, const char *ours,
                                          struct fb_slurm_node *seen, int *exit_status);

#endif
