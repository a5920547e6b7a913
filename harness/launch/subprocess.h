/* Starting a launcher (mpirun, srun) and waiting for it with a time limit: exec of an argument
 * vector, never a shell; the child leads its own process group, so on expiry or interruption
 * the whole group (the launcher and what it started on this node) is stopped: SIGTERM, a grace
 * period, then SIGKILL. */
#ifndef FB_SUBPROCESS_H
#define FB_SUBPROCESS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "status.h"

enum { FB_SUBPROCESS_TIMEOUT_EXIT = 124 }; /* exit status recorded for a launch that ran out of time */

struct fb_subprocess_result {
    int exit_status;  /* the exit code; 128 + N when killed by signal N; 124 on timeout;
                         127 when the program could not be started */
    bool timed_out;   /* the time limit passed and the group was stopped */
    bool interrupted; /* *stop was raised (SIGINT/SIGTERM to us) and the group was stopped */
    double wall_s;    /* from start to the last reap */
};

enum { FB_SUBPROCESS_SILENT = 1 }; /* flags: stdout and stderr to /dev/null */

/* Runs argv[0] (searched in PATH) with argv, stdin from /dev/null, stdout and stderr
 * inherited (or silenced by FB_SUBPROCESS_SILENT), `env` (NAME=VALUE strings, may be NULL) added to its environment. timeout_s <= 0
 * means no limit. `stop` (may be NULL) is polled: when it becomes non-zero the group is
 * stopped as on a timeout. grace_s: how long the group has after SIGTERM before SIGKILL.
 * Returns FB_OK once the child has been reaped (its fate in res), FB_ERR_IO when it could not
 * be started at all (fork failed). */
fb_status fb_subprocess_wait(char *const *argv, char *const *env, double timeout_s, double grace_s,
                        volatile sig_atomic_t *stop, int flags, struct fb_subprocess_result *res);

/* Runs argv (no shell, stdin and stderr from/to /dev/null) and reads its stdout into buf (at
 * most len - 1 bytes, NUL-terminated). The exit status goes to *exit_status (127 when it
 * could not be started). FB_ERR_IO when it could not be forked. */
fb_status fb_subprocess_capture(char *const *argv, char *buf, size_t len, int *exit_status);

#endif
