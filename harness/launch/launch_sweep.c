/* The running of a sweep's launches: each launch's folder and commands (doctor, then run),
 * started one after another with a time limit, their fate recorded in DIR/launch.txt and
 * RUN/launches.csv, the summary, and `fabricbench report` at the end. The signal flag that
 * SIGINT and SIGTERM raise lives here, with all that reads it. */
#define _GNU_SOURCE
#include "launch_sweep.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "csv.h"
#include "log.h"
#include "progress.h"

enum { GRACE_S = 10 };

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* dir holds 4096 bytes: the root's 3800 and a variant's 160 fit. */
static void launch_dir(const struct fb_launch_sweep *s, size_t k, char dir[4096])
{
    if (s->nvariants == 1)
        snprintf(dir, 4096, "%s", s->root);
    else
        snprintf(dir, 4096, "%s/%s", s->root, s->variants[k].name);
}

/* The argv (and environment additions) of doctor or run for launch k. */
static fb_status build(const struct fb_launch_sweep *s, size_t k, bool doctor, struct fb_strv *argv,
                       struct fb_strv *env)
{
    struct fb_strv tail = {0};
    char dir[4096], path[4200];
    fb_status st;

    launch_dir(s, k, dir);
    if (doctor) {
        snprintf(path, sizeof path, "%s/doctor.json", dir);
        st = fb_strv_push(&tail, "doctor");
        if (st == FB_OK)
            st = fb_strv_push(&tail, "--json");
        if (st == FB_OK)
            st = fb_strv_push(&tail, path);
        /* doctor opens the backend and collectives the run will */
        if (st == FB_OK && strcmp(s->backend, "auto") != 0 &&
            (st = fb_strv_push(&tail, "--backend")) == FB_OK)
            st = fb_strv_push(&tail, s->backend);
        if (st == FB_OK && strcmp(s->coll, "auto") != 0 &&
            (st = fb_strv_push(&tail, "--coll")) == FB_OK)
            st = fb_strv_push(&tail, s->coll);
    } else {
        st = fb_strv_push(&tail, "run");
        if (st == FB_OK)
            st = fb_strv_push(&tail, "--out");
        if (st == FB_OK)
            st = fb_strv_push(&tail, dir);
        if (st == FB_OK && s->force)
            st = fb_strv_push(&tail, "--force");
        for (int i = 0; st == FB_OK && i < s->nrun; i++)
            st = fb_strv_push(&tail, s->run_args[i]);
    }
    if (st == FB_OK)
        st = fb_launch_command(&s->launch, &s->variants[k], s->vars, s->nvars, s->exe,
                               (const char *const *)tail.v, tail.n, argv, env);
    fb_strv_free(&tail);
    return st;
}

static const char *status_word(const struct fb_launch_outcome *o)
{
    if (!o->ran) /* launched, never seen to end: the sweep was killed during it */
        return o->started ? "started" : "not_run";
    if (o->run.interrupted)
        return "interrupted";
    if (o->run.timed_out)
        return "timeout";
    return o->run.exit_status == 0 ? "ok" : "failed";
}

/* RUN/launches.csv with a row per launch done so far, written atomically. */
static fb_status write_launches(const struct fb_launch_sweep *s)
{
    struct fb_atomic_file af;
    char path[4200];
    const char *fields[FB_LAUNCH_MAX_VARS + 12];
    size_t n;
    fb_status st;

    snprintf(path, sizeof path, "%s/launches.csv", s->root);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    n = 0;
    fields[n++] = "variant";
    fields[n++] = "launcher";
    fields[n++] = "binding";
    for (size_t i = 0; i < s->nvars; i++)
        fields[n++] = s->vars[i].name;
    fields[n++] = "status";
    fields[n++] = "exit_status";
    fields[n++] = "wall_s";
    fields[n++] = "doctor_exit_status";
    fields[n++] = "run_dir";
    fields[n++] = "command";
    if (fb_csv_row(af.f, fields, n) != 0)
        st = FB_ERR_IO;
    for (size_t k = 0; k < s->nvariants && st == FB_OK; k++) {
        const struct fb_launch_outcome *o = &s->outcomes[k];
        char exit_s[16], wall[32], doctor[16];
        if (!o->started && !o->ran) /* (ran alone: stopped during doctor, recorded so) */
            continue;
        exit_s[0] = wall[0] = '\0'; /* unknown until it ends */
        if (o->ran) {
            snprintf(exit_s, sizeof exit_s, "%d", o->run.exit_status);
            snprintf(wall, sizeof wall, "%.3f", o->run.wall_s);
        }
        if (o->doctor_ran)
            snprintf(doctor, sizeof doctor, "%d", o->doctor.exit_status);
        else
            doctor[0] = '\0';
        n = 0;
        fields[n++] = s->variants[k].name;
        fields[n++] = s->launch.launcher == FB_LAUNCHER_SRUN ? "srun" : "mpirun";
        fields[n++] = s->variants[k].binding == FB_BIND_NONE   ? "none"
                      : s->variants[k].binding == FB_BIND_CORE ? "core"
                                                               : "socket";
        for (size_t i = 0; i < s->nvars; i++)
            fields[n++] = s->variants[k].values[i];
        fields[n++] = status_word(o);
        fields[n++] = exit_s;
        fields[n++] = wall;
        fields[n++] = doctor;
        fields[n++] = s->variants[k].name; /* relative to launches.csv */
        fields[n++] = o->command ? o->command : "";
        if (fb_csv_row(af.f, fields, n) != 0)
            st = FB_ERR_IO;
    }
    if (st != FB_OK) {
        fb_atomic_abort(&af);
        return st;
    }
    return fb_atomic_commit(&af);
}

