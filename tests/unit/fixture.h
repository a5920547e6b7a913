/* Loading the recorded hwloc topologies of tests/unit's fixture folder. Header-only, for the
 * tests that read them; the test sets fb_fixtures to argv[1]. */
#ifndef FB_TEST_FIXTURE_H
#define FB_TEST_FIXTURE_H

#include <stdio.h>

#include "test.h"
#include "topo.h"

static const char *fb_fixtures;

/* The fixture `name`, or NULL with a failure counted when it cannot be read. */
static inline struct fb_topo *fb_fixture_topo(const char *name)
{
    char path[4096];
    struct fb_topo *t = NULL;

    snprintf(path, sizeof path, "%s/%s", fb_fixtures, name);
    if (fb_topo_load(&t, path) != FB_OK) {
        fprintf(stderr, "cannot load fixture '%s'\n", path);
        fb_test_failures++;
        return NULL;
    }
    return t;
}

#endif
