/* `accept`: a run folder judged against a hardware profile. Each check says PASS, FAIL or SKIP
 * (not measured, or too few trials to judge), what was measured, what was expected, the margin
 * and which rows of results.csv (or which part of env.json or the NCCL logs) it came from.
 * Noise rule: a figure is the median over a row's trials (the CSV's `median` over `samples`),
 * never a mean, and never an average over sizes; a row with fewer than the profile's
 * min_samples trials is not judged (SKIP); the spread between trials is a check of its own. */
#ifndef FB_ACCEPT_H
#define FB_ACCEPT_H

#include <stdio.h>

#include "profile.h"
#include "status.h"
#include "verdict.h"

struct fb_accept_check {
    char name[64];           /* "allreduce_busbw.27872824.4" */
    enum fb_verdict verdict; /* FB_PASS, FB_FAIL or FB_SKIP */
    char measured[64];       /* "41.2 GB/s"; "-" when nothing was measured */
    char expected[64];       /* ">= 40 GB/s" */
    double margin_pct;       /* (measured / expected - 1) * 100, or for a ceiling
                                (expected / measured - 1) * 100: below 0 is a miss; NAN when
                                not a figure */
    char from[256];          /* where the figure came from: "results.csv:108 (...)" */
    char why[256];           /* why a SKIP or FAIL, one line; "" for a PASS */
};

struct fb_accept {
    struct fb_accept_check *checks; /* malloc'ed */
    size_t n, cap;
};

/* Judges the run folder `run_dir` (results.csv, env.json, nccl-rank*.log) against `p`; the
 * checks go to *out (release with fb_accept_release), in the order docs/accept.md gives.
 * FB_ERR_USAGE with a message in err for bad input: a missing folder or results.csv, a
 * results.csv, env.json or NCCL log that cannot be understood ("path:line: what"), a number
 * that is not finite, a field of env.json of the wrong type ("path: field 'run_status' is a
 * number, expected a string").
 * FB_ERR_NOMEM. A check that fails is not an error: it is FB_OK with a FAIL in *out. */
fb_status fb_accept_run(const struct fb_profile *p, const char *run_dir, struct fb_accept *out,
                        char *err, size_t errlen);

void fb_accept_release(struct fb_accept *a); /* accepts a zeroed struct */

/* How many checks have verdict v. */
size_t fb_accept_count(const struct fb_accept *a, enum fb_verdict v);

/* Writes the checks as JUnit XML: one <testsuite> named after the profile, one <testcase> per
 * check (classname "fabricbench.accept"), <failure message="..."> for a FAIL, <skipped
 * message="..."/> for a SKIP, the measured/expected/margin/source in <system-out>. Text is
 * XML-escaped. Returns 0, or -1 when the stream reports an error. */
int fb_accept_junit_write(FILE *f, const struct fb_accept *a, const struct fb_profile *p,
                          const char *run_dir);

#endif
