/* Topology answers against recorded real machines (hwloc XML fixtures): counts, where each GPU
 * attaches, and the binding verdict for ranks bound to the right socket, the wrong one, both, or
 * none. argv[1] is the fixture folder (tests/data/topology). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "fixture.h"
#include "test.h"
#include "topo.h"

/* Checks where the GPU at busid attaches. */
static void check_gpu(struct fb_topo *t, const char *busid, const char *cpus, const char *numa)
{
    char c[512], n[64];
    fb_status st = fb_topo_pci_locality(t, busid, c, sizeof c, n, sizeof n);

    if (st != FB_OK) {
        fprintf(stderr, "GPU %s: fb_topo_pci_locality says %s\n", busid, fb_status_str(st));
        fb_test_failures++;
        return;
    }
    if (strcmp(c, cpus) != 0 || strcmp(n, numa) != 0) {
        fprintf(stderr, "GPU %s: cpus \"%s\" numa \"%s\", expected \"%s\" and \"%s\"\n", busid, c,
                n, cpus, numa);
        fb_test_failures++;
    }
}

static void check_verdict(struct fb_topo *t, const char *cpus, const char *busid,
                          enum fb_verdict want, const char *why_has)
{
    char why[256] = "unset";
    enum fb_verdict v = fb_topo_binding_verdict(t, cpus, busid, why, sizeof why);

    if (v != want) {
        fprintf(stderr, "rank cpus \"%s\" + GPU %s: %s, expected %s (%s)\n", cpus ? cpus : "NULL",
                busid ? busid : "NULL", fb_verdict_str(v), fb_verdict_str(want), why);
        fb_test_failures++;
    }
    if (strchr(why, '\n'))
        fprintf(stderr, "why is not one line: %s\n", why), fb_test_failures++;
    if (why_has)
        CHECK_HAS(why, why_has);
}

