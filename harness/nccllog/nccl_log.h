/* NCCL's own account of a run: with NCCL_DEBUG=INFO, NCCL logs which transport carries each
 * connection (P2P/IPC, SHM, NET/IB, NET/Socket), the check every field guide recommends.
 * fabricbench keeps that log in the run folder, one file per rank, unless told not to. */
#ifndef FB_NCCL_LOG_H
#define FB_NCCL_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* Before NCCL initialises (it reads its environment then): sets NCCL_DEBUG=INFO unless the user
 * set a level, and NCCL_DEBUG_FILE=<dir>/nccl-rank<rank>.log unless the user named a file
 * (creating <dir> and its parents on this node if missing, as on a node without the shared
 * file system). Writes the file name used into path; "" when the user's own NCCL_DEBUG_FILE or
 * level keeps the log elsewhere, or when the folder cannot be made (then a warning says so,
 * NCCL logs where it would have, and FB_ERR_IO is returned for the caller to note; the run
 * does not depend on it). */
fb_status fb_nccl_log_setup(const char *dir, int rank, char *path, size_t pathlen);

#endif
