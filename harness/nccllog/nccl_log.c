/* Where NCCL's INFO log goes. */
#define _POSIX_C_SOURCE 200809L
#include "nccl_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

#include "log.h"

fb_status fb_nccl_log_setup(const char *dir, int rank, char *path, size_t pathlen)
{
    const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
    struct stat sb;

    path[0] = '\0';
    if (file && *file)
        return FB_OK; /* the user's choice of file stands */
    /* NCCL reads the level without regard to case */
    if (level && *level && strcasecmp(level, "INFO") != 0 && strcasecmp(level, "TRACE") != 0)
        return FB_OK; /* a quieter level asked for: it would not say which transport ran */
    if (fb_mkdirs(dir) != 0 || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fb_warn("cannot create folder '%s' for NCCL's log (%s): NCCL logs where it would "
                "have", dir, errno == EEXIST ? "a file has that name" : strerror(errno));
        return FB_ERR_IO;
    }
    if (snprintf(path, pathlen, "%s/nccl-rank%d.log", dir, rank) >= (int)pathlen) {
        path[0] = '\0';
        fb_warn("the path of NCCL's log under '%s' is too long: NCCL logs where it would have",
                dir);
        return FB_ERR_IO;
    }
    /* NCCL reads %h and %p in NCCL_DEBUG_FILE as the host name and pid: a folder named with a
     * '%' would send the log to another folder than the run's. */
    if (strchr(dir, '%')) {
        path[0] = '\0';
        fb_warn("the results folder '%s' has a '%%' in its name, which NCCL would read as its "
                "own %%h or %%p: NCCL logs where it would have", dir);
        return FB_ERR_IO;
    }
    /* NCCL opens the file with fopen(): an earlier file or a link of that name is removed
     * first, so NCCL makes a new file in the folder rather than write through it. */
    if (unlink(path) != 0 && errno != ENOENT) {
        fb_warn("cannot replace '%s' (%s): NCCL logs where it would have", path, strerror(errno));
        path[0] = '\0';
        return FB_ERR_IO;
    }
    if (!(level && *level))
        setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_FILE", path, 1);
    return FB_OK;
}
