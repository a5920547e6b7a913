/* Slurm's hostlist syntax (core/hostlist.c): folded ranges, widths kept apart, duplicates once,
 * names that are not Slurm node names refused, an output too small refused whole. The folds are
 * the ones `scontrol show hostnames` expands back (checked by hand with Slurm 22.05). */
#include "hostlist.h"

#include "test.h"

static void fold(const char *const *names, size_t n, const char *want)
{
    char out[256];
    CHECK(fb_hostlist_fold(names, n, out, sizeof out));
    CHECK_STR(out, want);
}

int main(void)
{
    const char *a[] = {"node18", "node03", "node17"};
    const char *b[] = {"node9", "node10", "node11", "node08"};
    const char *c[] = {"gpu1", "node2", "login", "gpu2", "gpu3", "node2", "gpu5"};
    const char *d[] = {"fbhost123n2"};
    const char *e[] = {"a1.b", "x-y"};
    const char *bad1[] = {"node1", "no de"};
    const char *bad2[] = {"node[1]"};
    const char *many[] = {"n1", "n2", "n3", "n4"};
    char tiny[6];

    fold(a, 3, "node[03,17-18]");
    /* widths apart: node9 is not node09; node08 stays zero-padded */
    fold(b, 4, "node9,node[08,10-11]");
    fold(c, 7, "gpu[1-3,5],login,node2");
    fold(d, 1, "fbhost123n2");
    fold(e, 2, "a1.b,x-y");
    fold(many, 4, "n[1-4]");
    fold(a, 0, "");
    CHECK(!fb_hostlist_fold(bad1, 2, tiny, sizeof tiny) && tiny[0] == '\0');
    CHECK(!fb_hostlist_fold(bad2, 1, tiny, sizeof tiny));
    CHECK(!fb_hostlist_fold(a, 3, tiny, sizeof tiny) && tiny[0] == '\0');
    CHECK(fb_hostlist_name_ok("node-01.cluster") && !fb_hostlist_name_ok("") &&
          !fb_hostlist_name_ok("a,b") && !fb_hostlist_name_ok("a'b"));
    return fb_test_failures ? 1 : 0;
}
