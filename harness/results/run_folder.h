/* The run folder (`run --out DIR`, or results/<run-id>): when a folder may take a run, so that
 * an earlier run is never overwritten unasked and nothing a run writes lands outside the folder
 * named. The rules, and why, are in docs/run-folder.md. */
#ifndef FB_RUN_FOLDER_H
#define FB_RUN_FOLDER_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* FB_OK when `dir` may take a run: it does not exist yet (the caller creates it), or it is a
 * folder that holds none of a run's files (results.csv, env.json, fabricbench.log,
 * nccl-rank<N>.log, whether file, link or anything else), or holds some and `force` is set.
 * FB_ERR_USAGE with one line in err when `dir` is itself a symbolic link (a run goes into the
 * folder named, never through a link to another: err names the link's target), exists and is
 * not a folder, or holds a run without `force` (err names the file found). Not collective. */
fb_status fb_run_folder_check(const char *dir, bool force, char *err, size_t errlen);

/* The run lock, `<dir>/.lock`, holding "PID HOST" of the process writing the run (rank 0), so
 * that two runs never write one folder at once (docs/run-folder.md). Takes it atomically (the
 * contents are written to a temporary, then link(2)ed to the name, which fails when it exists).
 * A lock held by a live process (this host and kill(pid, 0) finds it, or another host, which
 * cannot be asked) is FB_ERR_USAGE with "'DIR' is being written by pid P on HOST" in err. A
 * stale lock (this host, no such process) is taken over, one taker at a time, and `note` says
 * whose it was; else note is "". `dir` must exist. Not collective. */
fb_status fb_run_folder_lock(const char *dir, char *note, size_t notelen, char *err,
                             size_t errlen);

/* Removes `<dir>/.lock` when this process holds it (its pid and host); else leaves it. Safe to
 * call from the watchdog's thread (no allocation, no lock of its own). */
void fb_run_folder_unlock(const char *dir);

/* Whether `name` is one of the files a run writes into its folder. */
bool fb_run_folder_is_run_file(const char *name);

#endif
