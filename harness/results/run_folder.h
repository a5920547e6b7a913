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

/* FB_OK when `rel`, a path that comes from a file's content (launches.csv's run_dir) or is
 * built from one (compare's default folder, named after BASE's run id), may be used below
 * `top`, the folder the user named: it is not empty, is relative, has no ".." component and
 * no control character, and no component of it that already exists below top is a symbolic
 * link (components are looked at one by one with fstatat(AT_SYMLINK_NOFOLLOW) from an open
 * top, never followed), nor anything but a folder before the last. Components that do not
 * exist yet are the caller's to create. FB_ERR_USAGE with one line in err saying why (rel is
 * quoted unless it holds a control character); FB_ERR_IO when top cannot be opened. */
fb_status fb_run_folder_below(const char *top, const char *rel, char *err, size_t errlen);

/* FB_OK when `path`, an output the user named with option `opt` ("--out", "--junit"), may be
 * written: not empty, not itself a symbolic link (err names its target, as for run's --out),
 * and, when it exists, a folder (dir) or a regular file (!dir: never a device, FIFO or socket,
 * which the rename over it would replace), and never a file of a run's record (results.csv,
 * env.json, fabricbench.log, nccl-rank<N>.log in a folder holding a run); a file's folder must
 * exist and be writable (it is written there as NAME.tmp, then renamed). Every option that
 * names an output goes through it. FB_ERR_USAGE with one line in err otherwise. */
fb_status fb_run_folder_output(const char *opt, const char *path, bool dir, char *err,
                               size_t errlen);
/* FB_OK when no two of the n names (run folders, or their results.csv) are one run: a run is
 * its results.csv's identity (device and inode), whatever the path that names it ("r1", "./r1",
 * "r1/results.csv", a link). FB_ERR_USAGE with "'A' and 'B' are one run (...)" in err
 * otherwise; a name that cannot be read is left to its reader. trend and compare count each run
 * once. */
fb_status fb_run_folder_distinct(const char *const *names, size_t n, char *err, size_t errlen);
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

/* Whether `path` (which need not exist yet) is the folder `dir` or lies inside it, once both are
 * resolved (links, "..", relative names): a run folder is a record, and outputs of `compare` and
 * `trend` never go into one. False when dir cannot be resolved. */
bool fb_run_folder_inside(const char *path, const char *dir);

/* Whether `dir` holds a run: a results.csv that is a regular file. */
bool fb_run_folder_is_run(const char *dir);

/* The run folders directly inside `top` (each holding a results.csv; names starting with '.'
 * left out), sorted by name, into list (cap entries): their count (0 when there is none). -1
 * with one line in err when top cannot be read or holds more than cap runs (`trend` and
 * `compare` read "a folder of runs" this way). */
long fb_run_folder_runs_inside(const char *top, char (*list)[4096], size_t cap, char *err,
                               size_t errlen);

#endif
