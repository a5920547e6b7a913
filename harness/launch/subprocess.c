/* fork + exec with a time limit over a process group. */
#define _POSIX_C_SOURCE 200809L
#include "subprocess.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

/* In the child, between fork and exec: only async-signal-safe calls and putenv/setenv.
 * `parent`: the pid that forked it. */
static void child(char *const *argv, char *const *env, int flags, pid_t parent)
{
    int null;

    /* The launch dies with the sweep, even a sweep killed by SIGKILL that can clean up
     * nothing: SIGTERM when the parent goes (mpirun and srun stop their ranks on it), and at
     * once where the parent went before this line (then this process has another parent). */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(128 + SIGTERM);
    null = open("/dev/null", O_RDWR);
    /* its own group, so that the group can be stopped as one; reading the terminal from it
     * would stop it (SIGTTIN), hence stdin from /dev/null (mpirun forwards stdin to rank 0) */
    setpgid(0, 0);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        if (flags & FB_SUBPROCESS_SILENT) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        if (null > STDERR_FILENO)
            close(null);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    /* the sweep is single-threaded, so setenv between fork and exec is safe here */
    for (size_t i = 0; env && env[i]; i++) {
        char *eq = strchr(env[i], '=');
        if (eq) {
            *eq = '\0'; /* the child's own copy of the string */
            setenv(env[i], eq + 1, 1);
            *eq = '=';
        }
    }
    execvp(argv[0], argv);
    fprintf(stderr, "fabricbench: error: cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* A process of this node, told apart from a later one with the same pid by its start time. */
struct proc_id {
    pid_t pid;
    unsigned long long start;
};

enum { MAX_PROCS = 4096 };

/* pid's parent and start time from /proc/pid/stat; false when it is gone. */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
    char path[64], buf[1024], *p;
    size_t n;
    FILE *f;
    int field = 2, parent = 0;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return false;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
    if (!(p = strrchr(buf, ')')))
        return false;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 4)
            parent = atoi(tok);
        if (field == 22) {
            *ppid = parent;
            *start = strtoull(tok, NULL, 10);
            return true;
        }
    }
    return false;
}

/* Adds root's descendants on this node (children, grandchildren, ...) to set, once each.
 * mpirun puts every rank in a process group of its own: stopping the launcher's group alone
 * would leave a rank behind if the launcher died before stopping it. */
static void add_descendants(pid_t root, struct proc_id *set, size_t *n)
{
    static struct proc_id all[MAX_PROCS];
    static pid_t parent[MAX_PROCS];
    size_t nall = 0, first = *n;
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) && nall < MAX_PROCS) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid > 0 && proc_stat(pid, &parent[nall], &all[nall].start))
            all[nall++].pid = pid;
    }
    closedir(d);
    /* breadth first from root: set[first..] grows while it is walked */
    for (size_t i = 0; i < nall; i++)
        if (parent[i] == root) {
            bool known = false;
            for (size_t j = 0; j < *n && !known; j++)
                known = set[j].pid == all[i].pid && set[j].start == all[i].start;
            if (!known && *n < MAX_PROCS)
                set[(*n)++] = all[i];
        }
    for (size_t w = first; w < *n; w++)
        for (size_t i = 0; i < nall; i++)
            if (parent[i] == set[w].pid) {
                bool known = false;
                for (size_t j = 0; j < *n && !known; j++)
                    known = set[j].pid == all[i].pid && set[j].start == all[i].start;
                if (!known && *n < MAX_PROCS)
                    set[(*n)++] = all[i];
            }
}

/* Signals the processes of set that are still the ones recorded; returns how many were. */
static size_t signal_set(const struct proc_id *set, size_t n, int sig)
{
    size_t alive = 0;

    for (size_t i = 0; i < n; i++) {
        pid_t ppid;
        unsigned long long start;
        if (proc_stat(set[i].pid, &ppid, &start) && start == set[i].start) {
            kill(set[i].pid, sig);
            alive++;
        }
    }
    return alive;
}

static int status_of(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
        return 128 + WTERMSIG(ws);
    return 1;
}

fb_status fb_subprocess_wait(char *const *argv, char *const *env, double timeout_s, double grace_s,
                        volatile sig_atomic_t *stop, int flags, struct fb_subprocess_result *res)
{
    static struct proc_id tree[MAX_PROCS];
    size_t ntree = 0;
    double start = fb_clock_now_s(), term_at = 0.0;
    bool terminating = false;
    int ws = 0;
    pid_t pid, got, self = getpid();

    memset(res, 0, sizeof *res);
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0)
        return FB_ERR_IO;
    if (pid == 0)
        child(argv, env, flags, self);
    /* also here, so a signal sent before the child ran setpgid still finds the group */
    setpgid(pid, pid);
    for (;;) {
        double now;
        got = waitpid(pid, &ws, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR))
            break;
        now = fb_clock_now_s();
        if (!terminating && ((timeout_s > 0 && now - start >= timeout_s) || (stop && *stop))) {
            res->timed_out = !(stop && *stop);
            res->interrupted = !res->timed_out;
            /* mpirun stops its ranks on SIGTERM; the grace period lets it. The ranks are
             * told too, in case the launcher no longer can. */
            add_descendants(pid, tree, &ntree);
            kill(-pid, SIGTERM);
            signal_set(tree, ntree, SIGTERM);
            terminating = true;
            term_at = now;
        } else if (terminating && now - term_at >= grace_s) {
            add_descendants(pid, tree, &ntree);
            kill(-pid, SIGKILL);
            signal_set(tree, ntree, SIGKILL);
            grace_s = 1e30; /* once */
        }
        fb_clock_sleep_s(0.05);
    }
    /* after a stop, whatever the launcher left behind (a rank that outlived it, in its
     * group or its own) goes too: a short grace, then SIGKILL */
    if (terminating) {
        bool group = kill(-pid, 0) == 0;
        if (group || signal_set(tree, ntree, 0) > 0) {
            if (group)
                kill(-pid, SIGTERM);
            signal_set(tree, ntree, SIGTERM);
            for (int i = 0; i < 40 && signal_set(tree, ntree, 0) > 0; i++)
                fb_clock_sleep_s(0.05);
            if (group)
                kill(-pid, SIGKILL);
            signal_set(tree, ntree, SIGKILL);
        }
    }
    res->wall_s = fb_clock_now_s() - start;
    res->exit_status = got == pid ? status_of(ws) : 1;
    if (res->timed_out)
        res->exit_status = FB_SUBPROCESS_TIMEOUT_EXIT;
    return FB_OK;
}

fb_status fb_subprocess_capture(char *const *argv, char *buf, size_t len, int *exit_status)
{
    int fds[2], ws = 0, null;
    size_t used = 0;
    ssize_t got;
    pid_t pid;

    *exit_status = 127;
    if (len)
        buf[0] = '\0';
    if (pipe(fds) != 0)
        return FB_ERR_IO;
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0) {
        close(fds[0]);
        close(fds[1]);
        return FB_ERR_IO;
    }
    if (pid == 0) {
        if ((null = open("/dev/null", O_RDWR)) >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDERR_FILENO);
        }
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        char scratch[256];
        bool room = used + 1 < len;
        got = read(fds[0], room ? buf + used : scratch, room ? len - 1 - used : sizeof scratch);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (room)
            used += (size_t)got;
    }
    close(fds[0]);
    if (len)
        buf[used] = '\0';
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    *exit_status = status_of(ws);
    return FB_OK;
}
