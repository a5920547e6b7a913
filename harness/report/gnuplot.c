/* gnuplot as a child process: found on PATH, run with fork and execv in the plots' folder. */
#define _GNU_SOURCE
#include "gnuplot.h"

#include <errno.h>
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

fb_status fb_gnuplot_run(const char *gnuplot, const char *dir, const char *setup,
                         const char *script, char *err, size_t errlen)
{
    char *with_setup[] = {"gnuplot", "-e", (char *)setup, (char *)script, NULL};
    char *plain[] = {"gnuplot", (char *)script, NULL};
    char **argv = setup ? with_setup : plain;
    int status;
    pid_t pid, got;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
        return FB_ERR_IO;
    }
    if (pid == 0) {
        /* The child only changes folder and executes: nothing here may exit() through our
         * handlers, hence _exit. */
        if (dir && chdir(dir) != 0)
            _exit(126);
        execv(gnuplot, argv);
        _exit(127);
    }
    do
        got = waitpid(pid, &status, 0);
    while (got < 0 && errno == EINTR);
    if (got != pid) {
        snprintf(err, errlen, "waiting for gnuplot: %s", strerror(errno));
        return FB_ERR_IO;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return FB_OK;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
        snprintf(err, errlen, "gnuplot could not enter '%s'", dir ? dir : ".");
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(err, errlen, "cannot execute '%s'", gnuplot);
    else if (WIFEXITED(status))
        snprintf(err, errlen, "gnuplot exited with status %d on '%s'", WEXITSTATUS(status), script);
    else
        snprintf(err, errlen, "gnuplot died (signal %d) on '%s'",
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0, script);
    return FB_ERR_IO;
}
