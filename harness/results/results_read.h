/* Reading a results.csv back (what `compare` and `accept` judge): the header must be the one
 * fabricbench writes (fb_results_columns, in order), fields are RFC 4180, and every value is
 * checked. A malformed file is refused with "path:line: what was wrong", never half read. */
#ifndef FB_RESULTS_READ_H
#define FB_RESULTS_READ_H

#include <stddef.h>

#include "results.h"
#include "status.h"

/* One row as read: the written row (empty cells are -1 or "" as fb_row says) and its run id. */
struct fb_read_row {
    struct fb_row row;
    char run_id[128];
    size_t line; /* 1-based line of the file, for messages */
};

struct fb_read_results {
    char path[4096];
    struct fb_read_row *rows;
    size_t nrows;
};

/* Reads path into out (release with fb_results_read_release). FB_ERR_IO when it cannot be
 * opened, FB_ERR_USAGE with "path:line: what" in err when its content is not a results.csv. */
fb_status fb_results_read(const char *path, struct fb_read_results *out, char *err,
                          size_t errlen);
/* The same over len bytes at buf (not NUL-terminated; nothing past buf[len - 1] is read);
 * `path` names the file in messages. */
fb_status fb_results_parse(const char *path, const char *buf, size_t len,
                           struct fb_read_results *out, char *err, size_t errlen);
void fb_results_read_release(struct fb_read_results *r); /* accepts a zeroed struct */

#endif
