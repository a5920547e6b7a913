/* The NCCL log classifier on real lines: every line of the fixture nccl-log-lines.tsv (lines
 * from public bug reports, and one test string of a public repository, NCCL 2.3 to 2.30, each
 * labelled with what it shows) must be
 * classified as labelled; the wordings of 2.26-2.30's network faults, failover and recovery
 * line by line; then whole logs of tests/data/nccl read into reports and verdicts.
 * argv[1]: the fixture folder; argv[2]: tests/data/nccl. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_report.h"
#include "nccl_verdict.h"
#include "test.h"

/* What a fixture category says a line is: its kind and, for a transport line, its path and
 * the transport text NCCL wrote ("" = not checked). */
struct expect {
    const char *category;
    enum fb_nccl_kind kind;
    enum fb_nccl_path path;
    const char *transport;
};

static const struct expect expects[] = {
    {"p2p_ipc", FB_NCCL_LINE_CONN, FB_NCCL_P2P, "P2P/IPC"},
    {"p2p_ipc_read", FB_NCCL_LINE_CONN, FB_NCCL_P2P, "P2P/IPC/read"},
    {"p2p_cumem", FB_NCCL_LINE_CONN, FB_NCCL_P2P, "P2P/CUMEM"},
    {"p2p_cumem_read", FB_NCCL_LINE_CONN, FB_NCCL_P2P, "P2P/CUMEM/read"},
    {"p2p_direct", FB_NCCL_LINE_CONN, FB_NCCL_P2P, "P2P/direct pointer"},
    {"p2p_direct_read", FB_NCCL_LINE_CONN, FB_NCCL_P2P, "P2P/direct pointer/read"},
    {"shm_direct", FB_NCCL_LINE_CONN, FB_NCCL_SHM, "SHM/direct/direct"},
    {"shm_direct_old", FB_NCCL_LINE_CONN, FB_NCCL_SHM, "direct shared memory"},
    {"net_ib_gdrdma", FB_NCCL_LINE_CONN, FB_NCCL_IB_GDR, ""},
    {"net_ibext_gdrdma", FB_NCCL_LINE_CONN, FB_NCCL_IB_GDR, ""},
    {"net_ib_no_gdr", FB_NCCL_LINE_CONN, FB_NCCL_IB, ""},
    {"net_ibext_no_gdr", FB_NCCL_LINE_CONN, FB_NCCL_IB, ""},
    {"net_socket", FB_NCCL_LINE_CONN, FB_NCCL_SOCKET, ""},
    {"net_init_ib", FB_NCCL_LINE_NET_IB, 0, NULL},
    {"net_init_ib_sharp", FB_NCCL_LINE_NET_IB, 0, NULL},
    {"net_init_roce", FB_NCCL_LINE_NET_IB, 0, NULL},
    {"net_ib_not_found", FB_NCCL_LINE_NET_IB_NONE, 0, NULL},
    {"net_init_socket", FB_NCCL_LINE_NET_SOCKET, 0, NULL},
    {"net_init_socket_list", FB_NCCL_LINE_NET_SOCKET, 0, NULL},
    {"net_init_socket_loopback", FB_NCCL_LINE_NET_SOCKET, 0, NULL},
    {"net_init_socket_oob", FB_NCCL_LINE_NET_SOCKET, 0, NULL},
    {"net_plugin", FB_NCCL_LINE_NET_PLUGIN, 0, NULL},
    {"using_network", FB_NCCL_LINE_NETWORK, 0, NULL},
    {"gdr_enabled", FB_NCCL_LINE_GDR, 0, NULL},
    {"gdr_disabled", FB_NCCL_LINE_GDR, 0, NULL},
    {"env", FB_NCCL_LINE_ENV, 0, NULL},
    {"version", FB_NCCL_LINE_VERSION, 0, NULL},
    {"warn", FB_NCCL_LINE_WARN, 0, NULL},
    {"warn_no_ibverbs", FB_NCCL_LINE_WARN, 0, NULL},
    {"warn_port_error", FB_NCCL_LINE_WARN, 0, NULL},
    {"warn_fatal_event", FB_NCCL_LINE_WARN, 0, NULL},
    {"warn_device_failed", FB_NCCL_LINE_WARN, 0, NULL},
    {"dmabuf", FB_NCCL_LINE_DMABUF, 0, NULL},
    /* NCCL's bookkeeping: read as NCCL's and otherwise left alone (ring lists and ring graphs
     * look like transport lines but have no "via") */
    {"affinity", FB_NCCL_LINE_INFO, 0, NULL},
    {"bootstrap", FB_NCCL_LINE_INFO, 0, NULL},
    {"channels_summary", FB_NCCL_LINE_INFO, 0, NULL},
    {"comm_topology", FB_NCCL_LINE_INFO, 0, NULL},
    {"connected", FB_NCCL_LINE_INFO, 0, NULL},
    {"info_misc", FB_NCCL_LINE_INFO, 0, NULL},
    {"init_complete", FB_NCCL_LINE_INFO, 0, NULL},
    {"init_info_old", FB_NCCL_LINE_INFO, 0, NULL},
    {"init_start", FB_NCCL_LINE_INFO, 0, NULL},
    {"ring_graph", FB_NCCL_LINE_INFO, 0, NULL},
    {"ring_list", FB_NCCL_LINE_INFO, 0, NULL},
    {"topology", FB_NCCL_LINE_INFO, 0, NULL},
    {"trees", FB_NCCL_LINE_INFO, 0, NULL},
};

