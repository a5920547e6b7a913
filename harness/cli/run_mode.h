/* A command built on `run`'s machinery (options, MPI, session, run folder, env.json, NCCL's
 * log, telemetry, the watchdog and the run's end state) that does its own work in place of
 * run's list of benchmarks: `soak`, whose work is the fleet layer's (fleet/soak.h). cmd_run.c
 * owns the machinery; a mode brings its work. */
#ifndef FB_RUN_MODE_H
#define FB_RUN_MODE_H

#include <stddef.h>

#include "options.h"
#include "run_ctx.h" /* what a mode's work may use (fleet/run_ctx.h) */
#include "session.h"
#include "status.h"

struct fb_run_mode {
    const char *name;  /* "soak": its messages, and MPI's and the watchdog's command */
    void (*usage)(void); /* its --help */
    /* After run's options are parsed and before MPI starts: the mode's own checks and
     * defaults. FB_ERR_USAGE with one line in err (printed as "NAME: err", exit 2). */
    fb_status (*prepare)(void *arg, struct fb_options *o, char *err, size_t errlen);
    /* Collective, may be NULL: after MPI and the session are up and before the run folder
     * exists, the checks that need the job (the mode's plan on these ranks). FB_ERR_USAGE when
     * the mode cannot run so, rank 0 having said why: exit 2, nothing written. */
    fb_status (*check)(void *arg, struct fb_session *s, struct fb_options *o);
    /* Collective: the work. Returns the exit code; *worst the status that stopped it (FB_OK
     * when none) and `stopped` a line saying what stopped, for env.json. */
    int (*work)(void *arg, const struct fb_run_ctx *ctx, fb_status *worst, char *stopped,
                size_t stoppedlen);
    void *arg;
};

/* `run`'s whole command with `mode` doing the work (NULL: run's benchmarks). argv[0] is the
 * command's name. Returns the process's exit code. */
int fb_cmd_run_mode(int argc, char **argv, const struct fb_run_mode *mode);

#endif
