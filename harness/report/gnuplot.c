/* gnuplot as a child process: found on PATH, run with fork and execv in a private folder made
 * inside the plots' folder, its outputs then moved into place (gnuplot.h). */
#define _GNU_SOURCE
#include "gnuplot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

bool fb_gnuplot_find(char *path, size_t len)
{
    const char *p = getenv("PATH");

    if (!p)
        return false;
    while (1) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        struct stat sb;
        int w = n ? snprintf(path, len, "%.*s/gnuplot", (int)n, p) : snprintf(path, len, "./gnuplot");

        if (w > 0 && (size_t)w < len && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
            access(path, X_OK) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    if (len)
        path[0] = '\0';
    return false;
}

/* Removes the private folder's leftovers (files gnuplot made but we did not move) and itself. */
static void remove_private(int dfd, const char *name, int pfd)
{
    DIR *d = fdopendir(pfd); /* takes pfd */
    struct dirent *e;

    if (d) {
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                (void)unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    } else {
        close(pfd);
    }
    (void)unlinkat(dfd, name, AT_REMOVEDIR);
}

/* Moves every regular file gnuplot made in the private folder into the plots' folder, under its
 * name: renameat replaces whatever sat there (a planted link included) and writes through
 * nothing. */
static fb_status move_outputs(int pfd, int dfd, char *err, size_t errlen)
{
    int again = dup(pfd);
    DIR *d = again >= 0 ? fdopendir(again) : NULL;
    struct dirent *e;
    fb_status st = FB_OK;

    if (!d) {
        if (again >= 0)
            close(again);
        snprintf(err, errlen, "cannot read gnuplot's output folder: %s", strerror(errno));
        return FB_ERR_IO;
    }
    while ((e = readdir(d))) {
        struct stat sb;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            fstatat(pfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (renameat(pfd, e->d_name, dfd, e->d_name) != 0 && st == FB_OK) {
            snprintf(err, errlen, "cannot move gnuplot's '%s' into place: %s", e->d_name,
                     strerror(errno));
            st = FB_ERR_IO;
        }
    }
    closedir(d);
    return st;
}

fb_status fb_gnuplot_run(const char *gnuplot, const char *dir, const char *setup,
                         const char *script, char *err, size_t errlen)
{
    const char *folder = dir ? dir : ".";
    char priv[64], load[64], from[4200];
    char *argv[8];
    int dfd, pfd, status, n = 0;
    pid_t pid, got;
    fb_status st;

    /* The folder itself, never through a link (a run folder's `plots` may be one). */
    dfd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(err, errlen, "gnuplot could not enter '%s': %s", folder,
                 errno == ELOOP || errno == ENOTDIR ? "a link or not a folder" : strerror(errno));
        return FB_ERR_IO;
    }
    /* A private folder made here, whose names nobody else has had a chance to plant (mkdir
     * refuses a name that exists, a link included: the next name is tried) */
    static unsigned serial;
    int made = -1;
    for (int tries = 0; tries < 20 && made != 0; tries++) {
        snprintf(priv, sizeof priv, ".gnuplot.%ld.%u", (long)getpid(), serial++);
        if ((made = mkdirat(dfd, priv, 0700)) != 0 && errno != EEXIST)
            break;
    }
    if (made != 0 ||
        (pfd = openat(dfd, priv, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        snprintf(err, errlen, "cannot make gnuplot's output folder in '%s': %s", folder,
                 strerror(errno));
        if (made == 0)
            (void)unlinkat(dfd, priv, AT_REMOVEDIR);
        close(dfd);
        return FB_ERR_IO;
    }
    /* gnuplot works in the private folder: every file it writes lands there; the script and
     * its data are read from the plots' folder through the load path (loadpath serves plot's
     * data files as well as load). */
    snprintf(from, sizeof from, "%s%s", script[0] == '/' ? "" : "../", script);
    snprintf(load, sizeof load, "set loadpath '..'");
    argv[n++] = "gnuplot";
    argv[n++] = "-e";
    argv[n++] = load;
    if (setup) {
        argv[n++] = "-e";
        argv[n++] = (char *)setup;
    }
    argv[n++] = from;
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
        remove_private(dfd, priv, pfd);
        close(dfd);
        return FB_ERR_IO;
    }
    if (pid == 0) {
        /* The child only changes folder and executes: nothing here may exit() through our
         * handlers, hence _exit. */
        if (fchdir(pfd) != 0)
            _exit(126);
        execv(gnuplot, argv);
        _exit(127);
    }
    do
        got = waitpid(pid, &status, 0);
    while (got < 0 && errno == EINTR);
    if (got != pid) {
        snprintf(err, errlen, "waiting for gnuplot: %s", strerror(errno));
        st = FB_ERR_IO;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        st = move_outputs(pfd, dfd, err, errlen);
    } else {
        st = FB_ERR_IO;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
            snprintf(err, errlen, "gnuplot could not enter '%s'", folder);
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            snprintf(err, errlen, "cannot execute '%s'", gnuplot);
        else if (WIFEXITED(status))
            snprintf(err, errlen, "gnuplot exited with status %d on '%s'", WEXITSTATUS(status),
                     script);
        else
            snprintf(err, errlen, "gnuplot died (signal %d) on '%s'",
                     WIFSIGNALED(status) ? WTERMSIG(status) : 0, script);
    }
    remove_private(dfd, priv, pfd);
    close(dfd);
    return st;
}