/* The network event a WARN category reports; none for the others. */
static enum fb_nccl_event event_of(const char *category)
{
    return strcmp(category, "warn_port_error") == 0      ? FB_NCCL_EV_PORT_ERROR
           : strcmp(category, "warn_fatal_event") == 0   ? FB_NCCL_EV_FATAL
           : strcmp(category, "warn_device_failed") == 0 ? FB_NCCL_EV_DEV_FAILED
                                                         : FB_NCCL_EV_NONE;
}

/* The first "[YYYY-MM-DD HH:MM:SS]" of a line (NCCL's stamp; a collector's own stamp before it
 * has another shape), without the brackets, in out[20]; "" if none. */
static void stamp_of(const char *line, char out[20])
{
    out[0] = '\0';
    for (const char *p = line; (p = strchr(p, '[')); p++) {
        int n = 0;
        sscanf(p, "[%*4[0-9]-%*2[0-9]-%*2[0-9] %*2[0-9]:%*2[0-9]:%*2[0-9]]%n", &n);
        if (n == 21) {
            memcpy(out, p + 1, 19);
            out[19] = '\0';
            return;
        }
    }
}

static const struct expect *expect_of(const char *category)
{
    for (size_t i = 0; i < sizeof expects / sizeof *expects; i++)
        if (strcmp(expects[i].category, category) == 0)
            return &expects[i];
    return NULL;
}

/* Whether one fixture record is classified as labelled; says why not on stderr. */
static int fixture_line_ok(const char *version_field, const char *category, const char *line,
                           size_t lineno)
{
    const struct expect *e = expect_of(category);
    struct fb_nccl_line l;
    const char *stated = strstr(version_field, "stated: 'NCCL version ");
    char want[32] = "";

    if (!e) {
        fprintf(stderr, "fixture line %zu: category '%s' has no expectation here\n", lineno,
                category);
        return 0;
    }
    fb_nccl_classify_line(line, &l);
    if (l.kind != e->kind) {
        fprintf(stderr, "fixture line %zu (%s): kind %d, expected %d: %s\n", lineno, category,
                (int)l.kind, (int)e->kind, line);
        return 0;
    }
    if (e->kind == FB_NCCL_LINE_CONN) {
        bool net = e->path != FB_NCCL_P2P && e->path != FB_NCCL_SHM;
        if (l.conn.path != e->path || l.conn.inter != net || l.conn.channel < 0 ||
            l.conn.src < 0 || l.conn.dst < 0 ||
            (e->transport[0] && strcmp(l.conn.transport, e->transport) != 0) ||
            (net && strncmp(l.conn.transport, "NET/", 4) != 0)) {
            fprintf(stderr, "fixture line %zu (%s): path %s, inter %d, transport '%s': %s\n",
                    lineno, category, fb_nccl_path_str(l.conn.path), (int)l.conn.inter,
                    l.conn.transport, line);
            return 0;
        }
    }
    if ((e->kind == FB_NCCL_LINE_NET_IB || e->kind == FB_NCCL_LINE_NETWORK ||
         e->kind == FB_NCCL_LINE_ENV || e->kind == FB_NCCL_LINE_DMABUF) && !l.text[0]) {
        fprintf(stderr, "fixture line %zu (%s): nothing read: %s\n", lineno, category, line);
        return 0;
    }
    if (e->kind == FB_NCCL_LINE_WARN) {
        char stamp[20];
        stamp_of(line, stamp);
        if (strcmp(l.when, stamp) != 0 || (event_of(category) && !l.nic[0])) {
            fprintf(stderr, "fixture line %zu (%s): time '%s' (the line's '%s'), device '%s': "
                    "%s\n", lineno, category, l.when, stamp, l.nic, line);
            return 0;
        }
    }
    if (e->kind == FB_NCCL_LINE_WARN && l.event != event_of(category)) {
        fprintf(stderr, "fixture line %zu (%s): event '%s', expected '%s': %s\n", lineno,
                category, l.event ? fb_nccl_event_str(l.event) : "none",
                event_of(category) ? fb_nccl_event_str(event_of(category)) : "none", line);
        return 0;
    }
    if (e->kind == FB_NCCL_LINE_GDR && l.gdr != (strcmp(category, "gdr_enabled") == 0)) {
        fprintf(stderr, "fixture line %zu (%s): GDR read as %d\n", lineno, category, l.gdr);
        return 0;
    }
    /* where the line states the version, it must be read as the label says */
    if (stated)
        sscanf(stated + strlen("stated: 'NCCL version "), "%31[0-9.]", want);
    if (e->kind == FB_NCCL_LINE_VERSION && (!want[0] || strcmp(l.version, want) != 0)) {
        fprintf(stderr, "fixture line %zu: version '%s', labelled '%s'\n", lineno, l.version,
                want);
        return 0;
    }
    return 1;
}