/* DIR/launch.txt: the exact commands of the launch that made this run folder, and their
 * fate, so a lone run folder says how it was launched. */
static void write_launch_txt(const struct fb_launch_sweep *s, size_t k, const char *doctor_cmd)
{
    const struct fb_launch_outcome *o = &s->outcomes[k];
    char dir[4096], path[4200], *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return;
    launch_dir(s, k, dir);
    snprintf(path, sizeof path, "%s/launch.txt", dir);
    fprintf(f, "# fabricbench sweep: launch %zu of %zu, variant %s\n", k + 1, s->nvariants,
            s->variants[k].name);
    if (o->doctor_ran)
        fprintf(f, "doctor: %s\ndoctor_exit_status: %d\n", doctor_cmd, o->doctor.exit_status);
    fprintf(f, "run: %s\nstatus: %s\nexit_status: %d\nwall_s: %.3f\n",
            o->command ? o->command : "", status_word(o), o->run.exit_status, o->run.wall_s);
    fclose(f);
    if (text && fb_atomic_write(path, text, len) != FB_OK)
        fb_warn("sweep: cannot write '%s'", path);
    free(text);
}

/* Runs one launcher command; prints it first, and a run is recorded in launches.csv as it
 * starts (status `started`), so a sweep killed during it leaves its row. */
static fb_status launch_one(struct fb_launch_sweep *s, size_t k, bool doctor, char **line,
                            struct fb_subprocess_result *res)
{
    struct fb_strv argv = {0}, env = {0};
    fb_status st = build(s, k, doctor, &argv, &env);

    *line = NULL;
    if (st == FB_OK && !(*line = fb_launch_command_line(&env, &argv)))
        st = FB_ERR_NOMEM;
    if (st == FB_OK) {
        printf("%s\n", *line);
        fflush(stdout);
    }
    if (st == FB_OK && !s->dry_run && !doctor) {
        s->outcomes[k].started = true;
        if (s->nvariants > 1 && write_launches(s) != FB_OK)
            fb_warn("sweep: cannot write %s/launches.csv", s->root);
    }
    if (st == FB_OK && !s->dry_run) {
        st = fb_subprocess_wait(argv.v, env.v, s->timeout_s, GRACE_S, &stop_requested, 0, res);
        if (st != FB_OK) {
            fb_error("sweep: cannot start '%s': %s", argv.v[0], strerror(errno));
            /* never started after all: its row goes again */
            if (!doctor && s->outcomes[k].started) {
                s->outcomes[k].started = false;
                if (s->nvariants > 1 && write_launches(s) != FB_OK)
                    fb_warn("sweep: cannot write %s/launches.csv", s->root);
            }
        }
        else if (res->timed_out)
            fb_error("sweep: %s %s ran past --timeout %gs: stopped (recorded as exit status %d)",
                     s->variants[k].name, doctor ? "doctor" : "run", s->timeout_s,
                     res->exit_status);
    }
    fb_strv_free(&argv);
    fb_strv_free(&env);
    return st;
}

