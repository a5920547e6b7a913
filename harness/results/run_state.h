/* A run folder's end state as `run` records it in env.json: run_status is "running" while it
 * runs, then "complete", "failed", "timeout" or "interrupted", with "run_stop" saying where
 * and why. Readers (report, compare, accept) warn about, or refuse, an incomplete run. */
#ifndef FB_RUN_STATE_H
#define FB_RUN_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Whether the run of this env.json is incomplete: run_status present and not "complete". Then
 * `line` gets "run_status 'timeout': <run_stop.detail>" (or, for "running": that it never
 * finished). An env without run_status (not written by `run`) is not judged: false. */
bool fb_run_state_incomplete(const cJSON *env, char *line, size_t len);

/* The same from a run folder's env.json; false when there is none or it cannot be read (the
 * callers report those themselves). */
bool fb_run_state_incomplete_dir(const char *dir, char *line, size_t len);

#endif
