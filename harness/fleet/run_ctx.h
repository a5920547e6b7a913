/* What a command built on `run`'s machinery hands the work it orders (cli/run_mode.h): the
 * session, the options, the run folder and the rest of what run opened. A fleet command's work
 * (soak.h) takes it; cli/cmd_run.c makes it. */
#ifndef FB_RUN_CTX_H
#define FB_RUN_CTX_H

#include "options.h"
#include "results.h"
#include "session.h"
#include "telemetry.h"

/* Everything is run's and stays open while the work runs. */
struct fb_run_ctx {
    struct fb_session *s;
    struct fb_options *opt;
    struct fb_results *res;    /* rank 0: the run folder; NULL elsewhere */
    const char *nccl_log_path; /* this rank's NCCL log in the run folder; "" when none */
    struct fb_telemetry *tel;  /* GPU telemetry (telemetry.h); NULL when off */
};

#endif
