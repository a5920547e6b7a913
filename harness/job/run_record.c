/* The run's record and the watchdog's stop hook that writes it (run_record.h). */
#include "run_record.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "json_file.h"
#include "log.h"
#include "results.h"
#include "run_folder.h"
#include "watchdog.h"

static struct {
    pthread_mutex_t mu;         /* guards the fields below */
    pthread_mutex_t results_mu; /* the main thread's, while it changes the results */
    pthread_mutex_t also_mu;    /* held while `also` runs, and to change it */
    cJSON *env;
    char env_path[4300];
    struct fb_results *res;
    bool marked;
    bool current; /* results.csv on disk is current: the stop hook leaves it be */
    void (*also)(void *arg, const char *state, const char *detail); /* under also_mu */
    void *also_arg;
} rec = {.mu = PTHREAD_MUTEX_INITIALIZER, .results_mu = PTHREAD_MUTEX_INITIALIZER,
           .also_mu = PTHREAD_MUTEX_INITIALIZER};

/* env's run_status and run_stop for the end state */
static void mark_env(cJSON *env, const char *state, const char *detail)
{
    cJSON *stop = cJSON_CreateObject();

    cJSON_ReplaceItemInObject(env, "run_status", cJSON_CreateString(state));
    cJSON_DeleteItemFromObject(env, "run_stop");
    if (stop && strcmp(state, "complete") != 0) {
        cJSON_AddStringToObject(stop, "state", state);
        cJSON_AddStringToObject(stop, "detail", detail ? detail : "");
        cJSON_AddItemToObject(env, "run_stop", stop);
    } else {
        cJSON_Delete(stop);
    }
}

/* env.json at `path` (*env, NULL when missing) and whether it still says "running": the run not
 * yet marked by any rank. FB_ERR_USAGE with err set when it cannot be read. */
static fb_status env_on_disk(const char *path, cJSON **env, bool *running, char *err,
                             size_t errlen)
{
    const cJSON *status;
    fb_status st = fb_json_file_read(path, true, env, err, errlen);

    *running = false;
    if (st != FB_OK || !*env)
        return st;
    status = cJSON_GetObjectItemCaseSensitive(*env, "run_status");
    *running = cJSON_IsString(status) && strcmp(status->valuestring, "running") == 0;
    return FB_OK;
}

fb_status fb_run_record_mark(const char *state, const char *detail)
{
    fb_status st = FB_OK;

    pthread_mutex_lock(&rec.mu);
    if (rec.env && !rec.marked) {
        cJSON *disk = NULL;
        bool running = false;
        char err[512];
        rec.marked = true;
        /* another rank (locate's deputy) marked it first, while this one was frozen: it stands */
        if (env_on_disk(rec.env_path, &disk, &running, err, sizeof err) != FB_OK || !disk ||
            running) {
            mark_env(rec.env, state, detail);
            st = fb_json_file_write(rec.env_path, rec.env);
        }
        cJSON_Delete(disk);
    }
    pthread_mutex_unlock(&rec.mu);
    return st;
}

fb_status fb_run_record_mark_file(const char *env_path, const char *state, const char *detail,
                                  bool *marked)
{
    cJSON *env = NULL;
    char err[512];
    bool running;
    fb_status st;

    *marked = false;
    if ((st = env_on_disk(env_path, &env, &running, err, sizeof err)) != FB_OK) {
        fb_error("%s", err);
        return st;
    }
    /* missing: the run folder is not shared with rank 0's host */
    if (running) {
        mark_env(env, state, detail);
        if ((st = fb_json_file_write(env_path, env)) == FB_OK)
            *marked = true;
    }
    cJSON_Delete(env);
    return st;
}

void fb_run_record_lock(void) { pthread_mutex_lock(&rec.results_mu); }
void fb_run_record_unlock(void) { pthread_mutex_unlock(&rec.results_mu); }

/* The watchdog thread: writes the points kept in memory, unless the main thread holds the
 * results for longer than half a second (it is stuck while changing them: the file on disk is
 * then the last whole one). */
static void save_results(struct fb_results *res)
{
    if (!res)
        return;
    if (!fb_clock_lock_within(&rec.results_mu, 0.5)) {
        fb_warn("results.csv: not rewritten (the run was changing it); it holds the points up "
                "to its last rewrite");
        return;
    }
    (void)fb_results_flush(res);
    pthread_mutex_unlock(&rec.results_mu);
}

/* The stop hook: the run is marked first (mpirun gives its ranks 1 s after SIGTERM before
 * SIGKILL), then its points are written. */
static void on_stop(void *arg, const char *state, const char *detail)
{
    struct fb_results *res;
    bool current;

    (void)arg;
    (void)fb_run_record_mark(state, detail);
    pthread_mutex_lock(&rec.mu);
    res = rec.res;
    current = rec.current;
    pthread_mutex_unlock(&rec.mu);
    if (!current)
        save_results(res);
    pthread_mutex_lock(&rec.also_mu);
    if (rec.also)
        rec.also(rec.also_arg, state, detail);
    pthread_mutex_unlock(&rec.also_mu);
    /* the job is stopped next (MPI_Abort): the folder's run lock goes now; an interrupted run
     * still stops at its next check and removes it itself (fb_results_release) */
    if (res && res->locked && strcmp(state, "interrupted") != 0)
        fb_run_folder_unlock(res->dir);
}

void fb_run_record_file_current(bool on)
{
    pthread_mutex_lock(&rec.mu);
    rec.current = on;
    pthread_mutex_unlock(&rec.mu);
}

void fb_run_record_also(void (*fn)(void *arg, const char *state, const char *detail), void *arg)
{
    pthread_mutex_lock(&rec.also_mu);
    rec.also = fn;
    rec.also_arg = arg;
    pthread_mutex_unlock(&rec.also_mu);
}

void fb_run_record_set(cJSON *env, const char *env_path, struct fb_results *res)
{
    bool any = env || res;

    if (!any)
        fb_watchdog_on_stop(NULL, NULL);
    pthread_mutex_lock(&rec.mu);
    rec.env = env;
    snprintf(rec.env_path, sizeof rec.env_path, "%s", env_path ? env_path : "");
    rec.res = res;
    rec.marked = false;
    pthread_mutex_unlock(&rec.mu);
    if (any)
        fb_watchdog_on_stop(on_stop, NULL);
}
