/* A minimal check macro for the unit tests: prints the failing expression and its location,
 * counts failures, and lets the test go on so one run shows every failure. */
#ifndef FB_TEST_H
#define FB_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int fb_test_failures;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
            fb_test_failures++;                                                          \
        }                                                                                \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                            \
    do {                                                                                 \
        double a_ = (a), b_ = (b);                                                       \
        if (!(fabs(a_ - b_) <= (tol))) {                                                 \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g (tolerance %g)\n", __FILE__, \
                    __LINE__, #a, a_, b_, (double)(tol));                                \
            fb_test_failures++;                                                          \
        }                                                                                \
    } while (0)

#define CHECK_STR(a, b)                                                                    \
    do {                                                                                   \
        const char *a_ = (a), *b_ = (b);                                                   \
        if (strcmp(a_, b_) != 0) {                                                         \
            fprintf(stderr, "%s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__, __LINE__,   \
                    #a, a_, b_);                                                           \
            fb_test_failures++;                                                            \
        }                                                                                  \
    } while (0)
#define CHECK_HAS(hay, needle)                                                             \
    do {                                                                                   \
        const char *h_ = (hay), *n_ = (needle);                                            \
        if (!strstr(h_, n_)) {                                                             \
            fprintf(stderr, "%s:%d: \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, h_, n_);   \
            fb_test_failures++;                                                            \
        }                                                                                  \
    } while (0)

/* Writes text to path (a fixture file), checked. */
static inline void fb_test_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

#define TEST_DONE()                                                                      \
    do {                                                                                 \
        if (fb_test_failures)                                                            \
            fprintf(stderr, "%d check(s) failed\n", fb_test_failures);                   \
        return fb_test_failures ? 1 : 0;                                                 \
    } while (0)

#endif
