/* The one way a run folder's files (and the other files fabricbench reads back: launches.csv,
 * profiles, NCCL logs) are opened and read: regular files only, never a FIFO, a device or a
 * folder (opened without blocking, then checked with fstat), no larger than the cap of their
 * kind, no line longer than FB_FILE_LINE_MAX, and a failed allocation reported as such, never
 * taken for the end of the file. Symbolic links are followed: a link inside a run folder
 * (a log kept elsewhere) is the user's layout, and only its target's kind matters to a reader. */
#ifndef FB_FILE_READ_H
#define FB_FILE_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* A UTF-8 byte-order mark, which an editor may put at the start of a file: skipped. */
#define FB_FILE_BOM "\xef\xbb\xbf"

/* The number of bytes of a byte-order mark at the start of buf[0..len): 3 or 0. */
static inline size_t fb_file_bom(const char *buf, size_t len)
{
    return len >= 3 && buf[0] == '\xef' && buf[1] == '\xbb' && buf[2] == '\xbf' ? 3 : 0;
}

/* The longest line any file fabricbench reads may have (bytes, the line end not counted). */
#define FB_FILE_LINE_MAX 65536

/* What is read, each with its cap (docs/run-folder.md lists them). */
enum fb_file_kind {
    FB_FILE_RESULTS_CSV,  /* results.csv: 1 GiB (what a 4096-rank run writes: docs/run-folder.md) */
    FB_FILE_JSON,         /* env.json, doctor.json: 64 MiB */
    FB_FILE_NCCL_LOG,     /* one nccl-rank*.log, or a log given to nccl-log: 256 MiB */
    FB_FILE_LAUNCHES_CSV, /* a sweep's launches.csv: 16 MiB */
    FB_FILE_PROFILE,      /* a hardware profile (.ini): 1 MiB */
    FB_FILE_MIX,          /* a replay mix (.mix, or NCCL Inspector's JSON): 64 MiB */
    FB_FILE_SITE,         /* a site file of the expected-figure model (efficiencies, NVML
                           * facts): 1 MiB */
    FB_FILE_KINDS
};

/* The cap of a kind in bytes, and its name for messages ("results.csv"). */
size_t fb_file_cap(enum fb_file_kind kind);
const char *fb_file_kind_name(enum fb_file_kind kind);

/* Opens path for reading as fb_file_read does (O_NONBLOCK, fstat, a regular file no larger
 * than kind's cap) and returns its descriptor in *fd (the caller closes it) and its size.
 * With `optional`, a missing file is FB_OK and *fd -1. Errors as fb_file_read's. */
fb_status fb_file_open(const char *path, enum fb_file_kind kind, bool optional, int *fd,
                       size_t *size, char *err, size_t errlen);

/* Reads the whole of path into *buf (malloc'ed, NUL-terminated; the caller frees it) and its
 * length into *len, as it is (the parsers skip a UTF-8 byte-order mark at the start:
 * FB_FILE_BOM, so a file read and its bytes parsed give the same answer). With `optional`, a
 * missing file is FB_OK with *buf NULL and *len 0. One line in err otherwise:
 *   FB_ERR_IO     "cannot open 'PATH': why", "cannot read 'PATH': why"
 *   FB_ERR_USAGE  "PATH: not a regular file", "PATH: N bytes, more than the CAP a KIND may
 *                 hold", "PATH:LINE: line longer than 65536 bytes"
 *   FB_ERR_NOMEM  "PATH: out of memory reading it (N bytes)"
 * The path in messages is escaped (escape.h). */
fb_status fb_file_read(const char *path, enum fb_file_kind kind, bool optional, char **buf,
                       size_t *len, char *err, size_t errlen);

/* The line reader of the line-based text formats (mix files, layer lists, the expected-figure
 * model's site files), over what fb_file_read read: the line of text[0..len) at *pos (moved past
 * it) and its number (*lineno, counted up), its content in *l, *n: without its line end (LF or
 * CRLF), its comment ('#' on) and blanks at either end (n 0 for a blank line). false at the end
 * of the text. *nul: the line holds a NUL byte, in its comment too (a file that is not text). */
bool fb_file_line(const char *text, size_t len, size_t *pos, size_t *lineno, const char **l,
                  size_t *n, bool *nul);

/* A line's content from fb_file_line (l, n and its *nul) as a NUL-terminated string in
 * buf[buflen], checked as text: false with why set to "a NUL byte in the line", "line longer
 * than N characters" (N = buflen - 1) or "control character: \xNN after '...'" (TAB allowed). */
bool fb_file_line_text(const char *l, size_t n, bool nul, char *buf, size_t buflen, char *why,
                       size_t whylen);

#endif
