/* Write-to-temporary-then-rename, so readers never see half a file. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

FILE *fb_file_create(const char *path)
{
    int fd;
    FILE *f;

    /* Whatever has the name goes (a link is removed, never followed; a hard link's other
     * names keep their content), then the file is made new: O_EXCL fails rather than open
     * something put there in between. */
    if (unlink(path) != 0 && errno != ENOENT)
        return NULL;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return NULL;
    if (!(f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(path);
        errno = e;
    }
    return f;
}

fb_status fb_atomic_open(struct fb_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    if (snprintf(af->path, sizeof af->path, "%s", path) >= (int)sizeof af->path ||
        snprintf(af->tmp, sizeof af->tmp, "%s.tmp", path) >= (int)sizeof af->tmp) {
        fb_error("path too long: '%s'", path);
        return FB_ERR_IO;
    }
    if (!(af->f = fb_file_create(af->tmp))) {
        fb_error("cannot write '%s': %s", af->tmp, strerror(errno));
        return FB_ERR_IO;
    }
    return FB_OK;
}

fb_status fb_atomic_commit(struct fb_atomic_file *af)
{
    int failed;

    if (!af->f)
        return FB_ERR_IO;
    failed = fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0;
    failed |= fclose(af->f) != 0;
    af->f = NULL;
    if (failed || rename(af->tmp, af->path) != 0) {
        fb_error("cannot write '%s': %s", af->path, strerror(errno));
        unlink(af->tmp);
        return FB_ERR_IO;
    }
    return FB_OK;
}

void fb_atomic_abort(struct fb_atomic_file *af)
{
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
        unlink(af->tmp);
    }
}

fb_status fb_atomic_write(const char *path, const char *data, size_t len)
{
    struct fb_atomic_file af;
    fb_status st = fb_atomic_open(&af, path);

    if (st != FB_OK)
        return st;
    if (fwrite(data, 1, len, af.f) != len) {
        fb_error("cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    return fb_atomic_commit(&af);
}

int fb_mkdirs(const char *path)
{
    char buf[4096];
    size_t len = strlen(path);

    if (len == 0 || len >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0775) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0775) != 0 && errno != EEXIST)
        return -1;
    return 0;
}
