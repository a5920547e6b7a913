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
    CHECK(fb_real_parse("2.5", 0, 10, &d, why, sizeof why) == FB_OK && d == 2.5);
    CHECK(fb_real_parse("nan", 0, 10, &d, why, sizeof why) == FB_ERR_USAGE);

    fb_size_format(65536, buf, sizeof buf);
    CHECK(strcmp(buf, "64K") == 0);
    fb_size_format(268435456, buf, sizeof buf);
    CHECK(strcmp(buf, "256M") == 0);
    fb_size_format(1u << 30, buf, sizeof buf);
    CHECK(strcmp(buf, "1G") == 0);
    fb_size_format(27872824, buf, sizeof buf);
    CHECK(strcmp(buf, "27872824") == 0);
    fb_size_format(8, buf, sizeof buf);
    CHECK(strcmp(buf, "8") == 0);

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
    }
    TEST_DONE();
}
