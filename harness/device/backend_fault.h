/* Fault injection for the device backends (tests): the environment variable FB_FAULT makes the
 * Nth allocation, copy, stream creation or event creation of this process fail, so that the
 * error paths behind every such call can be run, under the sanitizers, one N at a time
 * (docs/sanitizers.md). Unset, nothing fails and nothing is counted but a few integers. */
#ifndef FB_BACKEND_FAULT_H
#define FB_BACKEND_FAULT_H

#include <stdbool.h>

#include "status.h"

enum fb_fault_kind {
    FB_FAULT_ALLOC,
    FB_FAULT_COPY,
    FB_FAULT_STREAM,
    FB_FAULT_EVENT,
    FB_FAULT_IPC, /* opening a peer's memory: the pair's IPC point is waived, the run goes on */
    FB_FAULT_KINDS
};

/* Reads FB_FAULT and resets the counts; called by a backend's open. FB_FAULT is one of
 *   KIND:N[@RANK]  fail the Nth call (from 1) of KIND (alloc, copy, stream, event, ipc), on every
 *                  rank or only on MPI rank RANK;
 *   count          fail nothing, and say at close how many calls of each kind were made;
 *   unset or ""    off.
 * A malformed value is FB_ERR_USAGE with one line on stderr. Not thread-safe (open is not). */
fb_status fb_fault_setup(void);

/* Counts one call of `kind`; true when it is the one to fail, which it says on stderr. Safe
 * from any thread. */
bool fb_fault_hit(enum fb_fault_kind kind);

/* Called by a backend's close: in `count` mode prints this rank's counts (one line). */
void fb_fault_report(void);

#endif