static void test_fixture(const char *dir)
{
    char path[4096], *buf = NULL;
    size_t cap = 0, lineno = 0, total = 0, ok = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/nccl-log-lines.tsv", dir);
    f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    while (getline(&buf, &cap, f) >= 0) {
        char *fields[4], *p = buf;
        int n = 0;
        lineno++;
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        buf[strcspn(buf, "\r\n")] = '\0';
        for (; n < 4 && p; n++) {
            fields[n] = p;
            p = n < 3 ? strchr(p, '\t') : NULL;
            if (p)
                *p++ = '\0';
        }
        total++;
        CHECK(n == 4);
        if (n == 4)
            ok += (size_t)fixture_line_ok(fields[1], fields[2], fields[3], lineno);
    }
    free(buf);
    fclose(f);
    printf("%zu of %zu fixture lines classified as labelled\n", ok, total);
    CHECK(total >= 120); /* the fixture was read whole */
    CHECK(ok == total);
}

/* Hand-made lines: the formats the fixture lacks, and what must be refused. */
static void test_lines(void)
{
    struct fb_nccl_line l;

    /* 2.3: network lines without [send]/[receive] or bus ids, /GDCopy */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Ring 01 : 3 -> 0 via NET/IB/0/GDRDMA/GDCopy",
                                &l) == FB_NCCL_LINE_CONN);
    CHECK(l.conn.channel == 1 && l.conn.src == 3 && l.conn.dst == 0 && l.conn.path == FB_NCCL_IB_GDR);
    /* PXN proxy rank, (PCI) and /Shared (2.12 on) */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 02/1 : 4[4] -> 12[4] [send] via "
                                "NET/IB/3(5)/GDRDMA(PCI)/Shared\r\n", &l) == FB_NCCL_LINE_CONN);
    CHECK(l.conn.channel == 2 && l.conn.src == 4 && l.conn.dst == 12 && l.conn.path == FB_NCCL_IB_GDR);
    CHECK_STR(l.conn.transport, "NET/IB/3(5)/GDRDMA(PCI)/Shared");
    /* another plugin; multi-node NVLink; copy engine; srun's prefix */
    CHECK(fb_nccl_classify_line("0: h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via "
                                "NET/Libfabric/0/GDRDMA", &l) == FB_NCCL_LINE_CONN &&
          l.conn.path == FB_NCCL_NET_OTHER && l.conn.inter);
    CHECK(fb_nccl_classify_line("NCCL INFO Channel 00/0 : 0[0] -> 4[0] via P2P/MNNVL/read", &l) ==
              FB_NCCL_LINE_CONN && l.conn.path == FB_NCCL_P2P && l.conn.inter);
    CHECK(fb_nccl_classify_line("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/CE", &l) ==
              FB_NCCL_LINE_CONN && l.conn.path == FB_NCCL_P2P && !l.conn.inter);
    CHECK(fb_nccl_classify_line("NCCL INFO Channel 03 : 2[2] -> 3[3] via SHM/CE/direct", &l) ==
              FB_NCCL_LINE_CONN && l.conn.path == FB_NCCL_SHM);
    /* the NICs of an init line; [RO] is a flag, not a NIC */
    CHECK(fb_nccl_classify_line("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
                                "[1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>", &l) ==
          FB_NCCL_LINE_NET_IB);
    CHECK_STR(l.text, "mlx5_0:1/IB mlx5_1:1/RoCE");
    CHECK(fb_nccl_classify_line("h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> "
                                "[1]ib0:10.1.0.1<0>", &l) == FB_NCCL_LINE_NET_SOCKET);
    CHECK_STR(l.text, "eth0/Socket ib0/Socket");
    CHECK(fb_nccl_classify_line("h:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.",
                                &l) == FB_NCCL_LINE_ENV);
    CHECK_STR(l.text, "NCCL_P2P_DISABLE=1");
    /* other programs' lines, even ones that talk about NCCL */
    CHECK(fb_nccl_classify_line("Epoch 1: loss 0.35 via SGD", &l) == FB_NCCL_LINE_OTHER);
    CHECK(fb_nccl_classify_line("torch NCCL version: 2.18.1", &l) == FB_NCCL_LINE_OTHER);
    CHECK(fb_nccl_classify_line("", &l) == FB_NCCL_LINE_OTHER);
    /* NCCL's transport lines that cannot be read: malformed, never guessed */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via QUANTUM/0",
                                &l) == FB_NCCL_LINE_BAD);
    CHECK_HAS(l.text, "unknown transport 'QUANTUM/0'");
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 00 : x -> 1[1] via P2P/IPC", &l) ==
          FB_NCCL_LINE_BAD);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via NET/IB", &l) ==
          FB_NCCL_LINE_BAD);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via ", &l) ==
          FB_NCCL_LINE_BAD);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Ring 00 : 0[0] -> 1[1 via P2P/IPC", &l) ==
          FB_NCCL_LINE_BAD);
    /* cut short before its transport (a killed job's last line): refused, not skipped */
    static const char *const cut[] = {
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via",
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] vi",
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[",
        "h:1:2 [0] NCCL INFO Channel 01 : 0[",
        "h:1:2 [0] NCCL INFO Ring 00 : 0[0] ->",
        "h:1:2 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] vi", /* 2.3-2.4: no device */
    };
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        CHECK(fb_nccl_classify_line(cut[i], &l) == FB_NCCL_LINE_BAD);
        CHECK_STR(l.text, "a transport line cut short (no 'via TRANSPORT' after its ranks)");
    }
    /* ring lists and graphs have no "via" and are NCCL's ordinary lines */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Ring 02 : 2 -> 0 -> 1", &l) ==
          FB_NCCL_LINE_INFO);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 00/02 :    0   1   2   3", &l) ==
          FB_NCCL_LINE_INFO);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Channel 00/0 :", &l) == FB_NCCL_LINE_INFO);
}

