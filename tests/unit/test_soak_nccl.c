/* soak's NCCL counters (harness/cli/soak_health.c: fb_soak_nccl_read) counted through nccllog's
 * classifier: every release's wording of a port error and a failed device, the fatal device
 * event nccl-log FAILs on (which soak's own text match once skipped), a WARN line longer than
 * that match's 2048-byte buffer, an INFO line quoting the words (not NCCL's event) and "already
 * marked as failed" (not a new one); each counter equal to what nccl-log's report counts in the
 * same file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_report.h"
#include "soak.h"
#include "test.h"

static const struct fb_health_counter *get(const struct fb_health_set *s, const char *counter)
{
    struct fb_health_counter like = {0};
    snprintf(like.source, sizeof like.source, "nccl");
    snprintf(like.device, sizeof like.device, "rank3");
    snprintf(like.counter, sizeof like.counter, "%s", counter);
    return fb_health_find(s, &like);
}

/* The file's counters: port errors, fatal events, failed devices; each checked against the
 * report nccl-log makes of the same file. */
static void check_log(const char *path, double ports, double fatal, double failed)
{
    static const char *const names[] = {"warn_port_error", "warn_fatal_event",
                                        "warn_device_failed"};
    static const enum fb_nccl_event events[] = {FB_NCCL_EV_PORT_ERROR, FB_NCCL_EV_FATAL,
                                                FB_NCCL_EV_DEV_FAILED};
    const double want[] = {ports, fatal, failed};
    struct fb_health_set s = {0};
    struct fb_soak_nccl from_start = {0};
    struct fb_nccl_report r;
    char err[512] = "";

    CHECK(fb_soak_nccl_read(&from_start, path, 3, &s) == FB_OK);
    CHECK(s.n == 3);
    /* an absent log: no report to compare with, soak counts 0 */
    if (access(path, F_OK) != 0)
        memset(&r, 0, sizeof r);
    else
        CHECK(fb_nccl_report_files(&path, 1, &r, err, sizeof err) == FB_OK);
    for (int i = 0; i < 3; i++) {
        const struct fb_health_counter *c = get(&s, names[i]);
        CHECK(c != NULL);
        if (!c)
            continue;
        CHECK(c->judged && isnan(c->max));
        if (c->value != want[i])
            fprintf(stderr, "%s: %s\n", path, names[i]);
        CHECK_NEAR(c->value, want[i], 0);
        /* nccl-log counts the same lines */
        CHECK_NEAR(c->value, (double)r.events[events[i]], 0);
    }
    fb_nccl_report_release(&r);
    fb_health_set_free(&s);
}

