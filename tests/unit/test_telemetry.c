/* Telemetry's pure parts (the summary, the thinning, the reason names, the closing line and
 * its WARN) against values worked out by hand, and its NVML layer against the fake
 * libnvidia-ml (argv[1]; argv[2] the variant without power): the device chosen by PCI bus id
 * as on the cuda backend, by local rank as on host, every field read, a missing function and
 * a refused field as "no value", a missing library as "not found". */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>

#include "telemetry.h"
#include "telemetry_nvml.h"
#include "test.h"

static void set_all(struct fb_telemetry_sample *s, double t, double util, double mem, double power,
                    double throttle)
{
    s->t_s = t;
    for (int f = 0; f < FB_TELEMETRY_NFIELDS; f++)
        s->v[f] = NAN;
    s->v[FB_TELEMETRY_GPU_UTIL] = util;
    s->v[FB_TELEMETRY_MEM_USED] = mem;
    s->v[FB_TELEMETRY_POWER] = power;
    s->v[FB_TELEMETRY_THROTTLE] = throttle;
}

static void test_summary(void)
{
    struct fb_telemetry_sample s[5];
    struct fb_telemetry_summary sum;

    /* utilization 10..50, power missing in two samples, throttle 0x4 then 0x40 then 0 */
    set_all(&s[0], 0.0, 30, 1e9, 200, 0x4);
    set_all(&s[1], 0.1, 10, 2e9, NAN, 0x40);
    set_all(&s[2], 0.2, 50, 3e9, 300, 0);
    set_all(&s[3], 0.3, 20, 4e9, NAN, NAN);
    set_all(&s[4], 0.4, 40, 5e9, 250, 0x1);
    CHECK(fb_telemetry_summarize(s, 5, &sum) == FB_OK);
    CHECK(sum.samples == 5);
    CHECK(sum.valid[FB_TELEMETRY_GPU_UTIL] == 5 && sum.valid[FB_TELEMETRY_POWER] == 3);
    CHECK(sum.valid[FB_TELEMETRY_TEMP] == 0 && sum.valid[FB_TELEMETRY_THROTTLE] == 4);
    CHECK_NEAR(sum.st[FB_TELEMETRY_GPU_UTIL].median, 30, 1e-12);
    CHECK_NEAR(sum.st[FB_TELEMETRY_GPU_UTIL].mean, 30, 1e-12);
    CHECK_NEAR(sum.st[FB_TELEMETRY_GPU_UTIL].p05, 12, 1e-12); /* 10 + 0.05 * 4 * (20 - 10) */
    CHECK_NEAR(sum.st[FB_TELEMETRY_GPU_UTIL].p95, 48, 1e-12); /* 40 + 0.8 * (50 - 40) */
    CHECK_NEAR(sum.st[FB_TELEMETRY_POWER].median, 250, 1e-12); /* of 200, 300, 250 only */
    CHECK_NEAR(sum.st[FB_TELEMETRY_POWER].max, 300, 0);
    CHECK(sum.st[FB_TELEMETRY_POWER].samples == 3);
    CHECK_NEAR(sum.st[FB_TELEMETRY_MEM_USED].max, 5e9, 0);
    CHECK(sum.st[FB_TELEMETRY_TEMP].samples == 0 && sum.st[FB_TELEMETRY_TEMP].median == 0);
    CHECK(sum.throttle_valid && sum.throttle_or == 0x45);

    CHECK(fb_telemetry_summarize(s, 0, &sum) == FB_OK);
    CHECK(sum.samples == 0 && sum.valid[FB_TELEMETRY_GPU_UTIL] == 0 && !sum.throttle_valid);
}

static void test_thin(void)
{
    struct fb_telemetry_sample s[7];

    for (int i = 0; i < 7; i++)
        set_all(&s[i], i, i, 0, 0, 0);
    CHECK(fb_telemetry_thin(s, 6) == 3);
    CHECK(s[0].t_s == 0 && s[1].t_s == 2 && s[2].t_s == 4);
    for (int i = 0; i < 7; i++)
        set_all(&s[i], i, i, 0, 0, 0);
    CHECK(fb_telemetry_thin(s, 7) == 4);
    CHECK(s[3].t_s == 6);
}