/* Hand-made lines in the wordings of NCCL 2.26-2.30 (github.com/NVIDIA/nccl at the tag named;
 * event names from libibverbs' ibv_event_type_str): the timestamp before WARN lines, the port
 * error of every release, the failed device, its failover and recovery, the plugin and DMA-BUF
 * lines. */
static void test_lines_226_230(void)
{
    struct fb_nccl_line l;

    /* v2.18.1-1 transport/net_ib.cc:95, up to 2.19.4: no device named */
    CHECK(fb_nccl_classify_line("h:1:2 [0] transport/net_ib.cc:95 NCCL WARN NET/IB : Got async "
                                "event : port error", &l) == FB_NCCL_LINE_WARN);
    CHECK(l.event == FB_NCCL_EV_PORT_ERROR && l.nic[0] == '\0' && l.when[0] == '\0');
    /* v2.22.3-1 transport/net_ib.cc:103 (2.20.3 on), the old prefix's blank line aside */
    CHECK(fb_nccl_classify_line("h:1:2 [3] transport/net_ib.cc:103 NCCL WARN NET/IB : mlx5_2:1 "
                                "Got async event : port error\n", &l) == FB_NCCL_LINE_WARN);
    CHECK(l.event == FB_NCCL_EV_PORT_ERROR);
    CHECK_STR(l.nic, "mlx5_2:1");
    /* v2.26.2-1 transport/net_ib.cc:179 (2.23.4 to 2.28.3), with 2.26's timestamp and srun's
     * prefix before it */
    CHECK(fb_nccl_classify_line("3: [2026-03-04 10:11:12] h:1:2 [0] transport/net_ib.cc:179 "
                                "NCCL WARN NET/IB : mlx5_0:1 Got async error event: port error",
                                &l) == FB_NCCL_LINE_WARN);
    CHECK(l.event == FB_NCCL_EV_PORT_ERROR);
    CHECK_STR(l.when, "2026-03-04 10:11:12");
    CHECK_STR(l.text, "NET/IB : mlx5_0:1 Got async error event: port error");
    /* v2.30.7-1 transport/net_ib/common.cc:179 (2.28.7 on), 2.30.7's "(function)" and
     * NCCL_DEBUG_TIMESTAMP_FORMAT with subseconds ("[%F %T.%3f] ") */
    CHECK(fb_nccl_classify_line("[2026-03-04 10:11:12.345] h:1:2 [0] transport/net_ib/common.cc"
                                ":179 (ncclIbAsyncThreadMain) NCCL WARN NET/IB : mlx5_1:1 Got "
                                "non-fatal async event: port error(10)", &l) == FB_NCCL_LINE_WARN);
    CHECK(l.event == FB_NCCL_EV_PORT_ERROR);
    CHECK_STR(l.nic, "mlx5_1:1");
    CHECK_STR(l.when, "2026-03-04 10:11:12.345");
    CHECK(fb_nccl_classify_line("h:1:2 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : "
                                "mlx5_1:1 Got non-fatal async event: port active(9)", &l) ==
              FB_NCCL_LINE_WARN && l.event == FB_NCCL_EV_PORT_ACTIVE);
    /* v2.30.7-1 transport/net_ib/common.cc:123 (2.23.4 on): libibverbs' DEVICE_FATAL */
    CHECK(fb_nccl_classify_line("h:1:2 [0] transport/net_ib/common.cc:123 NCCL WARN NET/IB : "
                                "mlx5_0:1 async fatal event: local catastrophic error", &l) ==
              FB_NCCL_LINE_WARN && l.event == FB_NCCL_EV_FATAL);
    /* v2.29.7-1 transport/net_ib/p2p_resiliency.cc:312 and v2.30.7-1 ...:376 */
    CHECK(fb_nccl_classify_line("h:1:2 [0] transport/net_ib/p2p_resiliency.cc:312 NCCL WARN "
                                "NET/IB: ncclIbResiliencyHandleDeviceFailure: Device 1 marked as "
                                "failed. (recv comm=0x5)", &l) == FB_NCCL_LINE_WARN);
    CHECK(l.event == FB_NCCL_EV_DEV_FAILED);
    CHECK_STR(l.nic, "device 1");
    CHECK(fb_nccl_classify_line("h:1:2 [0] transport/net_ib/p2p_resiliency.cc:376 (ncclIbResilie"
                                "ncyHandleDeviceFailure) NCCL WARN NET/IB: Device 0 marked as "
                                "failed. Initiating recovery? No (send comm=0x5, "
                                "outstandingRecovery=0)", &l) == FB_NCCL_LINE_WARN &&
          l.event == FB_NCCL_EV_DEV_FAILED);
    /* INFO: already failed (no new failure), the failover, recovery and its end, the speed */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO NET/IB: f: Device 0 was already marked as "
                                "failed.", &l) == FB_NCCL_LINE_INFO && l.event == FB_NCCL_EV_NONE);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyReplaceQps: "
                                "Replacing QP: qpIndex=0 (qp_num=9, devIndex=0) to qpIndex=1 "
                                "(qp_num=8, devIndex=1) on send communicator (comm=0x5)", &l) ==
          FB_NCCL_LINE_NET_EVENT);
    CHECK(l.event == FB_NCCL_EV_FAILOVER);
    CHECK_STR(l.nic, "device 0");
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyProgress: Device 0 "
                                "has been recovered for resiliency context (send comm=0x5, "
                                "outstandingRecovery=0)", &l) == FB_NCCL_LINE_NET_EVENT &&
          l.event == FB_NCCL_EV_RECOVERED);
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyProgress: Device 0 "
                                "will not be attempted to be recovered any more (send comm=0x5, "
                                "outstandingRecovery=0).", &l) == FB_NCCL_LINE_NET_EVENT &&
          l.event == FB_NCCL_EV_RECOVERY_FAILED);
    /* v2.30.7-1 transport/net_ib/common.cc:163 */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO NET/IB : mlx5_0:1 speed change detected: "
                                "400000 -> 200000 Mbps", &l) == FB_NCCL_LINE_NET_EVENT);
    CHECK(l.event == FB_NCCL_EV_SPEED_CHANGE);
    CHECK_STR(l.nic, "mlx5_0:1");
    /* other WARN lines: counted, no event */
    CHECK(fb_nccl_classify_line("[2026-03-04 10:11:12] h:1:2 [0] graph/tuning.cc:187 NCCL WARN "
                                "CollNet is not supported", &l) == FB_NCCL_LINE_WARN &&
          l.event == FB_NCCL_EV_NONE);
    /* v2.29.7-1 plugin/net.cc:211 (2.27.3 on) and init.cc:394 */
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Assigned NET plugin IBext_v10 to comm", &l)
          == FB_NCCL_LINE_NETWORK);
    CHECK_STR(l.text, "IBext_v10");
    CHECK(fb_nccl_classify_line("h:1:2 [0] NCCL INFO Initialized NET plugin IB", &l) ==
          FB_NCCL_LINE_NET_PLUGIN);
    CHECK(fb_nccl_classify_line("h:1:2 [1] NCCL INFO DMA-BUF is available on GPU device 1", &l) ==
          FB_NCCL_LINE_DMABUF);
    CHECK_STR(l.text, "1");
}

