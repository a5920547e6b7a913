/* Pair links against recorded machines (hwloc XML fixtures in argv[1]): NVLink from the DGX-2 and
 * POWER8 NVLink matrices, the PCI path once the matrix is removed, CPU bindings in one package or
 * two, and NVML's link count. Built a second time with FB_FAKE_NVML, this file is a fake
 * libnvidia-ml.so.1 describing a made-up machine; with argv[2] = "fake-nvml" the test runs against
 * it (LD_LIBRARY_PATH set by CTest) to check the counting itself. */
#ifdef FB_FAKE_NVML

#include <stdio.h>
#include <string.h>

/* The ABI subset fb_pair_link_nvlinks() uses; NVML_ERROR_INVALID_ARGUMENT is 2. */
struct pci_info {
    char legacy[16];
    unsigned domain, bus, device, device_id, subsystem_id;
    char bus_id[32];
};
enum { GPU = 0, NPU = 1, SWITCH = 2, NONE = -1 };
struct link { int active, type; const char *remote; };
struct gpu { const char *bus_id; struct link links[18]; };

#define GPU0 "00000000:07:00.0"
#define GPU1 "00000000:0F:00.0"
#define SW "00000000:C1:00.0"
#define SW6 {1, SWITCH, SW}, {1, SWITCH, SW}, {1, SWITCH, SW}, {1, SWITCH, SW}, {1, SWITCH, SW}, \
            {1, SWITCH, SW}
/* GPU0-GPU1: three active links (0, 1, 5), an inactive one, a CPU link whose remote PCI id is
 * (wrongly) GPU1's, and a link 4 that answers an error. GPU2 and GPU3 reach NVSwitches by 6 and
 * 12 active links; GPU4 has only inactive links. Links left zeroed with remote NULL answer an
 * error. */
static const struct gpu gpus[] = {
    {GPU0, {{1, GPU, GPU1}, {1, GPU, GPU1}, {0, GPU, GPU1}, {1, NPU, GPU1}, {0, NONE, NULL},
            {1, GPU, GPU1}}},
    {GPU1, {{1, GPU, GPU0}, {1, GPU, GPU0}, {0, NONE, "-"}, {0, NONE, "-"}, {0, NONE, "-"},
            {1, GPU, GPU0}}},
    {"00000000:47:00.0", {SW6, {0, SWITCH, SW}}},
    {"00000000:4E:00.0", {SW6, SW6}},
    {"00000000:87:00.0", {{0, GPU, GPU0}, {0, SWITCH, SW}}},
};

int fb_fake_nvml = 1;       /* marker: the test checks it loaded this library, not a driver's */
int fb_fake_nvml_init_rc;   /* what nvmlInit_v2 answers */
int fb_fake_nvml_inits, fb_fake_nvml_shutdowns;

int nvmlInit_v2(void) { return fb_fake_nvml_inits++, fb_fake_nvml_init_rc; }
int nvmlShutdown(void) { return fb_fake_nvml_shutdowns++, 0; }
const char *nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Not Found"; }

/* Only NVML's own spelling is accepted, so the test sees that callers' spellings are converted. */
int nvmlDeviceGetHandleByPciBusId_v2(const char *id, const struct gpu **dev)
{
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (strcmp(id, gpus[i].bus_id) == 0)
            return *dev = &gpus[i], 0;
    return 6;
}

static const struct link *link_of(const struct gpu *g, unsigned l)
{
    return l < 18 && g->links[l].remote ? &g->links[l] : NULL;
}

