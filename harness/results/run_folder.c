/* The run folder's rules: a folder named by a link is refused, a folder holding any file of
 * an earlier run is not reused without --force. Files inside are made by name with
 * fb_file_create and fb_atomic_* (atomic_file.c), which never write through a link. */
#define _GNU_SOURCE
#include "run_folder.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool fb_run_folder_is_run_file(const char *name)
{
    static const char *const fixed[] = {"results.csv", "env.json", "fabricbench.log"};
    size_t n = strlen(name);

    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(name, fixed[i]) == 0)
            return true;
    /* nccl-rank<N>.log: NCCL's log of rank N */
    if (strncmp(name, "nccl-rank", 9) != 0 || n < 14 || strcmp(name + n - 4, ".log") != 0)
        return false;
    for (size_t i = 9; i < n - 4; i++)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

fb_status fb_run_folder_check(const char *dir, bool force, char *err, size_t errlen)
{
    char path[4096], target[4096];
    size_t len = strlen(dir);
    struct stat sb;
    struct dirent *e;
    DIR *d;
    ssize_t n;

    /* "link/" would resolve the link: look at the name itself */
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (len >= sizeof path) {
        snprintf(err, errlen, "--out path is too long");
        return FB_ERR_USAGE;
    }
    memcpy(path, dir, len);
    path[len] = '\0';
    if (lstat(path, &sb) != 0)
        return FB_OK; /* a new folder */
    if (S_ISLNK(sb.st_mode)) {
        n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        snprintf(err, errlen, "cannot use --out '%s': it is a symbolic link (to '%.1024s'); "
                 "name the folder itself", dir, target);
        return FB_ERR_USAGE;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot use --out '%s': it exists and is not a folder", dir);
        return FB_ERR_USAGE;
    }
    if (force)
        return FB_OK;
    if (!(d = opendir(path))) {
        snprintf(err, errlen, "cannot read results folder '%s': %s", dir, strerror(errno));
        return FB_ERR_USAGE;
    }
    while ((e = readdir(d)))
        if (fb_run_folder_is_run_file(e->d_name))
            break;
    if (e)
        snprintf(err, errlen, "'%s' already holds a run (%.64s); choose another --out or pass "
                 "--force to overwrite it", dir, e->d_name);
    closedir(d);
    return e ? FB_ERR_USAGE : FB_OK;
}