static enum fb_verdict verdict_of(const struct fb_nccl_verdict *v, const char *check)
{
    for (int i = 0; i < FB_NCCL_VERDICTS; i++)
        if (strcmp(v[i].check, check) == 0)
            return v[i].verdict;
    return (enum fb_verdict)-1;
}

/* A log whose last line has no line end was cut while being written: a transport line there
 * is refused, even one that reads ("NET/IB/0/GDRD" would count as IB without GPUDirect); with
 * its line end the same line is read. */
static void test_last_line_cut(void)
{
    static const char head[] = "h:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
                               "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0/GDRD";
    for (int ended = 0; ended <= 1; ended++) {
        char path[] = "/tmp/fb_test_nccl_cut.XXXXXX", err[512] = "";
        const char *paths[1] = {path};
        struct fb_nccl_report r;
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

        CHECK(f != NULL);
        if (!f)
            return;
        fputs(head, f);
        if (ended)
            fputc('\n', f);
        fclose(f);
        fb_status st = fb_nccl_report_files(paths, 1, &r, err, sizeof err);
        if (ended) {
            CHECK(st == FB_OK);
            CHECK_STR(err, "");
        } else {
            CHECK(st == FB_ERR_USAGE);
            CHECK_HAS(err, ":2: a transport line cut short (the log's last line, with no line "
                           "end)");
        }
        if (st == FB_OK)
            fb_nccl_report_release(&r);
        unlink(path);
    }
}

