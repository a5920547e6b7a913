/* What NCCL said about a run: its NCCL_DEBUG=INFO log lines (any version from 2.3 on, launcher
 * prefixes and other programs' lines mixed in) read into which transport carried each
 * connection, the NCCL version and the NICs it chose. `fabricbench nccl-log` prints it with
 * verdicts; `run` and `doctor` apply it to the logs of a run; `accept` checks the transports a
 * hardware profile requires against it. */
#ifndef FB_NCCL_REPORT_H
#define FB_NCCL_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"
#include "verdict.h"

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

struct fb_nccl_report {
    char version[32];             /* "2.18.3"; "" when no line said */
    size_t intra[FB_NCCL_PATHS];  /* connections inside a node, by path */
    size_t inter[FB_NCCL_PATHS];  /* connections between nodes, by path */
    size_t lines;                 /* lines read */
    size_t nccl_lines;            /* of which NCCL's own */
    bool ib_available;            /* NCCL found InfiniBand devices (NET/IB : Using ...) */
    char nics[256];               /* the NICs NCCL chose, comma-separated; "" when none */
    /* added after the interface was first committed: */
    char version_other[32];       /* a second, different version some rank stated; "" if none */
    bool ib_missing;              /* some rank said "NET/IB : No device found" */
    char network[32];             /* "Using network IB|Socket|IBext..." (2.6.4 on); "" if none */
    char env[192];                /* NCCL settings NCCL took from the environment, "NAME=VALUE,..." */
    size_t warns;                 /* NCCL WARN lines */
    struct fb_nccl_conn *conns;   /* the distinct connections, sorted by channel, src, dst; */
    size_t nconns;                /* owned by the report: fb_nccl_report_release frees them */
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
    FB_NCCL_LINE_WARN,         /* "... NCCL WARN ..." */
    FB_NCCL_LINE_BAD           /* NCCL's transport line that cannot be read: a malformed log */
};

struct fb_nccl_line {
    enum fb_nccl_kind kind;
    char version[32];          /* VERSION: "2.18.3" */
    struct fb_nccl_conn conn;  /* CONN */
    bool gdr;                  /* GDR: enabled */
    /* NET_IB, NET_SOCKET: the NICs, space-separated ("mlx5_0:1/IB eth0/Socket");
     * NETWORK: its name; ENV: "NAME=VALUE"; BAD: why */
    char text[192];
};

/* Classifies one line (its end of line may be kept). A launcher's prefix ("[1,0]<stdout>:",
 * "[155] ", srun's "0: ") and NCCL's own ("host:pid:tid [dev] NCCL INFO ") are skipped: the
 * message is what follows "NCCL INFO". Returns out->kind. */
enum fb_nccl_kind fb_nccl_classify_line(const char *line, struct fb_nccl_line *out);

/* "P2P", "SHM", "IB", "IB+GDR", "Socket", "net", "unknown"; never NULL. */
const char *fb_nccl_path_str(enum fb_nccl_path p);

/* Reads NCCL_DEBUG=INFO logs into one report (r is overwritten: release it before reuse). A file
 * that cannot be opened or read: FB_ERR_IO, "cannot read 'file': why" in err. A malformed log:
 * FB_ERR_USAGE with "file:line: what" in err, where malformed means a NUL byte (not a text
 * file), or a transport line of NCCL's ("Ring|Channel NN : ... via ...") whose ranks or
 * transport cannot be read. Lines of other programs are counted and skipped; so are NCCL lines
 * the report does not use. A file with no NCCL line is not an error here (r->nccl_lines says). */
fb_status fb_nccl_report_files(const char *const *paths, size_t n, struct fb_nccl_report *r,
                               char *err, size_t errlen);

/* A folder (its nccl-rank*.log, as fb_nccl_report_dir) or one file (as fb_nccl_report_files). */
fb_status fb_nccl_report_path(const char *path, struct fb_nccl_report *r, char *err,
                              size_t errlen);

/* One line summing the report up: "NCCL 2.19.3; 8 connections: intra-node P2P 4; inter-node
 * IB+GDR 4; NICs mlx5_0:1/IB". */
void fb_nccl_report_summary(const struct fb_nccl_report *r, char *buf, size_t len);

/* Frees what the report holds (its connections) and empties it; accepts a zeroed report. */
void fb_nccl_report_release(struct fb_nccl_report *r);

/* The verdicts on a report, in this order: version, intra-node, inter-node, GPUDirect RDMA. */
#define FB_NCCL_VERDICTS 4
struct fb_nccl_verdict {
    const char *check;   /* "nccl_version", "nccl_intra", "nccl_inter", "nccl_gdr" */
    enum fb_verdict verdict;
    char text[320];      /* one line: what was seen and, when not PASS, the likely cause */
};

/* Fills out[FB_NCCL_VERDICTS] and returns the worst verdict (fb_verdict_worst). */
enum fb_verdict fb_nccl_verdicts(const struct fb_nccl_report *r,
                                 struct fb_nccl_verdict out[FB_NCCL_VERDICTS]);

/* The nccl-rank*.log files fabricbench kept in a run folder; FB_ERR_UNSUPPORTED when it has
 * none (a run without NCCL, or with --no-nccl-log). */
fb_status fb_nccl_report_dir(const char *run_dir, struct fb_nccl_report *r, char *err,
                             size_t errlen);

#endif
