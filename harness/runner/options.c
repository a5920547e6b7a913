/* Defaults of the run options. */
#include "options.h"

#include <string.h>

void fb_options_defaults(struct fb_options *o)
{
    memset(o, 0, sizeof *o);
    strcpy(o->backend, "auto");
    strcpy(o->coll, "auto");
    strcpy(o->matrix, "auto");
    strcpy(o->mpi_thread, "auto");
    o->results_root = "results";
    o->warmup = 5;
    o->iters = 0;
    o->trials = 10;
    o->trial_ms = 5.0;
    o->dtype = FB_DTYPE_FLOAT32;
    o->classes = 14;
    o->telemetry_ms = 100;
    o->timeout_s = -1.0; /* fb_cli_parse_run derives it once --trial-ms is known */
    strcpy(o->dataset, "chestxray");
    strcpy(o->optimizer, "adam"); /* CheXNet trained with Adam */
    strcpy(o->overlap, "on");
    o->mix_scale = 1.0;
    strcpy(o->timing, "batch");
}

double fb_options_timeout_default(double trial_ms)
{
    double three_trials_s = 3.0 * trial_ms / 1e3;
    return three_trials_s > 300.0 ? three_trials_s : 300.0;
}