/* Reads one log of tests/data/nccl; the report is released by the caller. */
static fb_status load(const char *dir, const char *name, struct fb_nccl_report *r,
                      struct fb_nccl_verdict v[FB_NCCL_VERDICTS], char *err, size_t errlen)
{
    char path[4096];
    const char *paths[1] = {path};
    fb_status st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    st = fb_nccl_report_files(paths, 1, r, err, errlen);
    if (st == FB_OK)
        fb_nccl_verdicts(r, v);
    else
        fprintf(stderr, "%s: %s\n", name, err);
    return st;
}

static void test_logs(const char *dir)
{
    struct fb_nccl_report r;
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];
    char err[512];

    /* two nodes of two GPUs, IB with GPUDirect RDMA; mpirun --tag-output, other programs */
    CHECK(load(dir, "ib_gdr_2node.log", &r, v, err, sizeof err) == FB_OK);
    CHECK_STR(r.version, "2.19.3");
    CHECK(r.intra[FB_NCCL_P2P] == 4 && r.intra[FB_NCCL_SHM] == 0);
    CHECK(r.inter[FB_NCCL_IB_GDR] == 4 && r.inter[FB_NCCL_IB] == 0 && r.inter[FB_NCCL_SOCKET] == 0);
    CHECK(r.nconns == 8 && r.ib_available && !r.ib_missing && r.version_other[0] == '\0');
    CHECK_STR(r.nics, "mlx5_0:1/IB");
    CHECK_STR(r.network, "IB");
    CHECK(r.nccl_lines > 20 && r.lines > r.nccl_lines);
    CHECK(r.nconns == 8 && r.conns[0].channel == 0 && r.conns[0].src == 0 && r.conns[0].dst == 1);
    CHECK(verdict_of(v, "nccl_version") == FB_PASS && verdict_of(v, "nccl_intra") == FB_PASS &&
          verdict_of(v, "nccl_inter") == FB_PASS && verdict_of(v, "nccl_gdr") == FB_PASS);
    {
        char sum[512];
        fb_nccl_report_summary(&r, sum, sizeof sum);
        CHECK_STR(sum, "NCCL 2.19.3; 8 connections; intra-node P2P 4; inter-node IB+GDR 4; "
                       "NICs mlx5_0:1/IB");
    }
    fb_nccl_report_release(&r);

    /* one node, SHM where P2P should be */
    CHECK(load(dir, "shm_single.log", &r, v, err, sizeof err) == FB_OK);
    CHECK_STR(r.version, "2.18.3");
    CHECK(r.intra[FB_NCCL_SHM] == 8 && r.intra[FB_NCCL_P2P] == 0 && r.nconns == 8);
    CHECK(verdict_of(v, "nccl_intra") == FB_WARN && verdict_of(v, "nccl_inter") == FB_SKIP &&
          verdict_of(v, "nccl_gdr") == FB_SKIP);
    CHECK_HAS(v[1].text, "P2P disabled or not possible");
    fb_nccl_report_release(&r);

    /* IB found, but sockets carried the traffic: the classic misconfiguration */
    CHECK(load(dir, "socket_despite_ib.log", &r, v, err, sizeof err) == FB_OK);
    CHECK(r.ib_available && r.inter[FB_NCCL_SOCKET] == 4 && r.intra[FB_NCCL_P2P] == 4);
    CHECK_STR(r.network, "Socket");
    CHECK_STR(r.nics, "mlx5_0:1/IB,mlx5_1:1/IB,ib0/Socket");
    CHECK(fb_nccl_verdicts(&r, v) == FB_FAIL && verdict_of(v, "nccl_inter") == FB_FAIL);
    CHECK_HAS(v[2].text, "although NCCL found InfiniBand");
    fb_nccl_report_release(&r);

    /* NCCL 2.3: "Ring" lines, ranks without ids on network lines, the version on stdout;
     * IB without GPUDirect RDMA, and a second rank with another NCCL */
    CHECK(load(dir, "ring_23.log", &r, v, err, sizeof err) == FB_OK);
    CHECK_STR(r.version, "2.3.7");
    CHECK_STR(r.version_other, "2.3.5");
    CHECK(r.intra[FB_NCCL_P2P] == 2 && r.inter[FB_NCCL_IB] == 2 && r.warns == 1);
    CHECK(verdict_of(v, "nccl_version") == FB_WARN && verdict_of(v, "nccl_gdr") == FB_WARN &&
          verdict_of(v, "nccl_inter") == FB_PASS);
    fb_nccl_report_release(&r);

    /* NCCL 2.26: a port error, its WARN line timestamped */
    CHECK(load(dir, "port_error_226.log", &r, v, err, sizeof err) == FB_OK);
    CHECK_STR(r.version, "2.26.2");
    CHECK(r.inter[FB_NCCL_IB_GDR] == 2 && r.nconns == 2 && r.warns == 1);
    CHECK(r.events[FB_NCCL_EV_PORT_ERROR] == 1 && r.events[FB_NCCL_EV_DEV_FAILED] == 0);
    CHECK_STR(r.event_nics[FB_NCCL_EV_PORT_ERROR], "mlx5_0:1");
    CHECK_STR(r.first_fault, "[2026-03-04 10:11:12] NET/IB : mlx5_0:1 Got async error event: "
                             "port error");
    CHECK(fb_nccl_verdicts(&r, v) == FB_FAIL && verdict_of(v, "nccl_faults") == FB_FAIL &&
          verdict_of(v, "nccl_inter") == FB_PASS && verdict_of(v, "nccl_gdr") == FB_PASS);
    CHECK_HAS(v[4].text, "1 port error(s) (mlx5_0:1)");
    CHECK_HAS(v[4].text, "a port went down");
    fb_nccl_report_release(&r);

    /* NCCL 2.29: the port error, device 0 marked as failed and its failover */
    CHECK(load(dir, "failover_229.log", &r, v, err, sizeof err) == FB_OK);
    CHECK_STR(r.version, "2.29.7");
    CHECK_STR(r.network, "IB");
    CHECK_STR(r.dmabuf, "0");
    CHECK(r.warns == 2 && r.events[FB_NCCL_EV_PORT_ERROR] == 1 &&
          r.events[FB_NCCL_EV_DEV_FAILED] == 1 && r.events[FB_NCCL_EV_FAILOVER] == 1);
    CHECK_STR(r.event_nics[FB_NCCL_EV_DEV_FAILED], "device 0");
    CHECK(verdict_of(v, "nccl_faults") == FB_FAIL && verdict_of(v, "nccl_gdr") == FB_PASS);
    CHECK_HAS(v[4].text, "1 device(s) marked as failed (device 0)");
    CHECK_HAS(v[4].text, "NCCL failed over to its other ports: the run went on with less "
                         "bandwidth");
    CHECK_HAS(v[4].text, "first: [2026-03-04 10:20:00] NET/IB : mlx5_0:1 Got non-fatal async "
                         "event: port error(10)");
    CHECK_HAS(v[3].text, "(DMA-BUF available)");
    fb_nccl_report_release(&r);

    /* NCCL 2.30: failed, failed over, recovered: still a FAIL, the recovery said */
    CHECK(load(dir, "recovery_230.log", &r, v, err, sizeof err) == FB_OK);
    CHECK_STR(r.network, "IB"); /* from "Assigned NET plugin IB to comm" alone */
    CHECK(r.events[FB_NCCL_EV_RECOVERED] == 1 && r.events[FB_NCCL_EV_PORT_ACTIVE] == 1);
    CHECK(verdict_of(v, "nccl_faults") == FB_FAIL);
    CHECK_HAS(v[4].text, "1 recovered (device 0), 1 port(s) active again (mlx5_0:1)");
    fb_nccl_report_release(&r);

    /* the logs of healthy runs: no fault, and IB in use is a PASS */
    CHECK(load(dir, "ib_gdr_2node.log", &r, v, err, sizeof err) == FB_OK);
    CHECK(verdict_of(v, "nccl_faults") == FB_PASS);
    fb_nccl_report_release(&r);
    CHECK(load(dir, "shm_single.log", &r, v, err, sizeof err) == FB_OK);
    CHECK(verdict_of(v, "nccl_faults") == FB_SKIP);
    fb_nccl_report_release(&r);

    /* malformed: the error names the file and the line */
    CHECK(load(dir, "malformed.log", &r, v, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "malformed.log:4: unknown transport");
    CHECK(r.conns == NULL && r.nconns == 0);
    CHECK(load(dir, "no-such.log", &r, v, err, sizeof err) == FB_ERR_IO);
    CHECK_HAS(err, "cannot open '");
    CHECK_HAS(err, "no-such.log': No such file or directory");
    fb_nccl_report_release(&r);
}

