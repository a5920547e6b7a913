/* Running the launches of `fabricbench sweep`, one after another: doctor, then run, each
 * command built for exec, printed and recorded (DIR/launch.txt, and RUN/launches.csv when there
 * are several), the summary, then `fabricbench report` as a child process. SIGINT and SIGTERM
 * stop the launch under way and the sweep. No MPI: the sweep runs outside any launch. */
#ifndef FB_LAUNCH_SWEEP_H
#define FB_LAUNCH_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "launch.h"
#include "subprocess.h"

/* What one launch did. */
struct fb_launch_outcome {
    bool started; /* the run was launched (recorded in launches.csv before it ran) */
    bool ran;     /* ... and ended */
    struct fb_subprocess_result doctor, run;
    bool doctor_ran;
    char *command; /* the run's command line */
};

/* The launches of a sweep and what they did. The caller fills everything but the outcomes'
 * contents and owns every pointer: vars (fb_launch_var_free), variants, outcomes and each
 * outcome's command (free). */
struct fb_launch_sweep {
    struct fb_launch launch;
    struct fb_launch_var vars[FB_LAUNCH_MAX_VARS];
    size_t nvars;
    bool force, dry_run, no_doctor, no_report;
    double timeout_s;
    char **run_args; /* after "--" */
    int nrun;
    char backend[16], coll[16]; /* of the run arguments, given to doctor as well */
    struct fb_launch_variant *variants;
    size_t nvariants;
    struct fb_launch_outcome *outcomes; /* nvariants of them, zeroed */
    char exe[4096], root[3800]; /* room for "/<variant>/doctor.json" in 4096 */
};

/* Runs the sweep's launches in order, each in its folder (root itself for a lone variant, else
 * root/<variant>, created when missing): `doctor --json DIR/doctor.json` unless
 * no_doctor, then `run --out DIR RUN-ARGS`, each printed before it starts and limited to
 * timeout_s (<= 0: none). A failed launch is recorded and the next one runs. Writes
 * DIR/launch.txt after each launch, root/launches.csv as well when there are several, prints
 * the summary, then runs `exe report root` unless no_report. Installs handlers for SIGINT and
 * SIGTERM: either stops the launch under way and ends the sweep. With dry_run the commands are
 * only printed: nothing is run or written. Fills s->outcomes (each command malloc'ed, the
 * caller frees it). Returns the exit status: 0 when every launch succeeded, else 1. Not
 * collective: no MPI. */
int fb_launch_sweep_main(struct fb_launch_sweep *s);

#endif
