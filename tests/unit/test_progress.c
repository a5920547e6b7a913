/* The progress estimate: a group's own mean time per point, else the run's mean; nothing
 * finished means no estimate; durations and lines formatted as the terminal shows them; the
 * counter never passes the total; the label of a point. */
#include "progress.h"
#include "run_plan.h"
#include "test.h"

int main(void)
{
    /* a: 4 of 10 done in 8 s (2 s each); b: 0 of 5 done; c: 3 of 3 done in 30 s */
    struct fb_progress_group g[3] = {
        {"a", 10, 4, 8.0}, {"b", 5, 0, 0.0}, {"c", 3, 3, 30.0}};
    /* a's 6 left at its own 2 s; b's 5 at the run's mean (38 s / 7 points); c has none left */
    CHECK_NEAR(fb_progress_eta(g, 3), 6 * 2.0 + 5 * (38.0 / 7), 1e-9);
    CHECK_NEAR(fb_progress_eta(g, 1), 12.0, 1e-12);
    /* nothing finished: no basis */
    struct fb_progress_group none[2] = {{"a", 3, 0, 0.0}, {"b", 2, 0, 0.0}};
    CHECK(fb_progress_eta(none, 2) < 0);
    /* all done: nothing left */
    struct fb_progress_group all[1] = {{"a", 2, 2, 5.0}};
    CHECK(fb_progress_eta(all, 1) == 0.0);
    /* more done than planned (a plan that grew) never makes time negative */
    struct fb_progress_group over[2] = {{"a", 2, 3, 6.0}, {"b", 1, 0, 0.0}};
    CHECK_NEAR(fb_progress_eta(over, 2), 2.0, 1e-12);

    char buf[128];
    fb_progress_hms(0.0, buf, sizeof buf);
    CHECK_STR(buf, "0:00");
    fb_progress_hms(59.6, buf, sizeof buf);
    CHECK_STR(buf, "1:00");
    fb_progress_hms(70.0, buf, sizeof buf);
    CHECK_STR(buf, "1:10");
    fb_progress_hms(3599.4, buf, sizeof buf);
    CHECK_STR(buf, "59:59");
    fb_progress_hms(3600.0 * 2 + 61, buf, sizeof buf);
    CHECK_STR(buf, "2:01:01");
    fb_progress_hms(-1.0, buf, sizeof buf);
    CHECK_STR(buf, "?");

    fb_progress_line(12, 40, "allreduce in_place 1M x2 ranks", 32.0, 70.0, buf, sizeof buf);
    CHECK_STR(buf, "[12/40] allreduce in_place 1M x2 ranks | 0:32 elapsed, ~1:10 left");
    fb_progress_line(3, 140, "h2d", 1.0, -1.0, buf, sizeof buf);
    CHECK_STR(buf, "[  3/140] h2d | 0:01 elapsed, ~? left");

    /* The counter: 1..N against the plan, a silent progress still counts */
    struct fb_progress p;
    fb_progress_init(&p, NULL, "");
    CHECK(fb_progress_plan(&p, "a", 2) == FB_OK);
    CHECK(fb_progress_plan(&p, "b", 1) == FB_OK);
    CHECK(fb_progress_plan(&p, "a", 1) == FB_OK); /* a second group of the scaling curve */
    CHECK(p.total == 4 && p.ngroups == 2 && p.groups[0].total == 3);
    fb_progress_begin(&p, "a", "x");
    fb_progress_begin(&p, "a", "x");
    fb_progress_end(&p);
    fb_progress_end(&p); /* twice: counted once */
    CHECK(p.started == 2 && p.groups[0].done == 2 && p.groups[0].seconds >= 0.0);
    fb_progress_begin(&p, "a", "x");
    fb_progress_begin(&p, "a", "x"); /* beyond a's plan: the total grows */
    CHECK(p.started == 4 && p.total == 5 && p.groups[0].total == 4);
    fb_progress_begin(NULL, "a", "x"); /* no progress: nothing happens */
    fb_progress_end(NULL);

    /* The printed line, through a file */
    FILE *f = tmpfile();
    char line[256] = "";
    fb_progress_init(&p, f, "launch ");
    fb_progress_plan(&p, "launches", 4);
    fb_progress_begin(&p, "launches", "bind-none");
    rewind(f);
    CHECK(fgets(line, sizeof line, f) != NULL);
    CHECK_STR(line, "launch [1/4] bind-none | 0:00 elapsed, ~? left\n");
    fclose(f);

    /* Labels */
    struct fb_case c = {.name = "in_place", .bytes = 1 << 20, .active = FB_ALL_RANKS};
    fb_run_plan_label("allreduce", &c, 2, buf, sizeof buf);
    CHECK_STR(buf, "allreduce in_place 1M x2 ranks");
    struct fb_case h = {.name = "pinned_h2d", .bytes = 64 << 10, .active = 1};
    fb_run_plan_label("h2d", &h, 2, buf, sizeof buf);
    CHECK_STR(buf, "h2d pinned_h2d 64K rank 1");
    struct fb_case pr = {.name = "matrix_uni", .bytes = 8, .active = 0, .pair = true, .peer = 3};
    fb_run_plan_label("p2p", &pr, 4, buf, sizeof buf);
    CHECK_STR(buf, "p2p matrix_uni 8 0>3");
    struct fb_case bt = {.name = "cpu_t2", .batch = 8, .bytes = 99, .active = FB_ALL_RANKS};
    fb_run_plan_label("pipeline", &bt, 1, buf, sizeof buf);
    CHECK_STR(buf, "pipeline cpu_t2 b8 x1 rank");
    struct fb_case sf = {.name = "step", .batch = 4, .bytes = 4 << 20, .bytes_label = true,
                         .active = FB_ALL_RANKS};
    fb_run_plan_label("step", &sf, 2, buf, sizeof buf);
    CHECK_STR(buf, "step step b4 4M x2 ranks");
    TEST_DONE();
}