/* The verdicts' rules on reports made by hand. */
static void test_verdicts(void)
{
    struct fb_nccl_report r;
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];

    memset(&r, 0, sizeof r);
    CHECK(fb_nccl_verdicts(&r, v) == FB_SKIP); /* nothing to judge */
    r.intra[FB_NCCL_SHM] = 2;
    r.intra[FB_NCCL_P2P] = 6;
    CHECK(fb_nccl_verdicts(&r, v) == FB_WARN);
    CHECK_HAS(v[1].text, "2 of 8 intra-node connections through shared memory");
    snprintf(r.env, sizeof r.env, "NCCL_IB_HCA=mlx5,NCCL_P2P_LEVEL=LOC");
    CHECK(fb_nccl_verdicts(&r, v) == FB_FAIL && v[1].verdict == FB_FAIL);
    snprintf(r.env, sizeof r.env, "NCCL_P2P_LEVEL=SYS");
    CHECK(fb_nccl_verdicts(&r, v) == FB_WARN); /* SYS allows P2P everywhere */
    snprintf(r.env, sizeof r.env, "NCCL_P2P_DISABLE=1");
    CHECK(fb_nccl_verdicts(&r, v) == FB_FAIL);
    memset(&r, 0, sizeof r);
    r.inter[FB_NCCL_SOCKET] = 4;
    CHECK(fb_nccl_verdicts(&r, v) == FB_WARN && v[2].verdict == FB_WARN); /* no IB at all */
    r.ib_available = true;
    CHECK(fb_nccl_verdicts(&r, v) == FB_FAIL && v[2].verdict == FB_FAIL);
    memset(&r, 0, sizeof r);
    r.inter[FB_NCCL_IB_GDR] = 3;
    r.inter[FB_NCCL_IB] = 1;
    CHECK(fb_nccl_verdicts(&r, v) == FB_WARN && v[3].verdict == FB_WARN);
    CHECK_HAS(v[3].text, "off on 1 of 4");
    r.inter[FB_NCCL_IB] = 0;
    CHECK(fb_nccl_verdicts(&r, v) == FB_PASS);
    /* a failover or a slower port without the fault that caused it: a WARN */
    r.events[FB_NCCL_EV_SPEED_CHANGE] = 1;
    snprintf(r.event_nics[FB_NCCL_EV_SPEED_CHANGE], sizeof r.event_nics[0], "mlx5_3:1");
    CHECK(fb_nccl_verdicts(&r, v) == FB_WARN && v[4].verdict == FB_WARN);
    CHECK_HAS(v[4].text, "1 speed change(s) (mlx5_3:1)");
    r.events[FB_NCCL_EV_FATAL] = 1;
    CHECK(fb_nccl_verdicts(&r, v) == FB_FAIL && v[4].verdict == FB_FAIL);
    CHECK_HAS(v[4].text, "1 fatal event(s)");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_nccl_report FIXTURE_DIR DATA_DIR\n");
        return 2;
    }
    test_fixture(argv[1]);
    test_lines();
    test_lines_226_230();
    test_logs(argv[2]);
    test_last_line_cut();
    test_verdicts();
    TEST_DONE();
}
