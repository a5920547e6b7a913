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

/* Whether `name` is one of the files a run writes into its folder. */
bool fb_run_folder_is_run_file(const char *name);

#endif
