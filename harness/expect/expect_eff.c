/* The expected-figure model's efficiencies: what well-configured hardware reaches of a link's
 * payload rate, each with its source (docs/reference-figures.md lists the same rows; a test
 * holds them together). A site file overrides them (fb_expect_eff_load, FB_EXPECT_EFFICIENCY).
 */
#include "expect.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

struct fb_expect_eff fb_expect_efficiencies[] = {
    {"ib", 0.96,
     "InfiniBand, per NIC: about 12 GB/s of EDR's 12.5, 24 of HDR's 25 (nccl-tests #29, #290; "
     "NVIDIA/nccl #307)"},
    {"pcie_copy", 0.79,
     "pinned host-device copy over PCIe: 12.2-13 GB/s of Gen3 x16's 15.75, 24-26 of Gen4's "
     "31.5 (CUDA bandwidthTest figures; gearshifft PR #82)"},
    {"nvlink", 0.958,
     "GPU peer copy over NVLink: 47.9 GB/s over two NVLink 2 links of 25 GB/s "
     "(p2pBandwidthLatencyTest on a C4130 configuration K, Dell blog sln315045)"},
    {"nvlink_ring", 0.822,
     "a ring collective's busbw over NVLink: about 370 GB/s of an H100's 18 links x 25 GB/s, "
     "NCCL's protocol taking about 20% (NCCL_ALGO=Ring on 8 H100 SXM, NVIDIA/nccl-tests #212)"},
};
const size_t fb_expect_neff = sizeof fb_expect_efficiencies / sizeof fb_expect_efficiencies[0];

double fb_expect_eff(const char *key)
{
    for (size_t i = 0; i < fb_expect_neff; i++)
        if (strcmp(fb_expect_efficiencies[i].key, key) == 0)
            return fb_expect_efficiencies[i].value;
    return NAN;
}

/* The index of a key; -1 when none. */
static int eff_index(const char *key)
{
    for (size_t i = 0; i < fb_expect_neff; i++)
        if (strcmp(fb_expect_efficiencies[i].key, key) == 0)
            return (int)i;
    return -1;
}

fb_status fb_expect_eff_load(const char *path, char *err, size_t errlen)
{
    double value[sizeof fb_expect_efficiencies / sizeof fb_expect_efficiencies[0]];
    int seen[sizeof fb_expect_efficiencies / sizeof fb_expect_efficiencies[0]] = {0};
    char line[512], shown[256], val[64];
    int lineno = 0;
    FILE *f = fopen(path, "r");

    fb_escape_str(path, 160, shown, sizeof shown); /* a message stays one line */

    if (!f) {
        snprintf(err, errlen, "efficiency file '%s': %s", shown, strerror(errno));
        return FB_ERR_IO;
    }
    for (size_t i = 0; i < fb_expect_neff; i++)
        value[i] = fb_expect_efficiencies[i].value;
    for (long at = ftell(f); fgets(line, sizeof line, f); at = ftell(f)) {
        char key[64], *p = line, *eq, *end;
        size_t klen;
        int k;
        double v;
        long now = ftell(f);

        lineno++;
        /* strlen stops at a NUL byte, the file position does not */
        if (at >= 0 && now >= 0 && strlen(line) != (size_t)(now - at)) {
            snprintf(err, errlen, "%s:%d: a NUL byte in the line", shown, lineno);
            fclose(f);
            return FB_ERR_USAGE;
        }
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line longer than %zu bytes", shown, lineno,
                     sizeof line - 2);
            fclose(f);
            return FB_ERR_USAGE;
        }
        p += strspn(p, " \t");
        if (*p == '#' || *p == ';' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        if (!(eq = strchr(p, '='))) {
            snprintf(err, errlen, "%s:%d: expected 'key = value'", shown, lineno);
            fclose(f);
            return FB_ERR_USAGE;
        }
        klen = (size_t)(eq - p);
        while (klen && (p[klen - 1] == ' ' || p[klen - 1] == '\t'))
            klen--;
        if (klen == 0 || klen >= sizeof key) {
            snprintf(err, errlen, "%s:%d: expected 'key = value'", shown, lineno);
            fclose(f);
            return FB_ERR_USAGE;
        }
        memcpy(key, p, klen);
        key[klen] = '\0';
        if ((k = eff_index(key)) < 0) {
            int n = snprintf(err, errlen, "%s:%d: unknown efficiency '%s' (known:", shown,
                             lineno, fb_escape_str(key, 40, val, sizeof val));
            for (size_t i = 0; i < fb_expect_neff && n >= 0 && (size_t)n < errlen; i++)
                n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "",
                              fb_expect_efficiencies[i].key);
            if (n >= 0 && (size_t)n < errlen)
                snprintf(err + n, errlen - (size_t)n, ")");
            fclose(f);
            return FB_ERR_USAGE;
        }
        errno = 0;
        v = strtod(eq + 1, &end);
        end += strspn(end, " \t\r\n");
        if (errno || end == eq + 1 || *end || !(v > 0 && v <= 1)) {
            const char *from = eq + 1 + strspn(eq + 1, " \t");
            fb_escape(from, strcspn(from, "\r\n"), 40, val, sizeof val);
            snprintf(err, errlen, "%s:%d: %s: a share above 0 and at most 1, not '%s'", shown,
                     lineno, key, val);
            fclose(f);
            return FB_ERR_USAGE;
        }
        if (seen[k]) {
            snprintf(err, errlen, "%s:%d: '%s' given twice (first at line %d)", shown, lineno,
                     key, seen[k]);
            fclose(f);
            return FB_ERR_USAGE;
        }
        seen[k] = lineno;
        value[k] = v;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "efficiency file '%s': read error", shown);
        fclose(f);
        return FB_ERR_IO;
    }
    fclose(f);
    for (size_t i = 0; i < fb_expect_neff; i++)
        fb_expect_efficiencies[i].value = value[i];
    return FB_OK;
}