int main(void)
{
    char tmp[] = "/tmp/fb_test_soak_nccl.XXXXXX", log[4200], cmd[4300], *longline;
    struct fb_health_set s = {0};
    size_t n;

    if (!mkdtemp(tmp))
        return 2;
    /* the wordings to 2.22.3, and an INFO line quoting the words (not NCCL's event) */
    snprintf(log, sizeof log, "%s/old.log", tmp);
    fb_test_put(log, "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n"
             "h:1:3 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : "
             "port error\n"
             "h:1:3 [0] NCCL INFO Got async event : port error (quoted in INFO)\n"
             "h:1:3 [0] transport/net_ib.cc:120 NCCL WARN NET/IB : Device 0 marked as failed\n"
             "h:1:3 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : "
             "port error\n");
    check_log(log, 2, 0, 1);
    /* 2.23-2.28.3, 2.28.7 on, 2.29.7's failed device but not its "already marked" line */
    snprintf(log, sizeof log, "%s/new.log", tmp);
    fb_test_put(log, "[2026-03-04 10:11:12] g:1:2 [0] transport/net_ib.cc:179 NCCL WARN NET/IB : "
             "mlx5_0:1 Got async error event: port error\n"
             "[2026-03-04 10:20:00] g:1:2 [0] transport/net_ib/common.cc:134 NCCL WARN NET/IB : "
             "mlx5_0:1 Got non-fatal async event: port error(10)\n"
             "[2026-03-04 10:20:01] g:1:3 [0] transport/net_ib/p2p_resiliency.cc:312 NCCL WARN "
             "NET/IB: ncclIbResiliencyHandleDeviceFailure: Device 0 marked as failed.\n"
             "[2026-03-04 10:20:02] g:1:3 [0] transport/net_ib/p2p_resiliency.cc:312 NCCL WARN "
             "NET/IB: Device 0 was already marked as failed.\n");
    check_log(log, 2, 0, 1);
    /* what the classifier knows and soak's old text match did not count: the fatal device
     * event (2.23 on; nccl-log FAILs on it), and a port error past the 2048 bytes the match
     * read a line in (the line's second piece lacked "NCCL WARN") */
    snprintf(log, sizeof log, "%s/missed.log", tmp);
    n = 3000;
    longline = malloc(n + 400);
    CHECK(longline != NULL);
    if (longline) {
        int k = snprintf(longline, n + 400, "[2026-03-04 10:30:00] g:1:2 [0] transport/net_ib/"
                         "common.cc:140 NCCL WARN NET/IB : mlx5_1:1 async fatal event: local "
                         "catastrophic error\n"
                         "g:1:2 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 ");
        memset(longline + k, 'x', n);
        snprintf(longline + k + n, 400, " Got async event : port error\n");
        fb_test_put(log, longline);
        free(longline);
    }
    check_log(log, 1, 1, 0);
    /* no log (yet): zeros; a log that cannot be read now: no reading */
    snprintf(log, sizeof log, "%s/absent.log", tmp);
    check_log(log, 0, 0, 0);
    {
        struct fb_soak_nccl folder = {0};
        CHECK(fb_soak_nccl_read(&folder, tmp, 3, &s) == FB_OK && s.n == 0); /* a folder */
        CHECK(folder.warned);
    }
    fb_health_set_free(&s);

    /* a log read as it grows: each read takes only what was added, a line still being written
     * waits for its line end, the totals add up; a log cut shorter is read again from its start */
    {
        static const char port[] = "h:1:3 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : "
                                   "mlx5_0:1 Got async event : port error\n";
        struct fb_soak_nccl grow = {0};
        const struct fb_health_counter *c;
        FILE *f;

        snprintf(log, sizeof log, "%s/grow.log", tmp);
        fb_test_put(log, port);
        CHECK(fb_soak_nccl_read(&grow, log, 3, &s) == FB_OK);
        CHECK(grow.events[FB_NCCL_EV_PORT_ERROR] == 1 && grow.offset == (long long)strlen(port));
        fb_health_set_free(&s);
        /* a whole line and half of another (no line end yet) */
        CHECK((f = fopen(log, "a")) != NULL);
        if (f) {
            fputs(port, f);
            fwrite(port, 1, 40, f);
            fclose(f);
        }
        CHECK(fb_soak_nccl_read(&grow, log, 3, &s) == FB_OK);
        CHECK((c = get(&s, "warn_port_error")) && c->value == 2);
        CHECK(grow.offset == 2 * (long long)strlen(port));
        fb_health_set_free(&s);
        /* the rest of the cut line arrives: counted once, now */
        CHECK((f = fopen(log, "a")) != NULL);
        if (f) {
            fputs(port + 40, f);
            fclose(f);
        }
        CHECK(fb_soak_nccl_read(&grow, log, 3, &s) == FB_OK);
        CHECK((c = get(&s, "warn_port_error")) && c->value == 3);
        fb_health_set_free(&s);
        /* replaced by a shorter log: read from its start, added to the totals */
        fb_test_put(log, port);
        CHECK(fb_soak_nccl_read(&grow, log, 3, &s) == FB_OK);
        CHECK((c = get(&s, "warn_port_error")) && c->value == 4);
        CHECK(!grow.warned);
        fb_health_set_free(&s);
    }

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
