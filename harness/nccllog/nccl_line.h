/* One NCCL_DEBUG=INFO line classified: which of NCCL's messages it is (any version from 2.3 on,
 * launcher prefixes kept), and for a transport line the connection it describes. */
#ifndef FB_NCCL_LINE_H
#define FB_NCCL_LINE_H

#include <stdbool.h>

/* How one connection (a pair of ranks on one channel, one direction) was carried. */
enum fb_nccl_path {
    FB_NCCL_P2P,       /* GPU peer access: P2P/IPC, P2P/CUMEM, P2P/direct pointer (+ /read, /CE) */
    FB_NCCL_SHM,       /* through host shared memory: SHM/..., "direct shared memory" */
    FB_NCCL_IB,        /* InfiniBand (or RoCE) verbs, NCCL's own NET/IB or a plugin's IBext */
    FB_NCCL_IB_GDR,    /* the same with GPUDirect RDMA (/GDRDMA) */
    FB_NCCL_SOCKET,    /* TCP sockets: NET/Socket */
    FB_NCCL_NET_OTHER, /* another network plugin */
    FB_NCCL_UNKNOWN,
    FB_NCCL_PATHS
};

/* One connection: a pair of ranks on one channel, one direction. The send and receive lines
 * that both ends of a network connection log are one connection. */
struct fb_nccl_conn {
    int channel, src, dst;
    enum fb_nccl_path path;
    bool inter;                   /* between nodes: NET/..., and P2P/MNNVL (multi-node NVLink) */
    char transport[48];           /* as NCCL wrote it: "P2P/IPC/read", "NET/IB/1/GDRDMA" */
};

/* What one log line is, for the classifier below. */
enum fb_nccl_kind {
    FB_NCCL_LINE_OTHER,        /* not NCCL's: another program's line */
    FB_NCCL_LINE_INFO,         /* NCCL's, nothing the report uses (rings, trees, init, ...) */
    FB_NCCL_LINE_VERSION,      /* "NCCL version 2.18.3+cuda12.2" */
    FB_NCCL_LINE_CONN,         /* "Ring|Channel NN : A[..] -> B[..] ... via TRANSPORT" */
    FB_NCCL_LINE_NET_IB,       /* "NET/IB : Using [0]mlx5_0:1/IB ..." */
    FB_NCCL_LINE_NET_IB_NONE,  /* "NET/IB : No device found." */
    FB_NCCL_LINE_NET_SOCKET,   /* "NET/Socket : Using [0]eth0:...", "NET : Using interface ..." */
    FB_NCCL_LINE_NETWORK,      /* "Using network IB" */
    FB_NCCL_LINE_NET_PLUGIN,   /* "NET/Plugin : ...", "P2P plugin IBext" */
    FB_NCCL_LINE_GDR,          /* "GPU Direct RDMA Enabled|Disabled ..." */
    FB_NCCL_LINE_ENV,          /* "NCCL_P2P_LEVEL set by environment to LOC" */
    FB_NCCL_LINE_WARN,         /* "... NCCL WARN ..." (event: what it reports, when known) */
    FB_NCCL_LINE_BAD,          /* NCCL's transport line that cannot be read: a malformed log */
    /* added for NCCL 2.26-2.30: */
    FB_NCCL_LINE_DMABUF,       /* "DMA-BUF is available on GPU device 2" (text: "2") */
    FB_NCCL_LINE_NET_EVENT     /* an INFO line on a network fault or recovery (event) */
};

/* What a WARN or INFO line says happened to the network (InfiniBand port faults, NCCL 2.29's
 * failover from a failed device, 2.30's recovery); docs/nccl-log.md lists NCCL's wordings. */
enum fb_nccl_event {
    FB_NCCL_EV_NONE,
    FB_NCCL_EV_PORT_ERROR,      /* async event "port error" (IBV_EVENT_PORT_ERR) */
    FB_NCCL_EV_FATAL,           /* "async fatal event": a device or its queues failed */
    FB_NCCL_EV_DEV_FAILED,      /* "Device N marked as failed" (2.29 on: failover starts) */
    FB_NCCL_EV_FAILOVER,        /* "Replacing QP: ..." its traffic moved to another device */
    FB_NCCL_EV_RECOVERED,       /* "Port recovery succeeded", "Device N has been recovered" */
    FB_NCCL_EV_RECOVERY_FAILED, /* "Port recovery failed", "... as permanently failed" */
    FB_NCCL_EV_PORT_ACTIVE,     /* async event "port active": a port came (back) up */
    FB_NCCL_EV_SPEED_CHANGE,    /* "speed change detected: A -> B Mbps" (2.30) */
    FB_NCCL_EVENTS
};

struct fb_nccl_line {
    enum fb_nccl_kind kind;
    char version[32];          /* VERSION: "2.18.3" */
    struct fb_nccl_conn conn;  /* CONN */
    bool gdr;                  /* GDR: enabled */
    /* NET_IB, NET_SOCKET: the NICs, space-separated ("mlx5_0:1/IB eth0/Socket");
     * NETWORK: its name ("Using network IB", "Assigned NET plugin IB to comm");
     * ENV: "NAME=VALUE"; BAD: why; DMABUF: the GPU device; WARN, NET_EVENT: the message */
    char text[192];
    /* added for NCCL 2.26-2.30: */
    enum fb_nccl_event event;  /* WARN, NET_EVENT: what happened; NONE for another WARN */
    char nic[48];              /* the device it names: "mlx5_0:1", "device 0"; "" if none */
    char when[32];             /* the timestamp NCCL put before the line (2.26 on, WARN lines
                                  by default): "2026-03-04 10:11:12"; "" when none */
};

/* Classifies one line (its end of line may be kept). A launcher's prefix ("[1,0]<stdout>:",
 * "[155] ", srun's "0: ") and NCCL's own ("host:pid:tid [dev] NCCL INFO ", and for WARN lines
 * "[2026-03-04 10:11:12] host:pid:tid [dev] file:line (func) NCCL WARN ", the timestamp of 2.26
 * on and the function of 2.30 on) are skipped: the message is what follows "NCCL INFO" or
 * "NCCL WARN". Returns out->kind. */
enum fb_nccl_kind fb_nccl_classify_line(const char *line, struct fb_nccl_line *out);

/* Whether an event is a fault of the fabric (a port error, a fatal device event, a device
 * marked as failed): what nccl-log's nccl_faults verdict FAILs on and soak counts. */
bool fb_nccl_event_fault(enum fb_nccl_event e);

/* "port error", "fatal event", "device failed", "failover", "recovered", "recovery failed",
 * "port active", "speed change"; "" for NONE; never NULL. */
const char *fb_nccl_event_str(enum fb_nccl_event e);

/* "P2P", "SHM", "IB", "IB+GDR", "Socket", "net", "unknown"; never NULL. */
const char *fb_nccl_path_str(enum fb_nccl_path p);

#endif
