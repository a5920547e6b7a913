/* accept's JUnit XML: escaping, and counts that match the checks. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "test.h"

int main(void)
{
    struct fb_accept_check k[3] = {
        {.name = "a<b", .verdict = FB_PASS, .measured = "1 GB/s", .expected = ">= 0.5 GB/s"},
        {.name = "fail", .verdict = FB_FAIL, .why = "x & \"y\" < 'z'\x01"},
        {.name = "skip", .verdict = FB_SKIP, .why = "not measured"},
    };
    struct fb_accept a = {k, 3, 3};
    struct fb_profile p;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    fb_profile_init(&p);
    snprintf(p.name, sizeof p.name, "n&m");
    for (int i = 0; i < 3; i++)
        k[i].margin_pct = NAN;
    CHECK(fb_accept_count(&a, FB_FAIL) == 1 && fb_accept_count(&a, FB_SKIP) == 1);
    CHECK(f && fb_accept_junit_write(f, &a, &p, "run<1>") == 0);
    fclose(f);
    CHECK_HAS(buf, "<testsuite name=\"n&amp;m\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\">");
    CHECK_HAS(buf, "name=\"a&lt;b\"");
    CHECK_HAS(buf, "<failure message=\"x &amp; &quot;y&quot; &lt; &apos;z&apos;\\x01\"/>");
    CHECK_HAS(buf, "<skipped message=\"not measured\"/>");
    CHECK_HAS(buf, "value=\"run&lt;1&gt;\"");
    CHECK(!strchr(buf, '\x01'));
    free(buf);
    TEST_DONE();
}
