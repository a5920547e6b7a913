/* Size, count and number parsing for the command line, and the one strict parser of decimal
 * numbers that the file readers share (fb_decimal_parse); formatting of sizes. */
#include "units.h"


#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "escape.h"

/* why: fmt with text escaped (fb_escape_str: a control character or any byte that is not
 * printable ASCII as \xNN), so a message quoting a number from a file stays one visible line. */
static fb_status bad(char *why, size_t whylen, const char *fmt, const char *text)
{
    char shown[200];

    snprintf(why, whylen, fmt, fb_escape_str(text, 60, shown, sizeof shown));
    return FB_ERR_USAGE;
}

fb_status fb_size_parse(const char *text, size_t *bytes, char *why, size_t whylen)
{
    const char *p = text;
    uint64_t value = 0, mult = 1;

    if (!text || !*text)
        return bad(why, whylen, "empty size%s", "");
    if (*p == '-')
        return bad(why, whylen, "size '%s' is negative", text);
    if (!isdigit((unsigned char)*p))
        return bad(why, whylen, "size '%s' does not start with a number", text);
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (value > (UINT64_MAX - d) / 10)
            return bad(why, whylen, "size '%s' is too large", text);
        value = value * 10 + d;
    }
    switch (toupper((unsigned char)*p)) {
    case '\0': break;
    case 'K': mult = 1ull << 10; p++; break;
    case 'M': mult = 1ull << 20; p++; break;
    case 'G': mult = 1ull << 30; p++; break;
    case 'B': break;
    default:
        return bad(why, whylen, "size '%s' has an unknown suffix (use K, M or G, binary)", text);
    }
    if (*p && strcasecmp(p, "B") != 0 && !(mult > 1 && strcasecmp(p, "iB") == 0))
        return bad(why, whylen, "size '%s' has an unknown suffix (use K, M or G, binary)", text);
    if (value > UINT64_MAX / mult || value * mult > (uint64_t)SIZE_MAX)
        return bad(why, whylen, "size '%s' is too large", text);
    *bytes = (size_t)(value * mult);
    return FB_OK;
}

bool fb_size_add(size_t a, size_t b, size_t *out)
{
    size_t r;

    if (__builtin_add_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

bool fb_size_mul(size_t a, size_t b, size_t *out)
{
    size_t r;

    if (__builtin_mul_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

bool fb_size_round_up(size_t bytes, size_t align, size_t *out)
{
    size_t r;

    if (!align || !fb_size_add(bytes, align - 1, &r))
        return false;
    *out = r / align * align;
    return true;
}

size_t fb_size_machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t bytes;

    if (pages <= 0 || page <= 0 || !fb_size_mul((size_t)pages, (size_t)page, &bytes))
        return 0;
    return bytes;
}

size_t fb_size_past_cache(unsigned long long cache_bytes)
{
    size_t s = 1;

    if (cache_bytes == 0 || cache_bytes > SIZE_MAX / 8)
        return 0;
    while (s < 2 * (size_t)cache_bytes)
        s *= 2;
    return s;
}

fb_status fb_count_parse(const char *text, long min, long max, long *value, char *why, size_t whylen)
{
    char *end;
    long v;

    if (!text || !*text)
        return bad(why, whylen, "empty number%s", "");
    errno = 0;
    v = strtol(text, &end, 10);
    /* digits only (a minus where min allows one), as the profiles and the decimal options read
     * them: "+3" is not taken here and refused there */
    if (*end || end == text || isspace((unsigned char)*text) || *text == '+')
        return bad(why, whylen, "'%s' is not a whole number", text);
    if (errno == ERANGE || v < min || v > max) {
        snprintf(why, whylen, "'%s' is out of range [%ld, %ld]", text, min, max);
        return FB_ERR_USAGE;
    }
    *value = v;
    return FB_OK;
}

/* The longest number text read: %.17g of a double is 24 characters; a profile's hand-written
 * value with many zeros stays far below. */
enum { DECIMAL_MAX = 128 };

/* Does text[0..len) follow -?(digits(.digits*)?|.digits)([eE][+-]?digits)? ? */
static bool decimal_syntax(const char *text, size_t len)
{
    size_t i = 0, digits = 0;

    if (i < len && text[i] == '-')
        i++;
    for (; i < len && isdigit((unsigned char)text[i]); i++)
        digits++;
    if (i < len && text[i] == '.')
        for (i++; i < len && isdigit((unsigned char)text[i]); i++)
            digits++;
    if (!digits)
        return false;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        size_t exp = 0;
        if (++i < len && (text[i] == '+' || text[i] == '-'))
            i++;
        for (; i < len && isdigit((unsigned char)text[i]); i++)
            exp++;
        if (!exp)
            return false;
    }
    return i == len;
}

fb_status fb_decimal_parse(const char *text, size_t len, double *value, char *why,
                           size_t whylen)
{
    char buf[DECIMAL_MAX + 1];
    double v;

    if (!text || !len)
        return bad(why, whylen, "'%s' is not a number (empty)", "");
    if (memchr(text, '\0', len)) {
        char shown[200];
        snprintf(why, whylen, "'%s\\0...' is not a number (a NUL byte inside)",
                 fb_escape_str(text, 60, shown, sizeof shown));
        return FB_ERR_USAGE;
    }
    if (len > DECIMAL_MAX) {
        char shown[200];
        snprintf(why, whylen, "'%s' is not a number (longer than %d characters)",
                 fb_escape(text, len, 40, shown, sizeof shown), DECIMAL_MAX);
        return FB_ERR_USAGE;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (!decimal_syntax(buf, len))
        return bad(why, whylen, "'%s' is not a number (decimal only: no hex, inf or nan)", buf);
    v = strtod(buf, NULL);
    if (!isfinite(v))
        return bad(why, whylen, "'%s' is not a finite number (it overflows a double)", buf);
    *value = v;
    return FB_OK;
}

fb_status fb_real_parse(const char *text, double min, double max, double *value, char *why,
                        size_t whylen)
{
    double v;
    fb_status st;

    if ((st = fb_decimal_parse(text, text ? strlen(text) : 0, &v, why, whylen)) != FB_OK)
        return st;
    if (!(v >= min && v <= max)) {
        snprintf(why, whylen, "'%s' is out of range [%g, %g]", text, min, max);
        return FB_ERR_USAGE;
    }
    *value = v;
    return FB_OK;
}

/* Both forms: the option's spelling ("64M") or the unit's name ("64 MiB"). */
static void size_format(size_t bytes, bool named, char *buf, size_t len)
{
    static const char suffix[] = {'G', 'M', 'K'};
    static const unsigned shift[] = {30, 20, 10};

    for (int i = 0; i < 3; i++) {
        size_t unit = (size_t)1 << shift[i];
        if (bytes >= unit && bytes % unit == 0) {
            snprintf(buf, len, named ? "%zu %ciB" : "%zu%c", bytes / unit, suffix[i]);
            return;
        }
    }
    snprintf(buf, len, named ? "%zu B" : "%zu", bytes);
}

void fb_size_format(size_t bytes, char *buf, size_t len) { size_format(bytes, false, buf, len); }

void fb_size_format_named(size_t bytes, char *buf, size_t len)
{
    size_format(bytes, true, buf, len);
}