int nvmlDeviceGetNvLinkState(const struct gpu *g, unsigned l, int *active)
{
    const struct link *k = link_of(g, l);
    return k ? (*active = k->active, 0) : 2;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(const struct gpu *g, unsigned l, int *type)
{
    const struct link *k = link_of(g, l);
    return k && k->type != NONE ? (*type = k->type, 0) : 2;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(const struct gpu *g, unsigned l, struct pci_info *pci)
{
    const struct link *k = link_of(g, l);

    if (!k)
        return 2;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->bus_id, sizeof pci->bus_id, "%s", k->remote);
    return 0;
}

#else /* the test */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "pair_link.h"
#include "fixture.h"
#include "test.h"
#include "topo.h"

static void check_gpu(struct fb_topo *t, const char *a, const char *b, int nvlinks,
                      enum fb_link want, int line)
{
    enum fb_link got = fb_pair_link_gpu(t, a, b, nvlinks);

    if (got != want) {
        fprintf(stderr, "%s:%d: GPUs %s and %s (nvlinks %d): %s, expected %s\n", __FILE__, line,
                a ? a : "NULL", b ? b : "NULL", nvlinks, fb_pair_link_name(got),
                fb_pair_link_name(want));
        fb_test_failures++;
    }
}
#define GPU_LINK(t, a, b, nv, want) check_gpu(t, a, b, nv, want, __LINE__)

static void check_cpu(struct fb_topo *t, const char *a, const char *b, enum fb_link want,
                      int line)
{
    enum fb_link got = fb_pair_link_cpu(t, a, b);

    if (got != want) {
        fprintf(stderr, "%s:%d: CPUs '%s' and '%s': %s, expected %s\n", __FILE__, line,
                a ? a : "NULL", b ? b : "NULL", fb_pair_link_name(got), fb_pair_link_name(want));
        fb_test_failures++;
    }
}
#define CPU_LINK(t, a, b, want) check_cpu(t, a, b, want, __LINE__)

static void names(void)
{
    CHECK_STR(fb_pair_link_name(FB_LINK_UNKNOWN), "unknown");
    CHECK_STR(fb_pair_link_name(FB_LINK_SAME_DEVICE), "same-gpu");
    CHECK_STR(fb_pair_link_name(FB_LINK_NVLINK), "nvlink");
    CHECK_STR(fb_pair_link_name(FB_LINK_PCIE_SWITCH), "pcie-switch");
    CHECK_STR(fb_pair_link_name(FB_LINK_HOST_BRIDGE), "host-bridge");
    CHECK_STR(fb_pair_link_name(FB_LINK_SOCKET), "socket");
    CHECK_STR(fb_pair_link_name(FB_LINK_CROSS_SOCKET), "cross-socket");
    CHECK_STR(fb_pair_link_name(FB_LINK_NETWORK), "network");
    CHECK_STR(fb_pair_link_name((enum fb_link)99), "????");
}

/* A hand-made NVLink matrix on the DGX-2's PCI tree: GPU 34 reaches NVSwitch 61 but GPU b7
 * reaches none, and b7 lists a link to 57 that 57 does not list back. */
static void nvlink_matrix(struct fb_topo *t)
{
    hwloc_topology_t topo = fb_topo_hwloc(t);
    hwloc_obj_t objs[4] = {hwloc_get_pcidev_by_busid(topo, 0, 0x34, 0, 0),
                           hwloc_get_pcidev_by_busid(topo, 0, 0x57, 0, 0),
                           hwloc_get_pcidev_by_busid(topo, 0, 0xb7, 0, 0),
                           hwloc_get_pcidev_by_busid(topo, 0, 0x61, 0, 0)};
    hwloc_uint64_t bw[16] = {0};
    hwloc_distances_add_handle_t h;

    CHECK(objs[0] && objs[1] && objs[2] && objs[3]);
    bw[0 * 4 + 3] = bw[3 * 4 + 0] = 25000;
    bw[2 * 4 + 1] = 20000;
    h = hwloc_distances_add_create(topo, "NVLinkBandwidth", HWLOC_DISTANCES_KIND_FROM_USER |
                                   HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH, 0);
    CHECK(h && hwloc_distances_add_values(topo, h, 4, objs, bw, 0) == 0 &&
          hwloc_distances_add_commit(topo, h, 0) == 0);
    GPU_LINK(t, "0000:34:00.0", "0000:b7:00.0", 0, FB_LINK_CROSS_SOCKET); /* one switch end */
    GPU_LINK(t, "0000:57:00.0", "0000:b7:00.0", 0, FB_LINK_NVLINK);
    GPU_LINK(t, "0000:34:00.0", "0000:57:00.0", 0, FB_LINK_SOCKET);
    GPU_LINK(t, "0000:34:00.0", "0000:36:00.0", 0, FB_LINK_PCIE_SWITCH); /* 36 not in it */
}

/* DGX-2H: package 0 has host bridges with GPUs 34,36 | 39,3b (two PLX leaves under one PLX) and
 * 57,59 | 5c,5e; package 1 has b7.. and e0..e7. The NVLink matrix joins every GPU to its
 * baseboard's 6 NVSwitches and no GPU to another directly. PUs 0-1 and 24-25. */
static void dgx2(void)
{
    struct fb_topo *t = fb_fixture_topo("nvidiaDGX2.xml");

    if (!t)
        return;
    GPU_LINK(t, "0000:34:00.0", "0000:36:00.0", 0, FB_LINK_NVLINK);
    /* Different baseboards, different NVSwitches: still one NVLink fabric. */
    GPU_LINK(t, "0000:34:00.0", "0000:e7:00.0", 0, FB_LINK_NVLINK);
    GPU_LINK(t, "0000:3B:00.0", "0000:3b:00.0", 0, FB_LINK_SAME_DEVICE);
    GPU_LINK(t, "0000:34:00.0", "0000:35:00.0", 0, FB_LINK_UNKNOWN); /* no such device */
    CPU_LINK(t, "0", "1", FB_LINK_SOCKET);
    CPU_LINK(t, "0-1", "24-25", FB_LINK_CROSS_SOCKET);
    CPU_LINK(t, "0,24", "1", FB_LINK_UNKNOWN);

    /* The same machine as a PCI tree only. */
    CHECK(hwloc_distances_remove(fb_topo_hwloc(t)) == 0);
    GPU_LINK(t, "0000:34:00.0", "0000:36:00.0", 0, FB_LINK_PCIE_SWITCH); /* same PLX leaf */
    GPU_LINK(t, "0000:34:00.0", "0000:3b:00.0", 0, FB_LINK_PCIE_SWITCH); /* same upper PLX */
    GPU_LINK(t, "0000:34:00.0", "0000:57:00.0", 0, FB_LINK_SOCKET);
    GPU_LINK(t, "0000:5e:00.0", "0000:b7:00.0", 0, FB_LINK_CROSS_SOCKET);
    GPU_LINK(t, "0000:e0:00.0", "0000:be:00.0", 0, FB_LINK_SOCKET);
    GPU_LINK(t, "0000:34:00.0", "0000:b7:00.0", 6, FB_LINK_NVLINK); /* NVML's count wins */
    nvlink_matrix(t);
    fb_topo_free(t);
}

/* POWER8 with 4 P100: GPUs 0002:01 and 0003:01 on package 0 (own host bridges), 000a:01 and
 * 000b:01 on package 1; NVLink pairs 0-1 and 2-3 and each pair to its package, none across.
 * PUs 0-1,8-9,16-17,24-25 | 80-81,88-89,96-97,104-105. */
static void power8(void)
{
    struct fb_topo *t = fb_fixture_topo("power8gpudistances.xml");

    if (!t)
        return;
    GPU_LINK(t, "0002:01:00.0", "0003:01:00.0", 0, FB_LINK_NVLINK);
    GPU_LINK(t, "000A:01:00.0", "000b:01:00.0", 0, FB_LINK_NVLINK);
    /* Both GPUs have NVLink to a package: not to each other. */
    GPU_LINK(t, "0002:01:00.0", "000a:01:00.0", 0, FB_LINK_CROSS_SOCKET);
    GPU_LINK(t, "0003:01:00.0", "000b:01:00.0", 0, FB_LINK_CROSS_SOCKET);
    CPU_LINK(t, "0-1,8", "16-17", FB_LINK_SOCKET);
    CPU_LINK(t, "0", "80-81,104", FB_LINK_CROSS_SOCKET);
    CHECK(hwloc_distances_remove(fb_topo_hwloc(t)) == 0);
    GPU_LINK(t, "0002:01:00.0", "0003:01:00.0", 0, FB_LINK_SOCKET);
    fb_topo_free(t);
}

/* Xeon E5 2 x 8c x 2t: 03:00.0 (3D) and 05:03.0 (VGA) on package 0's host bridge, 83:00.0 and
 * 84:00.0 (3D) on package 1's, each below its own root port. Package 0 = PUs 0-7,16-23. */
static void xeon(void)
{
    struct fb_topo *t = fb_fixture_topo("32em64t-2n8c2t-pci-normalio.xml");

    if (!t)
        return;
    GPU_LINK(t, "0000:83:00.0", "0000:84:00.0", 0, FB_LINK_HOST_BRIDGE);
    GPU_LINK(t, "0000:03:00.0", "0000:05:03.0", 0, FB_LINK_HOST_BRIDGE);
    GPU_LINK(t, "0000:03:00.0", "0000:84:00.0", 0, FB_LINK_CROSS_SOCKET);
    GPU_LINK(t, "83:00.0", "0000:84:00.0", 0, FB_LINK_HOST_BRIDGE); /* domain left out */
    GPU_LINK(t, "0000:84:00.0", "84:00.0", 0, FB_LINK_SAME_DEVICE);
    GPU_LINK(t, "0000:84:00.0", "00000000:84:00.0", 0, FB_LINK_SAME_DEVICE); /* NVML's form */
    GPU_LINK(t, "0000:99:00.0", "0000:99:00.0", 0, FB_LINK_SAME_DEVICE); /* absent, still one */
    GPU_LINK(t, "0000:84:00.0", "0000:99:00.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, "0000:84:00.0", "0000:99:00.0", 2, FB_LINK_NVLINK);
    /* Malformed: nothing else counts, not even NVML's word. Each is paired with the id a lax
     * parser would read it as, so accepting it shows as same-gpu. */
    GPU_LINK(t, "0000:84:00", "0000:84:00.0", 4, FB_LINK_UNKNOWN);
    GPU_LINK(t, "0000:84:20.0", "0000:84:20.0", 0, FB_LINK_UNKNOWN); /* device > 0x1f */
    GPU_LINK(t, "0000:84:00.8", "0000:84:00.8", 0, FB_LINK_UNKNOWN); /* function > 7 */
    GPU_LINK(t, "0000:184:00.0", "0000:184:00.0", 0, FB_LINK_UNKNOWN); /* bus > 0xff */
    GPU_LINK(t, "184:00.0", "184:00.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, "0x0:84:00.0", "0000:84:00.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, " 0000:84:00.0", "0000:84:00.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, "0000:84:00.0 ", "0000:84:00.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, "0000:84:+0.0", "0000:84:00.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, "0000:84:00.0", "0000:84:00.0.0", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, "", "", 0, FB_LINK_UNKNOWN);
    GPU_LINK(t, NULL, NULL, 0, FB_LINK_UNKNOWN);
    GPU_LINK(NULL, "0000:03:00.0", "0000:84:00.0", 0, FB_LINK_UNKNOWN); /* no topology */
    GPU_LINK(NULL, "0000:03:00.0", "0000:84:00.0", 1, FB_LINK_NVLINK);

    CPU_LINK(t, "0-3", "4-7,16", FB_LINK_SOCKET);
    CPU_LINK(t, "5", "5", FB_LINK_SOCKET);
    CPU_LINK(t, "0-3", "8-11", FB_LINK_CROSS_SOCKET);
    CPU_LINK(t, "24-31", "16", FB_LINK_CROSS_SOCKET);
    CPU_LINK(t, "0-31", "0-3", FB_LINK_UNKNOWN); /* unbound */
    CPU_LINK(t, "0-3", "7-8", FB_LINK_UNKNOWN);  /* straddles both */
    CPU_LINK(t, "0-3", "32", FB_LINK_UNKNOWN);   /* not a CPU of this machine */
    CPU_LINK(t, "", "0-3", FB_LINK_UNKNOWN);
    CPU_LINK(t, "0-3", NULL, FB_LINK_UNKNOWN);
    CPU_LINK(NULL, "0-3", "4", FB_LINK_UNKNOWN);
    /* Strings hwloc's own parser would read as something. */
    CPU_LINK(t, "0-", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, "3-1", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, "0x3", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, " 5", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, "5,", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, "-1", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, "1,x", "1", FB_LINK_UNKNOWN);
    CPU_LINK(t, "99999999999", "1", FB_LINK_UNKNOWN);
    fb_topo_free(t);
}

/* fb_pair_link_nvlinks with stdout and stderr captured: it must not print. */
static int nvlinks_quiet(const char *a, const char *b, char *why, size_t whylen)
{
    FILE *cap = tmpfile();
    int saved1 = dup(1), saved2 = dup(2), n;

    fflush(stdout);
    fflush(stderr);
    if (cap) {
        dup2(fileno(cap), 1);
        dup2(fileno(cap), 2);
    }
    n = fb_pair_link_nvlinks(a, b, why, whylen);
    fflush(stdout);
    fflush(stderr);
    dup2(saved1, 1);
    dup2(saved2, 2);
    close(saved1);
    close(saved2);
    if (cap) {
        long printed = (fseek(cap, 0, SEEK_END), ftell(cap));
        if (printed != 0)
            fprintf(stderr, "fb_pair_link_nvlinks(%s, %s) printed %ld bytes\n", a, b, printed),
                fb_test_failures++;
        fclose(cap);
    }
    return n;
}

/* On whatever this machine is: a malformed id never reaches NVML, an absent driver or GPU gives
 * -1 with a reason, and nothing is printed. */
static void nvml_here(void)
{
    char why[256] = "unset";
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

    CHECK(nvlinks_quiet("0000:3b:00", "0000:3c:00.0", why, sizeof why) == -1);
    CHECK_HAS(why, "malformed PCI bus id '0000:3b:00'");
    CHECK(nvlinks_quiet("0000:3b:00.0", NULL, why, sizeof why) == -1);
    CHECK_HAS(why, "(null)");
    /* No GPU sits at domain ffff, bus ff. */
    CHECK(nvlinks_quiet("ffff:ff:1f.6", "ffff:ff:1f.7", why, sizeof why) == -1);
    CHECK(why[0] != '\0' && !strchr(why, '\n'));
    if (!lib)
        CHECK_HAS(why, "no NVML: libnvidia-ml.so.1");
    else
        CHECK(strstr(why, "not known to NVML") || strstr(why, "NVML does not start"));
    CHECK(nvlinks_quiet("ffff:ff:1f.6", "ffff:ff:1f.7", NULL, 0) == -1); /* no why: no crash */
    if (lib)
        dlclose(lib);
}

/* Against the fake library (see the top of this file). */
static void nvml_fake(void)
{
    char why[256] = "unset";
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    int *rc, *inits, *shutdowns;

    /* Held open so its counters live across fb_pair_link_nvlinks's own dlopen/dlclose. */
    if (!lib || !dlsym(lib, "fb_fake_nvml")) {
        fprintf(stderr, "the fake libnvidia-ml.so.1 is not first on LD_LIBRARY_PATH (%s)\n",
                lib ? "a real one loaded" : dlerror());
        fb_test_failures++;
        if (lib)
            dlclose(lib);
        return;
    }
    rc = dlsym(lib, "fb_fake_nvml_init_rc");
    inits = dlsym(lib, "fb_fake_nvml_inits");
    shutdowns = dlsym(lib, "fb_fake_nvml_shutdowns");

    CHECK(nvlinks_quiet("0000:07:00.0", "0000:0f:00.0", why, sizeof why) == 3);
    CHECK_STR(why, "");
    CHECK(nvlinks_quiet("0000:0F:00.0", "07:00.0", why, sizeof why) == 3);
    CHECK(nvlinks_quiet("0000:47:00.0", "0000:4e:00.0", why, sizeof why) == 6);
    CHECK(nvlinks_quiet("0000:4e:00.0", "0000:47:00.0", why, sizeof why) == 12);
    CHECK(nvlinks_quiet("0000:07:00.0", "0000:47:00.0", why, sizeof why) == 0); /* 07: no switch */
    CHECK(nvlinks_quiet("0000:47:00.0", "0000:87:00.0", why, sizeof why) == 0); /* 87: no link */
    CHECK(nvlinks_quiet("0000:07:00.0", "0000:07:00.0", why, sizeof why) == 0);
    CHECK(nvlinks_quiet("0000:07:00.0", "0000:aa:00.0", why, sizeof why) == -1);
    CHECK_STR(why, "GPU 0000:aa:00.0 is not known to NVML: Not Found");
    CHECK(nvlinks_quiet("0000:ab:00.0", "0000:07:00.0", why, sizeof why) == -1);
    CHECK_HAS(why, "GPU 0000:ab:00.0 is not known");
    *rc = 9;
    CHECK(nvlinks_quiet("0000:07:00.0", "0000:0f:00.0", why, sizeof why) == -1);
    CHECK_STR(why, "NVML does not start: Driver Not Loaded");
    *rc = 0;
    /* Every start but the failed one is shut down; the same-GPU call never starts NVML. */
    CHECK(*inits == 9);
    CHECK(*shutdowns == 8);
    {
        /* the expected-figure model's census of several GPUs, in one NVML session: GPU0's 3
         * links to GPU1 (the CPU link and the inactive one not counted), GPU3's 12 to
         * NVSwitches, an unknown GPU and a malformed id left unknown */
        const char *const ids[] = {"0000:07:00.0", "0000:4e:00.0", "0000:aa:00.0", "07:00"};
        struct fb_nvml_gpu g[4];
        bool known[4];
        CHECK(fb_pair_link_nvml_gpus(4, ids, g, known, why, sizeof why));
        CHECK(known[0] && known[1] && !known[2] && !known[3]);
        CHECK(g[0].npeers == 1 && g[0].peer[0].links == 3 && g[0].to_switch == 0);
        CHECK_STR(g[0].peer[0].bus, "00000000:0F:00.0");
        CHECK(g[1].to_switch == 12 && g[1].npeers == 0 && g[1].name[0] == '\0');
        CHECK(*inits == 10 && *shutdowns == 9);
        *rc = 9;
        CHECK(!fb_pair_link_nvml_gpus(1, ids, g, known, why, sizeof why));
        CHECK_STR(why, "NVML does not start: Driver Not Loaded");
        *rc = 0;
    }
    dlclose(lib);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR [fake-nvml]\n", argv[0]);
        return 2;
    }
    fb_fixtures = argv[1];
    if (argc > 2 && strcmp(argv[2], "fake-nvml") == 0) {
        nvml_fake();
        TEST_DONE();
    }
    names();
    dgx2();
    power8();
    xeon();
    nvml_here();
    TEST_DONE();
}

#endif
