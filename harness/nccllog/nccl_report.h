/* What NCCL said about a run: its NCCL_DEBUG=INFO log lines (any version from 2.3 on, launcher
 * prefixes and other programs' lines mixed in) read into which transport carried each
 * connection, the NCCL version and the NICs it chose, and the InfiniBand faults it reported
 * (port errors, a device failed over from, its recovery). Lines are classified by
 * nccl_line.h and judged by nccl_verdict.h. `fabricbench nccl-log` prints it with verdicts;
 * `run` and `doctor` apply it to the logs of a run; `accept` checks the transports a hardware
 * profile requires against it. */
#ifndef FB_NCCL_REPORT_H
#define FB_NCCL_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "nccl_line.h"
#include "status.h"

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
    /* added for NCCL 2.26-2.30: */
    size_t events[FB_NCCL_EVENTS];       /* lines per network event (nccl_line.h) */
    char event_nics[FB_NCCL_EVENTS][96]; /* the devices each named, "mlx5_0:1,device 0" */
    char first_fault[200];        /* the first port error, fatal event or failed device: its
                                     message, after its time when NCCL gave one; "" if none */
    char dmabuf[64];              /* GPU devices NCCL found DMA-BUF on, "0,1"; "" if none */
};

/* Reads NCCL_DEBUG=INFO logs into one report (r is overwritten: release it before reuse). A file
 * that cannot be opened or read: FB_ERR_IO, "cannot open|read 'file': why" in err; one that
 * is not a regular file, is over 256 MiB or has a line over 65536 bytes: FB_ERR_USAGE (read as
 * file_read.h says); FB_ERR_NOMEM when memory runs out, never a log read in part. A malformed log:
 * FB_ERR_USAGE with "file:line: what" in err, where malformed means a NUL byte (not a text
 * file), or a transport line of NCCL's ("Ring|Channel NN : ... via ...") whose ranks or
 * transport cannot be read. Lines of other programs are counted and skipped; so are NCCL lines
 * the report does not use. A file with no NCCL line is not an error here (r->nccl_lines says). */
fb_status fb_nccl_report_files(const char *const *paths, size_t n, struct fb_nccl_report *r,
                               char *err, size_t errlen);

/* A folder (its nccl-rank*.log, as fb_nccl_report_dir) or one file (as fb_nccl_report_files). */
fb_status fb_nccl_report_path(const char *path, struct fb_nccl_report *r, char *err,
                              size_t errlen);

/* The network events of one log as it grows (a rank's log during a soak, read after each
 * interval): the complete lines from byte *offset on are classified and their events added to
 * events[e] (nccl_line.h), counted as a report counts them (WARN lines, and INFO lines on the
 * network); *offset then points past the last complete line, so a line still being written is
 * read whole next time, and each call reads only what was added (no cap on the log's size). A
 * line over FB_FILE_LINE_MAX bytes is classified by its first FB_FILE_LINE_MAX; text after a NUL
 * byte in a line is not seen. A missing file counts nothing (FB_OK); a file now shorter than
 * *offset (cut, replaced) is read from its start. FB_ERR_IO, with one line in err, when it
 * cannot be opened or read. */
fb_status fb_nccl_count_events_from(const char *path, long long *offset,
                                    size_t events[FB_NCCL_EVENTS], char *err, size_t errlen);

/* One line summing the report up: "NCCL 2.19.3; 8 connections; intra-node P2P 4; inter-node
 * IB+GDR 4; NICs mlx5_0:1/IB". */
void fb_nccl_report_summary(const struct fb_nccl_report *r, char *buf, size_t len);

/* Frees what the report holds (its connections) and empties it; accepts a zeroed report. */
void fb_nccl_report_release(struct fb_nccl_report *r);

/* The nccl-rank*.log files fabricbench kept in a run folder; FB_ERR_UNSUPPORTED when it has
 * none (a run without NCCL, or with --no-nccl-log). */
fb_status fb_nccl_report_dir(const char *run_dir, struct fb_nccl_report *r, char *err,
                             size_t errlen);

#endif