static void test_reasons(void)
{
    char buf[128];

    fb_telemetry_reasons(0, false, buf, sizeof buf);
    CHECK_STR(buf, "none");
    fb_telemetry_reasons(0x1, false, buf, sizeof buf);
    CHECK_STR(buf, "none"); /* idle is not throttling */
    fb_telemetry_reasons(0x1, true, buf, sizeof buf);
    CHECK_STR(buf, "gpu_idle");
    fb_telemetry_reasons(0x45, false, buf, sizeof buf);
    CHECK_STR(buf, "sw_power_cap,hw_thermal");
    fb_telemetry_reasons(0x8 | 0x80 | 0x1000, false, buf, sizeof buf);
    CHECK_STR(buf, "hw_slowdown,hw_power_brake,0x1000");
    fb_telemetry_reasons(0x45, false, buf, 8); /* cut, never overrun */
    CHECK(strlen(buf) == 7);
}

static void test_line(void)
{
    struct fb_telemetry_sample a[2], b[2];
    struct fb_telemetry_summary sum[3];
    char line[512], warn[320];

    set_all(&a[0], 0, 95, 1073741824.0, 300, 0x4);
    set_all(&a[1], 0.1, 97, 2147483648.0, 310, 0x4);
    set_all(&b[0], 0, 50, 1073741824.0, 280, 0x1);
    set_all(&b[1], 0.1, 70, 1073741824.0, NAN, 0x20);
    CHECK(fb_telemetry_summarize(a, 2, &sum[0]) == FB_OK);
    CHECK(fb_telemetry_summarize(b, 0, &sum[1]) == FB_OK); /* rank 1: no samples */
    CHECK(fb_telemetry_summarize(b, 2, &sum[2]) == FB_OK);

    CHECK(fb_telemetry_line("step", sum, 3, true, line, sizeof line, warn, sizeof warn));
    /* mean over all 4 samples: (95 + 97 + 50 + 70) / 4 = 78; lowest rank 2 at 60 */
    CHECK_STR(line, "telemetry step: 2 GPUs, 4 samples: GPU utilization mean 78.0% (lowest: "
                    "rank 2, 60.0%), peak memory 2.00 GiB (rank 0), peak power 310.0 W (rank 0), "
                    "throttled: sw_power_cap,sw_thermal");
    CHECK_HAS(warn, "step: mean GPU utilization 60.0% on rank 2 is under 90%");

    /* not timed: no WARN; only the busy rank: none either */
    CHECK(fb_telemetry_line("memfit", sum, 3, false, line, sizeof line, warn, sizeof warn));
    CHECK_STR(warn, "");
    CHECK(fb_telemetry_line("step", sum, 1, true, line, sizeof line, warn, sizeof warn));
    CHECK_STR(warn, "");
    CHECK_STR(line, "telemetry step: 1 GPU, 2 samples: GPU utilization mean 96.0%, peak memory "
                    "2.00 GiB (rank 0), peak power 310.0 W (rank 0), throttled: sw_power_cap");

    /* no samples anywhere: no line */
    CHECK(!fb_telemetry_line("step", &sum[1], 1, true, line, sizeof line, warn, sizeof warn));
}

