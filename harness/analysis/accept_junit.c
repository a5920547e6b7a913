/* accept's checks written as JUnit XML, for CI: one test case per check, a FAIL as a
 * failure and a SKIP as skipped, with what was measured and where it came from. Every text
 * goes through xml_text.h: attributes with fb_xml_put_attr, element text with fb_xml_put_text. */
#include "accept.h"

#include <math.h>
#include <stdio.h>

#include "xml_text.h"

/* ---- JUnit ------------------------------------------------------------------------------ */

int fb_accept_junit_write(FILE *f, const struct fb_accept *a, const struct fb_profile *p,
                          const char *run_dir)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"", f);
    fb_xml_put_attr(f, p->name);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", a->n,
            fb_accept_count(a, FB_FAIL), fb_accept_count(a, FB_SKIP));
    fputs("    <properties>\n      <property name=\"profile\" value=\"", f);
    fb_xml_put_attr(f, p->path);
    fputs("\"/>\n      <property name=\"run_dir\" value=\"", f);
    fb_xml_put_attr(f, run_dir);
    fputs("\"/>\n    </properties>\n", f);
    for (size_t i = 0; i < a->n; i++) {
        const struct fb_accept_check *k = &a->checks[i];
        char margin[32] = "-";
        if (!isnan(k->margin_pct))
            snprintf(margin, sizeof margin, "%+.1f%%", k->margin_pct);
        fputs("    <testcase classname=\"fabricbench.accept\" name=\"", f);
        fb_xml_put_attr(f, k->name);
        fputs("\">\n", f);
        if (k->verdict == FB_FAIL || k->verdict == FB_SKIP) {
            fputs(k->verdict == FB_FAIL ? "      <failure message=\""
                                        : "      <skipped message=\"", f);
            fb_xml_put_attr(f, k->why);
            fputs("\"/>\n", f);
        }
        fputs("      <system-out>measured ", f);
        fb_xml_put_text(f, k->measured);
        fputs(", expected ", f);
        fb_xml_put_text(f, k->expected);
        fprintf(f, ", margin %s, from ", margin);
        fb_xml_put_text(f, k->from[0] ? k->from : "-");
        fputs("</system-out>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? -1 : 0;
}