/* 2-socket Xeon E5-2650 (8 cores x 2 threads per socket), a Tesla K40m behind socket 1. */
static void xeon_k40m(void)
{
    struct fb_topo *t = fb_fixture_topo("32em64t-2n8c2t-pci-normalio.xml");
    struct fb_topo_summary sum;
    char cpus[64], numa[64];
    bool bound = true;

    if (!t)
        return;
    fb_topo_summary(t, &sum);
    CHECK(sum.sockets == 2);
    CHECK(sum.numa_nodes == 2);
    CHECK(sum.cores == 16);
    CHECK(sum.pus == 32);
    /* 33525560 KiB + 33554432 KiB on the two NUMA nodes. */
    CHECK(sum.memory_bytes == 67079992ULL * 1024);
    CHECK(sum.llc_bytes == 20ULL << 20); /* one socket's 20 MiB L3, not the two together */
    CHECK_STR(sum.cpu_model, "Intel(R) Xeon(R) CPU E5-2650 0 @ 2.00GHz");
    CHECK_STR(sum.hwloc_version, ""); /* this export does not record one */
    CHECK(!fb_topo_is_this_system(t));

    check_gpu(t, "0000:84:00.0", "8-15,24-31", "1"); /* Tesla K40m (cuda0) */
    check_gpu(t, "0000:03:00.0", "0-7,16-23", "0");  /* Tesla M2075 on socket 0 */
    check_gpu(t, "84:00.0", "8-15,24-31", "1");      /* domain may be omitted */

    CHECK(fb_topo_pci_locality(t, "0000:99:00.0", cpus, sizeof cpus, numa, sizeof numa) ==
          FB_ERR_UNSUPPORTED);
    CHECK_STR(cpus, "");
    CHECK(fb_topo_pci_locality(t, "not-a-bus-id", cpus, sizeof cpus, numa, sizeof numa) ==
          FB_ERR_USAGE);
    /* An XML topology is not this machine: asking for this process's binding is refused. */
    CHECK(fb_topo_my_binding(t, cpus, sizeof cpus, numa, sizeof numa, &bound) ==
          FB_ERR_UNSUPPORTED);
    CHECK(!bound);

    CHECK(fb_topo_cpus_numa(t, "8-15", numa, sizeof numa) == FB_OK);
    CHECK_STR(numa, "1");
    CHECK(fb_topo_cpus_numa(t, "0,31", numa, sizeof numa) == FB_OK);
    CHECK_STR(numa, "0-1");

    /* One rank alone on the node, bound to core 0 (Open MPI's default) while its GPU is on
     * socket 1: it moves to the GPU's socket; already there, unknown, or one of several. */
    CHECK(fb_topo_gpu_rebind(t, "0000:84:00.0", 1, "0", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "8-15,24-31");
    CHECK(fb_topo_gpu_rebind(t, "0000:84:00.0", 1, "", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "8-15,24-31");
    CHECK(fb_topo_gpu_rebind(t, "0000:84:00.0", 1, "0-31", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "8-15,24-31"); /* unbound straddles both sockets */
    CHECK(fb_topo_gpu_rebind(t, "0000:84:00.0", 1, "9", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "");
    CHECK(fb_topo_gpu_rebind(t, "0000:03:00.0", 1, "0", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "");
    CHECK(fb_topo_gpu_rebind(t, "0000:84:00.0", 2, "0", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, ""); /* the launcher lays several ranks out */
    CHECK(fb_topo_gpu_rebind(t, "0000:99:00.0", 1, "0", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "");
    CHECK(fb_topo_gpu_rebind(t, "0000:84:00.0", 1, "zero", cpus, sizeof cpus) == FB_ERR_USAGE);
    /* --self-bind (issue 28): every rank to its GPU's socket, whatever the launcher did and
     * however many ranks the node has; without a GPU, 3 ranks over 2 sockets in blocks (0 and
     * 1 on socket 0, 2 on socket 1), never round robin */
    CHECK(fb_topo_rank_home(t, "0000:84:00.0", 1, 3, "0-31", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "8-15,24-31");
    CHECK(fb_topo_rank_home(t, "0000:84:00.0", 1, 3, "0", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "8-15,24-31");
    CHECK(fb_topo_rank_home(t, "0000:84:00.0", 0, 2, "9", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, ""); /* already there */
    CHECK(fb_topo_rank_home(t, "0000:03:00.0", 2, 3, "", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "0-7,16-23");
    CHECK(fb_topo_rank_home(t, NULL, 0, 3, "0-31", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "0-7,16-23");
    CHECK(fb_topo_rank_home(t, "", 1, 3, "0-31", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "0-7,16-23");
    CHECK(fb_topo_rank_home(t, NULL, 2, 3, "0-31", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "8-15,24-31");
    CHECK(fb_topo_rank_home(t, NULL, 2, 3, "8", cpus, sizeof cpus) == FB_OK);
    CHECK_STR(cpus, "");
    CHECK(fb_topo_rank_home(t, "0000:99:00.0", 0, 1, "0", cpus, sizeof cpus) ==
          FB_ERR_UNSUPPORTED);
    CHECK(fb_topo_rank_home(t, NULL, 3, 3, "0", cpus, sizeof cpus) == FB_ERR_USAGE);
    CHECK(fb_topo_rank_home(t, NULL, 0, 2, "zero", cpus, sizeof cpus) == FB_ERR_USAGE);
    CHECK(fb_topo_bind(t, "8-15") == FB_ERR_UNSUPPORTED); /* an XML topology is not this one */
    CHECK(fb_topo_cpus_numa(t, "x", numa, sizeof numa) == FB_ERR_USAGE);

    /* The classic: a rank on socket 0 driving the GPU of socket 1. */
    check_verdict(t, "0-7,16-23", "0000:84:00.0", FB_FAIL, "NUMA node 0");
    check_verdict(t, "0-7,16-23", "0000:84:00.0", FB_FAIL, "on NUMA node 1");
    check_verdict(t, "0", "0000:84:00.0", FB_FAIL, NULL);
    check_verdict(t, "8-15,24-31", "0000:84:00.0", FB_PASS, "NUMA node 1");
    check_verdict(t, "12", "0000:84:00.0", FB_PASS, NULL);
    check_verdict(t, "0-7,16-23", "0000:03:00.0", FB_PASS, "NUMA node 0");
    check_verdict(t, "0-31", "0000:84:00.0", FB_WARN, "not bound");
    check_verdict(t, "7-8", "0000:84:00.0", FB_WARN, "straddle NUMA nodes 0-1");
    check_verdict(t, "", "0000:84:00.0", FB_WARN, "unknown");
    check_verdict(t, NULL, "0000:84:00.0", FB_WARN, "unknown");
    check_verdict(t, "8-15", "0000:99:00.0", FB_SKIP, "not in the hwloc topology");
    check_verdict(t, "8-15", "", FB_SKIP, NULL);
    check_verdict(t, "8-15", NULL, FB_SKIP, NULL);
    check_verdict(t, "200-201", "0000:84:00.0", FB_SKIP, "not in this topology");
    fb_topo_free(t);
}

/* DGX-2H: 16 V100 behind PLX switches, 8 per socket; CPU sets cut to PUs 0-1 and 24-25. */
static void dgx2(void)
{
    static const char *const sock0[] = {"0000:34:00.0", "0000:36:00.0", "0000:39:00.0",
                                        "0000:3b:00.0", "0000:57:00.0", "0000:59:00.0",
                                        "0000:5c:00.0", "0000:5e:00.0"};
    static const char *const sock1[] = {"0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0",
                                        "0000:be:00.0", "0000:e0:00.0", "0000:e2:00.0",
                                        "0000:e5:00.0", "0000:e7:00.0"};
    struct fb_topo *t = fb_fixture_topo("nvidiaDGX2.xml");
    struct fb_topo_summary sum;

    if (!t)
        return;
    fb_topo_summary(t, &sum);
    CHECK(sum.sockets == 2);
    CHECK(sum.numa_nodes == 2);
    CHECK(sum.pus == 4);
    /* The release that wrote the XML, as the root object records it. */
    CHECK_STR(sum.hwloc_version, "PR-436-20201209.1647.gitfc946998");
    CHECK(sum.llc_bytes == 33ULL << 20); /* each Xeon Platinum 8174's 33 MiB L3 */
    for (size_t i = 0; i < 8; i++) {
        check_gpu(t, sock0[i], "0-1", "0");
        check_gpu(t, sock1[i], "24-25", "1");
    }
    /* cudaDeviceGetPCIBusId writes upper-case hex. */
    check_gpu(t, "0000:3B:00.0", "0-1", "0");
    check_gpu(t, "0000:B7:00.0", "24-25", "1");

    check_verdict(t, "24-25", "0000:E7:00.0", FB_PASS, NULL);
    check_verdict(t, "0-1", "0000:B7:00.0", FB_FAIL, "NUMA node 1");
    check_verdict(t, "0-1,24-25", "0000:34:00.0", FB_WARN, "not bound");
    check_verdict(t, "1,24", "0000:34:00.0", FB_WARN, "straddle");
    fb_topo_free(t);
}

/* IBM POWER8 (8335-GTB): 4 P100 over NVLink, 2 per socket, PCI domains 0002/0003 and 000a/000b. */
static void power8(void)
{
    struct fb_topo *t = fb_fixture_topo("power8gpudistances.xml");
    struct fb_topo_summary sum;

    if (!t)
        return;
    fb_topo_summary(t, &sum);
    CHECK(sum.sockets == 2);
    CHECK(sum.numa_nodes == 2);
    CHECK(sum.cores == 8);
    CHECK(sum.pus == 16);
    CHECK_STR(sum.hwloc_version, "2.5.0a1-git");
    CHECK(sum.llc_bytes == 8ULL << 20); /* POWER8's 8 MiB L3 per core */
    check_gpu(t, "0002:01:00.0", "0-1,8-9,16-17,24-25", "0");
    check_gpu(t, "0003:01:00.0", "0-1,8-9,16-17,24-25", "0");
    check_gpu(t, "000a:01:00.0", "80-81,88-89,96-97,104-105", "1");
    check_gpu(t, "000B:01:00.0", "80-81,88-89,96-97,104-105", "1");

    check_verdict(t, "80-81", "000a:01:00.0", FB_PASS, NULL);
    check_verdict(t, "0-1,8-9,16-17,24-25", "000b:01:00.0", FB_FAIL, "NUMA node 0");
    check_verdict(t, "0-1,8-9,16-17,24-25,80-81,88-89,96-97,104-105", "0002:01:00.0", FB_WARN,
                  "not bound");
    fb_topo_free(t);
}

/* With a topology loaded, hwloc's plugins are mapped: its OpenCL and GL plugins (and the
 * OpenCL loader and Xlib behind them) must not be, where they are installed beside its PCI
 * plugin (fb_topo_plugins_prepare, called by fb_topo_load; docs/sanitizers.md). */
static void unused_plugins_not_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024], dir[900] = "", path[1000];
    bool opencl = false, gl = false;

    if (!f) {
        CHECK(!"cannot read /proc/self/maps");
        return;
    }
    while (fgets(line, sizeof line, f)) {
        char *slash = strchr(line, '/'), *pci = strstr(line, "/hwloc_pci.so");
        if (pci && slash && slash < pci)
            snprintf(dir, sizeof dir, "%.*s", (int)(pci - slash), slash);
        opencl |= strstr(line, "/hwloc_opencl.so") || strstr(line, "/libOpenCL.so");
        gl |= strstr(line, "/hwloc_gl.so") != NULL;
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/hwloc_opencl.so", dir);
    if (!dir[0] || access(path, F_OK) != 0) {
        printf("SKIP unused_plugins_not_mapped: no hwloc_opencl.so beside a loaded hwloc_pci.so: "
               "nothing to keep out here\n");
        return;
    }
    CHECK(!opencl);
    CHECK(!gl);
}

/* This machine: the binding read through hwloc matches the affinity the test sets itself. */
static void this_machine(void)
{
    struct fb_topo *t = NULL;
    struct fb_topo_summary sum;
    cpu_set_t orig;
    char cpus[512], numa[64], want[16];
    bool bound = false;
    int first = -1;

    if (fb_topo_load(&t, NULL) != FB_OK) {
        fprintf(stderr, "cannot load this machine's topology\n");
        fb_test_failures++;
        return;
    }
    CHECK(fb_topo_is_this_system(t));
    unused_plugins_not_mapped();
    fb_topo_summary(t, &sum);
    CHECK(sum.pus >= 1);
    CHECK(sum.hwloc_version[0] != '\0');
    /* The last-level cache is at least the L2 glibc reads from CPUID (0 where it cannot). */
    printf("this machine: last-level cache %llu bytes\n", sum.llc_bytes);
    {
        long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (l2 > 0)
            CHECK(sum.llc_bytes >= (unsigned long long)l2);
    }
    CHECK(fb_topo_my_binding(t, cpus, sizeof cpus, numa, sizeof numa, &bound) == FB_OK);
    CHECK(cpus[0] != '\0');

    /* Pin the whole process to its first allowed CPU and read it back. Every thread, as
     * mpirun --bind-to binds a rank: a library may start threads when it loads (OpenBLAS did,
     * when this test linked the whole harness; it links fb_hw alone now), and the binding
     * read is the process's, all threads merged. */
    if (sched_getaffinity(0, sizeof orig, &orig) == 0) {
        hwloc_topology_t topo = fb_topo_hwloc(t);
        hwloc_bitmap_t set = hwloc_bitmap_alloc(), back = hwloc_bitmap_alloc();
        for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
            if (CPU_ISSET(c, &orig))
                first = c;
        if (set && back && first >= 0 &&
            hwloc_get_cpubind(topo, back, HWLOC_CPUBIND_PROCESS) == 0) {
            hwloc_bitmap_only(set, (unsigned)first);
            CHECK(hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0);
            snprintf(want, sizeof want, "%d", first);
            CHECK(fb_topo_my_binding(t, cpus, sizeof cpus, numa, sizeof numa, &bound) == FB_OK);
            CHECK_STR(cpus, want);
            CHECK(numa[0] != '\0');
            /* One CPU of several the machine allows is a binding; the only CPU there is, is
             * not (hwloc drops CPUs a cgroup forbids, so pus counts the allowed ones). */
            CHECK(bound == (sum.pus > 1));
            CHECK(hwloc_set_cpubind(topo, back, HWLOC_CPUBIND_PROCESS) == 0);
        } else {
            fprintf(stderr, "cannot read this process's binding to pin it\n");
            fb_test_failures++;
        }
        hwloc_bitmap_free(set);
        hwloc_bitmap_free(back);
    }
    fb_topo_free(t);
}

static void verdict_names(void)
{
    CHECK_STR(fb_verdict_str(FB_PASS), "PASS");
    CHECK_STR(fb_verdict_str(FB_WARN), "WARN");
    CHECK_STR(fb_verdict_str(FB_FAIL), "FAIL");
    CHECK_STR(fb_verdict_str(FB_SKIP), "SKIP");
    CHECK(fb_verdict_worst(FB_PASS, FB_FAIL) == FB_FAIL);
    CHECK(fb_verdict_worst(FB_WARN, FB_PASS) == FB_WARN);
    CHECK(fb_verdict_worst(FB_SKIP, FB_PASS) == FB_PASS);
    CHECK(fb_verdict_worst(FB_FAIL, FB_SKIP) == FB_FAIL);
    CHECK(fb_verdict_worst(FB_SKIP, FB_SKIP) == FB_SKIP);
}

int main(int argc, char **argv)
{
    struct fb_topo *t = NULL;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR (tests/data/topology)\n", argv[0]);
        return 1;
    }
    fb_fixtures = argv[1];
    verdict_names();
    xeon_k40m();
    dgx2();
    power8();
    this_machine();

    /* A missing file is an error with a status, not a crash. */
    CHECK(fb_topo_load(&t, "/nonexistent/topology.xml") == FB_ERR_IO);
    CHECK(t == NULL);
    fb_topo_free(NULL);
    TEST_DONE();
}
