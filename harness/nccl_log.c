/* Where NCCL's INFO log goes. */
#define _POSIX_C_SOURCE 200809L
#include "nccl_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"

fb_status fb_nccl_log_setup(const char *dir, int rank, char *path, size_t pathlen)
{
    const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
    struct stat sb;

    path[0] = '\0';
    if (file && *file)
        return FB_OK; /* the user's choice of file stands */
    if (level && *level && strcmp(level, "INFO") != 0 && strcmp(level, "TRACE") != 0)
        return FB_OK; /* a quieter level asked for: it would not say which transport ran */
    if (mkdir(dir, 0775) != 0 && (errno != EEXIST || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        fb_error("cannot create folder '%s' for NCCL's log: %s", dir,
                 errno == EEXIST ? "a file has that name" : strerror(errno));
        return FB_ERR_IO;
    }
    if (snprintf(path, pathlen, "%s/nccl-rank%d.log", dir, rank) >= (int)pathlen) {
        path[0] = '\0';
        fb_error("the path of NCCL's log under '%s' is too long", dir);
        return FB_ERR_IO;
    }
    if (!(level && *level))
        setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_FILE", path, 1);
    return FB_OK;
}