/* `fabricbench report RUN`, when this binary has it. */
static void report(const struct fb_launch_sweep *s)
{
    char *help[] = {(char *)s->exe, "report", "--help", NULL};
    char *argv[] = {(char *)s->exe, "report", (char *)s->root, NULL};
    struct fb_subprocess_result res;

    if (fb_subprocess_wait(help, NULL, 30, 2, NULL, FB_SUBPROCESS_SILENT, &res) != FB_OK ||
        res.exit_status != 0) {
        printf("sweep: `fabricbench report` is not available in this build: no summary.md\n");
        return;
    }
    printf("%s report %s\n", s->exe, s->root);
    fflush(stdout);
    if (fb_subprocess_wait(argv, NULL, 0, 2, &stop_requested, 0, &res) == FB_OK &&
        res.exit_status != 0)
        fb_warn("sweep: report exited %d", res.exit_status);
}

int fb_launch_sweep_main(struct fb_launch_sweep *s)
{
    struct fb_progress progress;
    struct sigaction sa;
    int failed = 0;
    fb_status st = FB_OK;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* a dry run has no times to estimate: its launches are named on stdout instead */
    fb_progress_init(&progress, s->dry_run ? NULL : stderr, "launch ");
    fb_progress_plan(&progress, "launches", (long)s->nvariants);
    printf("# fabricbench sweep: %zu launch%s of %d rank%s with %s into %s%s\n", s->nvariants,
           s->nvariants == 1 ? "" : "es", s->launch.np, s->launch.np == 1 ? "" : "s",
           s->launch.launcher == FB_LAUNCHER_SRUN ? "srun" : "mpirun", s->root,
           s->dry_run ? " (dry run: nothing is run)" : "");
    fflush(stdout);
    for (size_t k = 0; k < s->nvariants && !stop_requested; k++) {
        struct fb_launch_outcome *o = &s->outcomes[k];
        char dir[4096], *doctor_cmd = NULL;

        fb_progress_begin(&progress, "launches", s->variants[k].name);
        if (s->dry_run)
            printf("# launch %zu/%zu: %s\n", k + 1, s->nvariants, s->variants[k].name);
        launch_dir(s, k, dir);
        if (!s->dry_run && fb_mkdirs(dir) != 0) {
            fb_error("sweep: cannot create '%s': %s", dir, strerror(errno));
            st = FB_ERR_IO;
            break;
        }
        if (!s->no_doctor) {
            if ((st = launch_one(s, k, true, &doctor_cmd, &o->doctor)) != FB_OK)
                break;
            o->doctor_ran = !s->dry_run;
            if (o->doctor_ran && o->doctor.exit_status != 0 && !o->doctor.interrupted)
                fb_warn("sweep: %s: doctor exited %d (a FAIL above, or it could not run); "
                        "measuring anyway", s->variants[k].name, o->doctor.exit_status);
        }
        if (stop_requested) {
            o->run.interrupted = true; /* stopped during doctor: the run never started */
            o->run.exit_status = 130;
        } else if ((st = launch_one(s, k, false, &o->command, &o->run)) != FB_OK) {
            free(doctor_cmd);
            break;
        }
        if (s->dry_run) {
            free(doctor_cmd);
            continue;
        }
        o->ran = true;
        if (o->run.exit_status != 0 || o->run.interrupted) {
            failed++;
            fb_error("sweep: %s: run %s (exit status %d)%s", s->variants[k].name,
                     o->run.interrupted ? "interrupted"
                     : o->run.timed_out ? "timed out"
                                        : "failed",
                     o->run.exit_status, stop_requested ? "" : "; going on");
        }
        write_launch_txt(s, k, doctor_cmd ? doctor_cmd : "");
        free(doctor_cmd);
        if (s->nvariants > 1 && write_launches(s) != FB_OK)
            fb_warn("sweep: cannot write %s/launches.csv", s->root);
    }
    fb_progress_end(&progress);
    if (s->dry_run)
        return st == FB_OK ? 0 : 1;
    if (stop_requested) {
        fb_error("sweep: interrupted; the launches so far are in %s", s->root);
        return 1;
    }
    printf("\n# sweep: %zu launch%s, %d failed\n", s->nvariants, s->nvariants == 1 ? "" : "es",
           failed);
    for (size_t k = 0; k < s->nvariants; k++)
        printf("#   %-40s %-8s exit %3d  %8.1f s\n", s->variants[k].name,
               status_word(&s->outcomes[k]), s->outcomes[k].run.exit_status,
               s->outcomes[k].run.wall_s);
    fflush(stdout);
    if (!s->no_report)
        report(s);
    printf("sweep folder: %s%s\n", s->root,
           s->nvariants > 1 ? " (launches.csv, one folder per launch)" : "");
    return st != FB_OK || failed ? 1 : 0;
}
