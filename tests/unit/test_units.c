/* Size, count and number parsing: suffixes are binary, junk and negatives are refused. */
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "units.h"

static size_t size_ok(const char *text)
{
    size_t v = 12345;
    char why[128] = "";
    CHECK(fb_size_parse(text, &v, why, sizeof why) == FB_OK);
    return v;
}

static void size_bad(const char *text, const char *reason_part)
{
    size_t v = 7;
    char why[128] = "";
    CHECK(fb_size_parse(text, &v, why, sizeof why) == FB_ERR_USAGE);
    CHECK(v == 7);
    if (!strstr(why, reason_part)) {
        fprintf(stderr, "for '%s': reason '%s' lacks '%s'\n", text, why, reason_part);
        fb_test_failures++;
    }
}

/* fb_decimal_parse over len bytes of text: refused with reason_part in the reason, the value
 * untouched. */
static void decimal_bad(const char *text, size_t len, const char *reason_part)
{
    double v = 7;
    char why[160] = "";

    CHECK(fb_decimal_parse(text, len, &v, why, sizeof why) == FB_ERR_USAGE);
    CHECK(v == 7);
    if (!strstr(why, reason_part)) {
        fprintf(stderr, "for '%s': reason '%s' lacks '%s'\n", text, why, reason_part);
        fb_test_failures++;
    }
}

static double decimal_ok(const char *text)
{
    double v = -12345;
    char why[160] = "";

    CHECK(fb_decimal_parse(text, strlen(text), &v, why, sizeof why) == FB_OK);
    CHECK_STR(why, "");
    return v;
}

/* The one strict number parser: decimal, finite, the whole text and nothing else. */
static void decimal(void)
{
    static const char nul[] = "0.1\0junk";
    char many[200];

    CHECK(decimal_ok("0") == 0);
    CHECK(decimal_ok("41.25") == 41.25);
    CHECK(decimal_ok("-3") == -3);
    CHECK(decimal_ok(".5") == 0.5);
    CHECK(decimal_ok("5.") == 5);
    CHECK(decimal_ok("1e3") == 1000);
    CHECK(decimal_ok("2.5E-3") == 0.0025);
    CHECK(decimal_ok("1e+2") == 100);
    CHECK(decimal_ok("1e-400") == 0); /* underflow rounds, as the C library does */
    CHECK(decimal_ok("1.797693134862315708e308") > 1e308);
    decimal_bad("0x10", 4, "'0x10' is not a number (decimal only");
    decimal_bad("0X1p3", 5, "is not a number");
    decimal_bad("inf", 3, "'inf' is not a number");
    decimal_bad("-inf", 4, "is not a number");
    decimal_bad("nan", 3, "'nan' is not a number");
    decimal_bad("NaN", 3, "is not a number");
    decimal_bad("infinity", 8, "is not a number");
    decimal_bad("1e999", 5, "'1e999' is not a finite number (it overflows a double)");
    decimal_bad("-1e999", 6, "overflows");
    decimal_bad(nul, sizeof nul - 1, "a NUL byte inside");
    decimal_bad("12", 0, "is not a number (empty)");
    decimal_bad("+1", 2, "is not a number");
    decimal_bad(" 1", 2, "is not a number");
    decimal_bad("1 ", 2, "is not a number");
    decimal_bad("1.5x", 4, "'1.5x' is not a number");
    decimal_bad("1e", 2, "is not a number");
    decimal_bad("1e+", 3, "is not a number");
    decimal_bad(".", 1, "is not a number");
    decimal_bad("-", 1, "is not a number");
    decimal_bad("1..2", 4, "is not a number");
    decimal_bad("1,5", 3, "is not a number");
    memset(many, '1', sizeof many);
    decimal_bad(many, sizeof many, "longer than");
    /* only len bytes are read: "12" of "125" */
    {
        double v = 0;
        char why[160] = "";
        CHECK(fb_decimal_parse("125", 2, &v, why, sizeof why) == FB_OK && v == 12);
    }
}

