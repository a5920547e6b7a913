/* The record `run` keeps while it runs: env.json's end state and results.csv. The main thread
 * writes both; when the watchdog ends the run (a timeout, a failed communicator, SIGINT or
 * SIGTERM) its stop hook writes them from here, so a stopped run is marked and keeps every
 * finished point. Rank 0 of `run` only. */
#ifndef FB_RUN_RECORD_H
#define FB_RUN_RECORD_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "status.h"

struct fb_results;

/* The run's env.json object (borrowed, kept until the next call), where it is written, and its
 * results; registers the watchdog's stop hook. All NULL: forgets them and removes the hook
 * (waiting for a stop under way). */
void fb_run_record_set(cJSON *env, const char *env_path, struct fb_results *res);

/* Sets env.json's run_status ("complete", "failed", "timeout", "interrupted") and the
 * "run_stop" details, and rewrites it atomically. The first end state is kept: a later mark is
 * ignored, and so is this one when env.json on disk no longer says "running" (another rank,
 * locate's deputy, marked it: fb_run_record_mark_file). FB_OK when nothing is set.
 * Thread-safe. */
fb_status fb_run_record_mark(const char *state, const char *detail);

/* For a rank that does not own the record (locate's deputy, when rank 0 could not mark it):
 * reads env.json at env_path and, while it still says "running", marks it as
 * fb_run_record_mark would and rewrites it atomically (*marked true). A missing file (a run
 * folder not shared with rank 0's host) or one already marked is left as it is, FB_OK; an
 * unreadable one is FB_ERR_USAGE with a line printed. */
fb_status fb_run_record_mark_file(const char *env_path, const char *state, const char *detail,
                                  bool *marked);

/* A writer of the layer above (locate's node table), called by the stop hook after env.json is
 * marked and results.csv written, with the end state and its line, from the watchdog thread
 * (no MPI); NULL removes it (waiting for a stop under way). Rank 0 only. */
void fb_run_record_also(void (*fn)(void *arg, const char *state, const char *detail), void *arg);

/* While on, the stop hook does not rewrite results.csv: the main thread rewrites it after every
 * change (locate's phase 1, where a deputy rank may also write it). Thread-safe. */
void fb_run_record_file_current(bool on);

/* Held while the main thread changes the results (adds rows, rewrites results.csv), so the
 * stop hook can write the finished points of a stopped run without racing it. */
void fb_run_record_lock(void);
void fb_run_record_unlock(void);

#endif
