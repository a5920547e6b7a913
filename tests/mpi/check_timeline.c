/* Checks a step benchmark's timeline.json: valid JSON in Chrome's trace format; per rank, a
 * process name and the five track names; for every recorded step of every rank one step, data
 * wait, copy, forward, backward and update span and one all-reduce span per fusion bucket; and
 * the ranks' clocks aligned: bucket i's all-reduce, a collective, overlaps in time across
 * ranks (within a tolerance). Usage: check_timeline FILE RANKS STEPS THRESHOLD_BYTES DTYPE_BYTES.
 * Exit 0 when all holds, 1 with a line per failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "densenet.h"
#include "fusion.h"

enum { MAX_RANKS = 16, MAX_STEPS = 16, MAX_BUCKETS = 512, PHASES = 6 };
static const char *const phases[PHASES] = {"step", "data wait", "copy", "forward", "backward",
                                           "update"};
static int fails;

#define FAIL(...) (fprintf(stderr, "FAIL: " __VA_ARGS__), fputc('\n', stderr), fails++)

int main(int argc, char **argv)
{
    static int phase_count[MAX_RANKS][MAX_STEPS][PHASES], bucket_count[MAX_RANKS][MAX_STEPS];
    static double bstart[MAX_RANKS][MAX_BUCKETS], bend[MAX_RANKS][MAX_BUCKETS];
    static int names[MAX_RANKS];
    struct fb_densenet d;
    struct fb_bucket *plan;
    size_t nbuckets;
    FILE *f;
    char *text;
    long len;
    cJSON *root, *events, *e;
    int ranks, steps;

    if (argc != 6)
        return fprintf(stderr, "usage: check_timeline FILE RANKS STEPS THRESHOLD DTYPE_BYTES\n"), 2;
    ranks = atoi(argv[2]);
    steps = atoi(argv[3]);
    if (ranks < 1 || ranks > MAX_RANKS || steps < 1 || steps > MAX_STEPS ||
        fb_densenet121(14, &d) != FB_OK ||
        fb_fusion_plan(&d, (size_t)atoi(argv[5]), strtoull(argv[4], NULL, 10), &plan, &nbuckets) !=
            FB_OK || nbuckets > MAX_BUCKETS)
        return fprintf(stderr, "bad arguments\n"), 2;
    if (!(f = fopen(argv[1], "rb")))
        return FAIL("cannot open '%s'", argv[1]), 1;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = calloc((size_t)len + 1, 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len)
        return FAIL("cannot read '%s'", argv[1]), 1;
    fclose(f);
    if (!(root = cJSON_Parse(text)))
        return FAIL("'%s' is not valid JSON", argv[1]), 1;
    if (!cJSON_IsArray(events = cJSON_GetObjectItem(root, "traceEvents")))
        return FAIL("no traceEvents array"), 1;
    cJSON_ArrayForEach(e, events) {
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph")),
                   *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
        cJSON *args = cJSON_GetObjectItem(e, "args");
        int pid = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "pid")), step;
        double ts = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "ts")),
               dur = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "dur"));
        if (!ph || !name || pid < 0 || pid >= ranks) {
            FAIL("an event without ph, name or a pid in 0..%d", ranks - 1);
            continue;
        }
        if (strcmp(ph, "M") == 0) {
            names[pid]++;
            continue;
        }
        if (strcmp(ph, "X") != 0 || !(ts >= 0) || !(dur >= 0)) {
            FAIL("event '%s' of rank %d: ph %s, ts %g, dur %g", name, pid, ph, ts, dur);
            continue;
        }
        step = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(args, "step"));
        if (step < 0 || step >= steps) {
            FAIL("event '%s' of rank %d in step %d, outside 0..%d", name, pid, step, steps - 1);
            continue;
        }
        if (strncmp(name, "allreduce ", 10) == 0) {
            int b = atoi(name + 10);
            bucket_count[pid][step]++;
            if (b >= 0 && b < (int)nbuckets && step == 0) {
                bstart[pid][b] = ts;
                bend[pid][b] = ts + dur;
            }
            continue;
        }
        for (int p = 0; p < PHASES; p++)
            phase_count[pid][step][p] += strcmp(name, phases[p]) == 0;
    }
    for (int r = 0; r < ranks; r++) {
        if (names[r] != 6)
            FAIL("rank %d: %d metadata events, expected 6 (process and 5 tracks)", r, names[r]);
        for (int s = 0; s < steps; s++) {
            for (int p = 0; p < PHASES; p++)
                if (phase_count[r][s][p] != 1)
                    FAIL("rank %d step %d: %d '%s' spans, expected 1", r, s, phase_count[r][s][p],
                         phases[p]);
            if (bucket_count[r][s] != (int)nbuckets)
                FAIL("rank %d step %d: %d allreduce spans, expected %zu buckets", r, s,
                     bucket_count[r][s], nbuckets);
        }
    }
    /* A collective cannot end on one rank before it started on another: with clocks aligned
     * (to a barrier's skew, 2 ms allowed), bucket i's spans overlap across ranks. */
    for (int r = 1; r < ranks; r++)
        for (size_t b = 0; b < nbuckets; b++)
            if (bend[r][b] + 2000 < bstart[0][b] || bend[0][b] + 2000 < bstart[r][b])
                FAIL("bucket %zu of step 0: rank 0 [%.0f, %.0f] and rank %d [%.0f, %.0f] do not "
                     "overlap: clocks not aligned", b, bstart[0][b], bend[0][b], r, bstart[r][b],
                     bend[r][b]);
    cJSON_Delete(root);
    free(text);
    free(plan);
    fb_densenet_free(&d);
    if (fails)
        fprintf(stderr, "%d check(s) failed\n", fails);
    else
        printf("timeline: %d ranks x %d steps, %zu buckets per step: all spans present\n", ranks,
               steps, nbuckets);
    return fails ? 1 : 0;
}
