/* Reading a run's end state back from env.json. */
#include "run_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_file.h"

bool fb_run_state_incomplete(const cJSON *env, char *line, size_t len)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(env, "run_status");
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(env, "run_stop");
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(stop, "detail");

    if (!cJSON_IsString(st) || strcmp(st->valuestring, "complete") == 0)
        return false;
    if (strcmp(st->valuestring, "running") == 0)
        snprintf(line, len, "run_status 'running': the run never marked its end (its processes "
                 "were killed, or it still runs)");
    else
        snprintf(line, len, "run_status '%s'%s%s", st->valuestring,
                 cJSON_IsString(detail) && detail->valuestring[0] ? ": " : "",
                 cJSON_IsString(detail) ? detail->valuestring : "");
    return true;
}

bool fb_run_state_incomplete_dir(const char *dir, char *line, size_t len)
{
    char path[4200], err[600];
    cJSON *env = NULL;
    bool incomplete = false;

    snprintf(path, sizeof path, "%s/env.json", dir);
    if (fb_json_file_read(path, false, &env, err, sizeof err) == FB_OK)
        incomplete = fb_run_state_incomplete(env, line, len);
    cJSON_Delete(env);
    return incomplete;
}
