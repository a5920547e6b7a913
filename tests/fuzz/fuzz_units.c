/* Fuzzes the sizes, counts and numbers of the command line (harness/core/units.c): "64K", "1GiB",
 * "27872824", counts in a range, decimal numbers. The first byte picks the range a count is
 * checked against; the rest is the text. Besides not crashing: a size that parses is the value
 * its digits and suffix say (checked against an independent computation), a formatted size
 * parses back to itself, and a refusal leaves a one-line reason. */
#include "fuzz.h"

#include <ctype.h>
#include <limits.h>
#include <strings.h>

#include "units.h"

/* The value of a size the slow, obvious way: digits, then one of K M G with optional B or iB,
 * or a bare B; -1 when it is not a size. */
static long double expected_size(const char *s)
{
    long double v = 0;
    const char *p = s;

    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++)
        v = v * 10 + (*p - '0');
    switch (toupper((unsigned char)*p)) {
    case '\0': return v;
    case 'K': v *= 1024.0L; p++; break;
    case 'M': v *= 1024.0L * 1024; p++; break;
    case 'G': v *= 1024.0L * 1024 * 1024; p++; break;
    case 'B': return strcasecmp(p, "B") == 0 ? v : -1;
    default: return -1;
    }
    return (!*p || strcasecmp(p, "B") == 0 || strcasecmp(p, "iB") == 0) ? v : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long mins[] = {0, 1, 2, -5, LONG_MIN};
    static const long maxs[] = {1000000, 1 << 24, 1024, 5, LONG_MAX};
    char *text, why[256], buf[64];
    size_t bytes = 0, again = 0;
    long count = 0, lo, hi;
    double real = 0;
    long double want;
    fb_status st;
    int lf;

    if (size == 0)
        return 0;
    lo = mins[data[0] % 5];
    hi = maxs[data[0] % 5];
    text = fuzz_cstr(data + 1, size - 1);
    lf = strchr(text, '\n') != NULL;

    why[0] = '\0';
    st = fb_size_parse(text, &bytes, why, sizeof why);
    want = expected_size(text);
    if (st == FB_OK) {
        FUZZ_CHECK(want >= 0 && (long double)bytes == want);
        fb_size_format(bytes, buf, sizeof buf);
        FUZZ_CHECK(fb_size_parse(buf, &again, why, sizeof why) == FB_OK && again == bytes);
    } else {
        FUZZ_CHECK(st == FB_ERR_USAGE);
        fuzz_check_message(why, lf);
        /* refused: not a size, or too large for size_t */
        FUZZ_CHECK(want < 0 || want > (long double)SIZE_MAX);
    }

    why[0] = '\0';
    st = fb_count_parse(text, lo, hi, &count, why, sizeof why);
    if (st == FB_OK)
        FUZZ_CHECK(count >= lo && count <= hi);
    else
        fuzz_check_message(why, lf);

    why[0] = '\0';
    st = fb_real_parse(text, 0.001, 1e9, &real, why, sizeof why);
    if (st == FB_OK)
        FUZZ_CHECK(real >= 0.001 && real <= 1e9);
    else
        fuzz_check_message(why, lf);
    free(text);
    return 0;
}