int main(void)
{
    char buf[32], why[128];
    long n = 0;
    double d = 0;

    CHECK(size_ok("0") == 0);
    CHECK(size_ok("4096") == 4096);
    CHECK(size_ok("64K") == 65536);
    CHECK(size_ok("64k") == 65536);
    CHECK(size_ok("256M") == 268435456);
    CHECK(size_ok("1G") == 1073741824);
    CHECK(size_ok("8MiB") == 8388608);
    CHECK(size_ok("8MB") == 8388608);
    CHECK(size_ok("100B") == 100);
    size_bad("12Q", "unknown suffix");
    size_bad("-5", "negative");
    size_bad("", "empty");
    size_bad("K", "does not start");
    size_bad("1.5M", "unknown suffix");
    size_bad("4KB2", "unknown suffix");
    size_bad("99999999999999999999", "too large");
    size_bad("17179869184G", "too large");

    CHECK(fb_count_parse("10", 1, 100, &n, why, sizeof why) == FB_OK && n == 10);
    CHECK(fb_count_parse("-1", 1, 100, &n, why, sizeof why) == FB_ERR_USAGE);
    CHECK(strstr(why, "out of range") != NULL);
    CHECK(fb_count_parse("5x", 1, 100, &n, why, sizeof why) == FB_ERR_USAGE);
    CHECK(fb_count_parse(" 5", 1, 100, &n, why, sizeof why) == FB_ERR_USAGE);
    /* digits only, as the decimal options and the profiles take them */
    CHECK(fb_count_parse("+3", 1, 100, &n, why, sizeof why) == FB_ERR_USAGE);
    CHECK(strstr(why, "'+3' is not a whole number") != NULL);
    CHECK(fb_real_parse("2.5", 0, 10, &d, why, sizeof why) == FB_OK && d == 2.5);
    CHECK(fb_real_parse("nan", 0, 10, &d, why, sizeof why) == FB_ERR_USAGE);
    CHECK(strstr(why, "'nan' is not a number") != NULL);
    CHECK(fb_real_parse("0x10", 0, 100, &d, why, sizeof why) == FB_ERR_USAGE);
    CHECK(fb_real_parse("11", 0, 10, &d, why, sizeof why) == FB_ERR_USAGE);
    CHECK(strstr(why, "'11' is out of range [0, 10]") != NULL);
    decimal();

    /* each size in the option's spelling and with its unit named (text a reader sees) */
    {
        static const struct {
            size_t bytes;
            const char *spelled, *named;
        } sizes[] = {
            {65536, "64K", "64 KiB"},           {268435456, "256M", "256 MiB"},
            {(size_t)1 << 30, "1G", "1 GiB"},   {27872824, "27872824", "27872824 B"},
            {8, "8", "8 B"},
        };
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            fb_size_format(sizes[i].bytes, buf, sizeof buf);
            CHECK(strcmp(buf, sizes[i].spelled) == 0);
            fb_size_format_named(sizes[i].bytes, buf, sizeof buf);
            CHECK(strcmp(buf, sizes[i].named) == 0);
        }
    }

    /* checked size arithmetic: overflow is reported, never wrapped */
    {
        size_t r = 7;
        CHECK(fb_size_round_up(4097, 4096, &r) && r == 8192);
        CHECK(fb_size_round_up(0, 4096, &r) && r == 0);
        CHECK(fb_size_round_up(SIZE_MAX - 4095, 4096, &r) && r == SIZE_MAX - 4095);
        r = 7;
        CHECK(!fb_size_round_up(SIZE_MAX, 4096, &r) && r == 7);
        CHECK(!fb_size_round_up(SIZE_MAX - 4094, 4096, &r) && r == 7);
        CHECK(!fb_size_round_up(1, 0, &r));
        CHECK(fb_size_mul((size_t)1 << 31, (size_t)1 << 32, &r) && r == (size_t)1 << 63);
        CHECK(!fb_size_mul((size_t)1 << 32, (size_t)1 << 32, &r));
        CHECK(fb_size_add(SIZE_MAX - 1, 1, &r) && r == SIZE_MAX);
        CHECK(!fb_size_add(SIZE_MAX, 1, &r));
        CHECK(fb_size_machine_memory() > ((size_t)1 << 20));
        /* h2d's --beyond-llc size and the memcpy calibration's rows */
        CHECK(fb_size_past_cache(32u << 20) == 64u << 20);
        CHECK(fb_size_past_cache(20u << 20) == 64u << 20);   /* Xeon E5-2650 (tests/data/topology) */
        CHECK(fb_size_past_cache(33u << 20) == 128u << 20);  /* DGX-2's Xeon 8174 */
        CHECK(fb_size_past_cache(532676608) == 1u << 30);    /* an EPYC guest's whole-socket L3 */
        CHECK(fb_size_past_cache(0) == 0);                   /* unknown: nothing added */
        CHECK(fb_size_past_cache(SIZE_MAX / 4) == 0);        /* past what can be allocated */
    }
    TEST_DONE();
}
