/* The expected-figure model's efficiencies: what well-configured hardware reaches of a link's
 * payload rate, each with its source (docs/reference-figures.md lists the same rows; a test
 * holds them together). A site file overrides them (fb_expect_eff_load, FB_EXPECT_EFFICIENCY).
 */
#include "expect.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "file_read.h"

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
    char line[512], shown[256], val[64], why[160], *text = NULL;
    size_t len = 0, pos, lineno = 0, n;
    const char *l;
    bool nul;
    fb_status st;

    fb_escape_str(path, 160, shown, sizeof shown); /* a message stays one line */
    if ((st = fb_file_read(path, FB_FILE_SITE, false, &text, &len, err, errlen)) != FB_OK)
        return st;
    for (size_t i = 0; i < fb_expect_neff; i++)
        value[i] = fb_expect_efficiencies[i].value;
    pos = fb_file_bom(text, len);
    /* each line: its content without line end, blanks and '#' comment (fb_file_line) */
    while (st == FB_OK && fb_file_line(text, len, &pos, &lineno, &l, &n, &nul)) {
        char key[64], *eq, *end;
        size_t klen;
        int k;
        double v;

        if (!nul && (n == 0 || *l == ';')) /* blank, or a comment of its own ('#' or ';') */
            continue;
        if (!fb_file_line_text(l, n, nul, line, sizeof line, why, sizeof why)) {
            snprintf(err, errlen, "%s:%zu: %s", shown, lineno, why);
            st = FB_ERR_USAGE;
            break;
        }
        if (!(eq = strchr(line, '='))) {
            snprintf(err, errlen, "%s:%zu: expected 'key = value'", shown, lineno);
            st = FB_ERR_USAGE;
            break;
        }
        klen = (size_t)(eq - line);
        while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
            klen--;
        if (klen == 0 || klen >= sizeof key) {
            snprintf(err, errlen, "%s:%zu: expected 'key = value'", shown, lineno);
            st = FB_ERR_USAGE;
            break;
        }
        memcpy(key, line, klen);
        key[klen] = '\0';
        if ((k = eff_index(key)) < 0) {
            int m = snprintf(err, errlen, "%s:%zu: unknown efficiency '%s' (known:", shown,
                             lineno, fb_escape_str(key, 40, val, sizeof val));
            for (size_t i = 0; i < fb_expect_neff && m >= 0 && (size_t)m < errlen; i++)
                m += snprintf(err + m, errlen - (size_t)m, "%s %s", i ? "," : "",
                              fb_expect_efficiencies[i].key);
            if (m >= 0 && (size_t)m < errlen)
                snprintf(err + m, errlen - (size_t)m, ")");
            st = FB_ERR_USAGE;
            break;
        }
        errno = 0;
        v = strtod(eq + 1, &end);
        if (errno || end == eq + 1 || *end || !(v > 0 && v <= 1)) {
            const char *from = eq + 1 + strspn(eq + 1, " \t");
            fb_escape_str(from, 40, val, sizeof val);
            snprintf(err, errlen, "%s:%zu: %s: a share above 0 and at most 1, not '%s'", shown,
                     lineno, key, val);
            st = FB_ERR_USAGE;
            break;
        }
        if (seen[k]) {
            snprintf(err, errlen, "%s:%zu: '%s' given twice (first at line %d)", shown, lineno,
                     key, seen[k]);
            st = FB_ERR_USAGE;
            break;
        }
        seen[k] = (int)lineno;
        value[k] = v;
    }
    free(text);
    if (st != FB_OK)
        return st;
    for (size_t i = 0; i < fb_expect_neff; i++)
        fb_expect_efficiencies[i].value = value[i];
    return FB_OK;
}
