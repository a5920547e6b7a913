/* accept's checks written as JUnit XML, for CI: one test case per check, a FAIL as a
 * failure and a SKIP as skipped, with what was measured and where it came from; and the XML
 * escaping it writes text with. */
#include "accept.h"

#include <math.h>
#include <stdio.h>

/* ---- JUnit ------------------------------------------------------------------------------ */

/* Writes `s` to f with &, <, >, " and ' escaped, and control characters other than tab and
 * line ends dropped (XML 1.0 cannot hold them). */
static void xml_escape_write(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (ch >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r')
                fputc(ch, f);
        }
    }
}

int fb_accept_junit_write(FILE *f, const struct fb_accept *a, const struct fb_profile *p,
                          const char *run_dir)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"", f);
    xml_escape_write(f, p->name);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", a->n,
            fb_accept_count(a, FB_FAIL), fb_accept_count(a, FB_SKIP));
    fputs("    <properties>\n      <property name=\"profile\" value=\"", f);
    xml_escape_write(f, p->path);
    fputs("\"/>\n      <property name=\"run_dir\" value=\"", f);
    xml_escape_write(f, run_dir);
    fputs("\"/>\n    </properties>\n", f);
    for (size_t i = 0; i < a->n; i++) {
        const struct fb_accept_check *k = &a->checks[i];
        char margin[32] = "-";
        if (!isnan(k->margin_pct))
            snprintf(margin, sizeof margin, "%+.1f%%", k->margin_pct);
        fputs("    <testcase classname=\"fabricbench.accept\" name=\"", f);
        xml_escape_write(f, k->name);
        fputs("\">\n", f);
        if (k->verdict == FB_FAIL || k->verdict == FB_SKIP) {
            fputs(k->verdict == FB_FAIL ? "      <failure message=\""
                                        : "      <skipped message=\"", f);
            xml_escape_write(f, k->why);
            fputs("\"/>\n", f);
        }
        fputs("      <system-out>measured ", f);
        xml_escape_write(f, k->measured);
        fputs(", expected ", f);
        xml_escape_write(f, k->expected);
        fprintf(f, ", margin %s, from ", margin);
        xml_escape_write(f, k->from[0] ? k->from : "-");
        fputs("</system-out>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? -1 : 0;
}