static void test_nvml(const char *fake, const char *fake_no_power)
{
    struct fb_telemetry_nvml *n;
    double v[FB_TELEMETRY_NFIELDS];
    char why[200], bus[32];
    int index;
    bool missing;

    setenv("FB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    CHECK(!(n = fb_telemetry_nvml_open(&missing, why, sizeof why)));
    CHECK(missing);
    CHECK_STR(why, "NVML not found (/nonexistent/libnvidia-ml.so.1)");
    unsetenv("FB_NVML_LIBRARY");
    CHECK_STR(fb_telemetry_nvml_library(), "libnvidia-ml.so.1");

    setenv("FB_NVML_LIBRARY", fake, 1);
    if (!(n = fb_telemetry_nvml_open(&missing, why, sizeof why))) {
        fprintf(stderr, "cannot open the fake NVML %s: %s\n", fake, why);
        fb_test_failures++;
        return;
    }
    /* cuda: CUDA's spelling of the bus id finds NVML's device 1 */
    CHECK(fb_telemetry_nvml_pick(n, "0000:86:00.0", 0, &index, bus, sizeof bus, why, sizeof why));
    CHECK(index == 1);
    CHECK_STR(bus, "00000000:86:00.0");
    fb_telemetry_nvml_read(n, v);
    CHECK(v[FB_TELEMETRY_GPU_UTIL] == 0 && v[FB_TELEMETRY_MEM_UTIL] == 26);
    CHECK(v[FB_TELEMETRY_MEM_USED] == 2147483648.0);
    CHECK_NEAR(v[FB_TELEMETRY_POWER], 251.5, 1e-9); /* milliwatts to watts */
    CHECK(v[FB_TELEMETRY_SM_CLOCK] == 1411 && v[FB_TELEMETRY_MEM_CLOCK] == 1215);
    CHECK(isnan(v[FB_TELEMETRY_TEMP])); /* NVML_ERROR_NOT_SUPPORTED: no value */
    CHECK(v[FB_TELEMETRY_THROTTLE] == 0x44);
    fb_telemetry_nvml_read(n, v);
    CHECK(v[FB_TELEMETRY_GPU_UTIL] == 1); /* the fake counts up per call */
    /* a bus id NVML does not know */
    CHECK(!fb_telemetry_nvml_pick(n, "0000:99:00.0", 0, &index, bus, sizeof bus, why, sizeof why));
    CHECK_HAS(why, "NVML does not know GPU 0000:99:00.0");
    /* host: local rank 2 of two devices reads device 0 */
    CHECK(fb_telemetry_nvml_pick(n, "", 2, &index, bus, sizeof bus, why, sizeof why));
    CHECK(index == 0);
    CHECK_STR(bus, "00000000:3B:00.0");
    fb_telemetry_nvml_read(n, v);
    CHECK(v[FB_TELEMETRY_TEMP] == 65 && v[FB_TELEMETRY_THROTTLE] == 0x4 &&
          v[FB_TELEMETRY_POWER] == 250.5);
    fb_telemetry_nvml_close(n);

    setenv("FB_NVML_LIBRARY", fake_no_power, 1);
    CHECK((n = fb_telemetry_nvml_open(&missing, why, sizeof why)) != NULL);
    if (n) {
        CHECK(fb_telemetry_nvml_pick(n, "", 0, &index, bus, sizeof bus, why, sizeof why));
        fb_telemetry_nvml_read(n, v);
        CHECK(isnan(v[FB_TELEMETRY_POWER]));        /* no nvmlDeviceGetPowerUsage */
        CHECK(v[FB_TELEMETRY_THROTTLE] == 0x4);     /* found under the pre-535 name */
        CHECK(v[FB_TELEMETRY_SM_CLOCK] == 1410);
        fb_telemetry_nvml_close(n);
    }

    /* a library that is not NVML at all: unusable, not "not found" */
    setenv("FB_NVML_LIBRARY", "libm.so.6", 1);
    CHECK(!(n = fb_telemetry_nvml_open(&missing, why, sizeof why)));
    CHECK(!missing);
    CHECK_HAS(why, "lacks nvmlInit");
    unsetenv("FB_NVML_LIBRARY");
}

int main(int argc, char **argv)
{
    test_summary();
    test_thin();
    test_reasons();
    test_line();
    if (argc >= 3)
        test_nvml(argv[1], argv[2]);
    else
        CHECK(!"usage: test_telemetry FAKE_NVML FAKE_NVML_NO_POWER");
    TEST_DONE();
}
