/* The run folder's rules: a folder named by a link is refused, a folder holding any file of
 * an earlier run is not reused without --force, a folder a live run is writing (its lock,
 * `.lock`) is never used; a path read from a file stays below the folder the user named.
 * Files inside are made by name with fb_file_create and fb_atomic_*
 * (atomic_file.c), which never write through a link. */
#define _GNU_SOURCE
#include "run_folder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
    char path[4096];
    size_t len = strlen(dir);
    struct dirent *e;
    fb_status st;
    DIR *d;

    /* a link, a file, an empty name: refused as any output the user names */
    if ((st = fb_run_folder_output("--out", dir, true, err, errlen)) != FB_OK)
        return st;
    while (len > 1 && dir[len - 1] == '/')
        len--;
    memcpy(path, dir, len); /* fb_run_folder_output checked the length */
    path[len] = '\0';
    if (access(path, F_OK) != 0)
        return FB_OK; /* a new folder */
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

fb_status fb_run_folder_below(const char *top, const char *rel, char *err, size_t errlen)
{
    char part[4096];
    const char *p = rel, *end;
    fb_status st = FB_OK;
    int fd, next;

    for (const unsigned char *c = (const unsigned char *)rel; *c; c++)
        if (*c < 0x20 || *c == 0x7f) {
            snprintf(err, errlen, "the path holds a control character");
            return FB_ERR_USAGE;
        }
    if (!rel[0] || rel[0] == '/') {
        snprintf(err, errlen, "'%s' is %s: it must name a folder below '%s'", rel,
                 rel[0] ? "an absolute path" : "empty", top);
        return FB_ERR_USAGE;
    }
    if ((fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        snprintf(err, errlen, "cannot open '%s': %s", top, strerror(errno));
        return FB_ERR_IO;
    }
    while (*p && st == FB_OK) {
        struct stat sb;
        size_t n;

        end = strchr(p, '/');
        n = end ? (size_t)(end - p) : strlen(p);
        if (n >= sizeof part) {
            snprintf(err, errlen, "'%.200s...': a path component is too long", rel);
            st = FB_ERR_USAGE;
            break;
        }
        memcpy(part, p, n);
        part[n] = '\0';
        p += n;
        p += strspn(p, "/");
        if (!n || strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            snprintf(err, errlen, "'%s' has a '..' component: it would leave '%s'", rel, top);
            st = FB_ERR_USAGE;
        } else if (fstatat(fd, part, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            /* the rest is new: the caller makes it (a later '..' is still refused above) */
            if (errno != ENOENT) {
                snprintf(err, errlen, "'%s': cannot look at '%s': %s", rel, part,
                         strerror(errno));
                st = FB_ERR_USAGE;
            }
            for (; st == FB_OK && *p; p += strspn(p, "/")) {
                n = strcspn(p, "/");
                if (n == 2 && strncmp(p, "..", 2) == 0) {
                    snprintf(err, errlen, "'%s' has a '..' component: it would leave '%s'", rel,
                             top);
                    st = FB_ERR_USAGE;
                }
                p += n;
            }
            break;
        } else if (S_ISLNK(sb.st_mode)) {
            snprintf(err, errlen, "'%s': '%s' is a symbolic link; a path read from a file is "
                     "never followed out of '%s'", rel, part, top);
            st = FB_ERR_USAGE;
        } else if (*p && !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "'%s': '%s' is not a folder", rel, part);
            st = FB_ERR_USAGE;
        } else if (*p) {
            next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) {
                snprintf(err, errlen, "'%s': cannot open '%s': %s", rel, part, strerror(errno));
                st = FB_ERR_USAGE;
            } else {
                close(fd);
                fd = next;
            }
        }
    }
    close(fd);
    return st;
}

/* Whether dir holds a run's record: its results.csv, or (a run stopped before its first
 * benchmark ended) its env.json or fabricbench.log. */
static bool holds_run_record(const char *dir)
{
    static const char *const record[] = {"results.csv", "env.json", "fabricbench.log"};
    char p[PATH_MAX + 32];
    struct stat sb;

    for (size_t i = 0; i < sizeof record / sizeof record[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, record[i]);
        if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
            return true;
    }
    return false;
}

fb_status fb_run_folder_output(const char *opt, const char *path, bool dir, char *err,
                               size_t errlen)
{
    char name[4096], target[4096], parent[4096];
    const char *base = NULL;
    size_t len = strlen(path);
    struct stat sb;
    ssize_t n;

    if (!len) {
        snprintf(err, errlen, "bad value for %s: empty path", opt);
        return FB_ERR_USAGE;
    }
    /* "link/" would resolve the link: look at the name itself */
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (len >= sizeof name) {
        snprintf(err, errlen, "bad value for %s: path too long", opt);
        return FB_ERR_USAGE;
    }
    memcpy(name, path, len);
    name[len] = '\0';
    /* A file is written beside itself (NAME.tmp, then renamed): its folder must be there and
     * writable now, not found missing once the work is done and its verdicts printed. */
    if (!dir) {
        const char *slash = strrchr(name, '/');

        base = slash ? slash + 1 : name;
        snprintf(parent, sizeof parent, "%.*s", slash ? (slash == name ? 1 : (int)(slash - name)) : 1,
                 slash ? name : ".");
        bool there = stat(parent, &sb) == 0;

        if (!there || !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "bad value for %s: folder '%.180s' %s", opt, parent,
                     there ? "is not a folder" : "does not exist");
            return FB_ERR_USAGE;
        }
        if (access(parent, W_OK | X_OK) != 0) {
            snprintf(err, errlen, "bad value for %s: cannot write in folder '%.160s': %s", opt,
                     parent, strerror(errno));
            return FB_ERR_USAGE;
        }
    }
    if (lstat(name, &sb) != 0)
        return FB_OK; /* new */
    if (S_ISLNK(sb.st_mode)) {
        n = readlink(name, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        snprintf(err, errlen, "cannot use %s '%s': it is a symbolic link (to '%.1024s'); name "
                 "the %s itself", opt, path, target, dir ? "folder" : "file");
        return FB_ERR_USAGE;
    }
    if (dir != !!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot use %s '%s': it exists and is %s", opt, path,
                 dir ? "not a folder" : "a folder");
        return FB_ERR_USAGE;
    }
    /* A file is replaced by renaming over it: a device, a FIFO or a socket would be replaced
     * by a regular file (as root, --junit /dev/null would replace the system's). */
    if (!dir && !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "cannot use %s '%s': it exists and is not a regular file (%s)",
                 opt, path,
                 S_ISCHR(sb.st_mode)    ? "a character device"
                 : S_ISBLK(sb.st_mode)  ? "a block device"
                 : S_ISFIFO(sb.st_mode) ? "a FIFO"
                 : S_ISSOCK(sb.st_mode) ? "a socket"
                                        : "of another kind");
        return FB_ERR_USAGE;
    }
    /* A run's record (results.csv, env.json, fabricbench.log, nccl-rank<N>.log) is written by
     * the run alone: an output named there by mistake would destroy it. */
    if (!dir && fb_run_folder_is_run_file(base) && holds_run_record(parent)) {
        snprintf(err, errlen, "cannot use %s '%s': it is the record of the run in '%s' (%s), "
                 "which %s does not write", opt, path, parent, base, opt);
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

/* realpath of the longest existing prefix of path, then the rest (which does not exist yet, so
 * holds no link) resolved by hand: "." dropped, ".." takes off the last component, as mkdir -p
 * would walk it. */
static bool resolve_prefix(const char *path, char *out, size_t len)
{
    char head[PATH_MAX], real[PATH_MAX];
    if (snprintf(head, sizeof head, "%s", path) >= (int)sizeof head)
        return false;
    for (;;) {
        if (realpath(*head ? head : ".", real)) {
            const char *rest = path + strlen(head);
            size_t used = strlen(real);
            if (used >= len)
                return false;
            memcpy(out, real, used + 1);
            while (*rest) {
                size_t n;
                rest += strspn(rest, "/");
                n = strcspn(rest, "/");
                if (n == 2 && rest[0] == '.' && rest[1] == '.') {
                    char *slash = strrchr(out, '/');
                    used = slash && slash != out ? (size_t)(slash - out) : 1;
                    out[used] = '\0';
                } else if (n && !(n == 1 && rest[0] == '.')) {
                    if (used + n + 2 > len)
                        return false;
                    if (out[used - 1] != '/')
                        out[used++] = '/';
                    memcpy(out + used, rest, n);
                    used += n;
                    out[used] = '\0';
                }
                rest += n;
            }
            return true;
        }
        char *slash = strrchr(head, '/');
        if (!slash)
            head[0] = '\0';
        else if (slash == head)
            head[1] = '\0';
        else
            *slash = '\0';
    }
}

bool fb_run_folder_inside(const char *path, const char *dir)
{
    char p[PATH_MAX + 256], d[PATH_MAX];
    size_t n;
    if (!realpath(dir, d) || !resolve_prefix(path, p, sizeof p))
        return false;
    n = strlen(d);
    return strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/' || (n == 1 && d[0] == '/'));
}

/* ---- the run lock ---- */

/* "PID HOST\n" of this process. */
static void lock_text(char *buf, size_t len)
{
    char host[256] = "unknown";

    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    snprintf(buf, len, "%ld %s\n", (long)getpid(), host);
}

/* Reads a lock file: its text into buf, its pid and host; false when absent or malformed. */
static bool read_lock(const char *path, char *buf, size_t len, long *pid, char *host,
                      size_t hostlen)
{
    /* never waits: a FIFO planted as the lock would block the open and then the read until
     * the run's timeout; anything but a regular file is a lock that cannot be read */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    ssize_t n;
    char *sp, *nl;

    buf[0] = '\0';
    if (fd < 0)
        return false;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return false;
    }
    n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    errno = 0;
    *pid = strtol(buf, &sp, 10);
    /* a pid is a positive int: one past it (or past a long) is no process's */
    if (sp == buf || errno == ERANGE || *sp != ' ' || *pid <= 0 || *pid > INT_MAX ||
        !(nl = strchr(sp + 1, '\n')) || nl == sp + 1)
        return false;
    snprintf(host, hostlen, "%.*s", (int)(nl - sp - 1), sp + 1);
    return true;
}

/* The host of a lock's text "PID HOST\n". */
static bool read_text_host(const char *text, char *host, size_t len)
{
    const char *sp = strchr(text, ' '), *nl = sp ? strchr(sp + 1, '\n') : NULL;

    if (!nl)
        return false;
    snprintf(host, len, "%.*s", (int)(nl - sp - 1), sp + 1);
    return true;
}

/* Creates `path` holding `text` (never through what was there). */
static bool write_new(const char *path, const char *text)
{
    int fd;
    size_t len = strlen(text);
    bool ok;

    (void)unlink(path);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
        return false;
    ok = write(fd, text, len) == (ssize_t)len;
    return close(fd) == 0 && ok;
}

fb_status fb_run_folder_lock(const char *dir, char *note, size_t notelen, char *err,
                             size_t errlen)
{
    char lock[4200], tmp[4300], guard[4300], mine[320], theirs[320], again[320], host[256],
        myhost[256] = "";
    struct timespec nap = {0, 20 * 1000 * 1000};
    fb_status st = FB_ERR_USAGE;
    long pid, pid2;

    note[0] = '\0';
    if (errlen)
        err[0] = '\0';
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    snprintf(tmp, sizeof tmp, "%s/.lock.%ld.tmp", dir, (long)getpid());
    snprintf(guard, sizeof guard, "%s/.lock.takeover", dir);
    lock_text(mine, sizeof mine);
    if (!read_text_host(mine, myhost, sizeof myhost))
        snprintf(myhost, sizeof myhost, "unknown");
    if (!write_new(tmp, mine)) {
        snprintf(err, errlen, "cannot lock '%s': %s", dir, strerror(errno));
        return FB_ERR_USAGE;
    }
    /* ~4 s of retries: only while another taker holds the takeover guard */
    for (int tries = 0; tries < 200; tries++) {
        int fd;
        bool live;

        if (link(tmp, lock) == 0) {
            st = FB_OK;
            break;
        }
        if (errno != EEXIST) {
            snprintf(err, errlen, "cannot lock '%s': %s", dir, strerror(errno));
            break;
        }
        if (!read_lock(lock, theirs, sizeof theirs, &pid, host, sizeof host)) {
            struct stat sb;
            if (lstat(lock, &sb) != 0)
                continue; /* removed meanwhile: try again */
            snprintf(err, errlen, "'%s' has a lock that cannot be read ('%s'): remove it if no "
                     "run is writing there", dir, lock);
            break;
        }
        live = strcmp(host, myhost) != 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH;
        if (live) {
            snprintf(err, errlen, "'%s' is being written by pid %ld on %s (its lock: '%s'); "
                     "wait for it to end or choose another --out", dir, pid, host, lock);
            break;
        }
        /* stale: one taker at a time, under a guard; a guard older than 10 s was left by a
         * taker that died in these few lines */
        if ((fd = open(guard, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
            struct stat sb;
            if (lstat(guard, &sb) == 0 && time(NULL) - sb.st_mtime > 10)
                (void)unlink(guard);
            nanosleep(&nap, NULL);
            continue;
        }
        close(fd);
        /* still the stale lock we judged (not one a faster taker made meanwhile) */
        if (read_lock(lock, again, sizeof again, &pid2, host, sizeof host) &&
            strcmp(again, theirs) == 0) {
            (void)unlink(lock);
            snprintf(note, notelen, "took over the stale lock of '%s' (pid %ld on %s is gone)",
                     dir, pid, host);
        }
        (void)unlink(guard);
    }
    if (st != FB_OK && err[0] == '\0')
        snprintf(err, errlen, "cannot lock '%s': another run keeps taking it", dir);
    (void)unlink(tmp);
    return st;
}

void fb_run_folder_unlock(const char *dir)
{
    char lock[4200], mine[320], theirs[320], host[256];
    long pid;

    snprintf(lock, sizeof lock, "%s/.lock", dir);
    lock_text(mine, sizeof mine);
    if (read_lock(lock, theirs, sizeof theirs, &pid, host, sizeof host) &&
        strcmp(theirs, mine) == 0)
        (void)unlink(lock);
}

/* The device and inode of the results.csv that `name` (a folder or the file itself) names. */
static bool run_identity(const char *name, dev_t *dev, ino_t *ino)
{
    char p[PATH_MAX + 16];
    struct stat sb;

    if (stat(name, &sb) != 0)
        return false;
    if (S_ISDIR(sb.st_mode)) {
        snprintf(p, sizeof p, "%s/results.csv", name);
        if (stat(p, &sb) != 0)
            return false;
    }
    *dev = sb.st_dev;
    *ino = sb.st_ino;
    return true;
}

fb_status fb_run_folder_distinct(const char *const *names, size_t n, char *err, size_t errlen)
{
    dev_t *dev = calloc(n ? n : 1, sizeof *dev);
    ino_t *ino = calloc(n ? n : 1, sizeof *ino);
    bool *known = calloc(n ? n : 1, sizeof *known);
    fb_status st = FB_OK;

    if (!dev || !ino || !known) {
        snprintf(err, errlen, "out of memory");
        st = FB_ERR_NOMEM;
    }
    for (size_t i = 0; i < n && st == FB_OK; i++) {
        known[i] = run_identity(names[i], &dev[i], &ino[i]);
        for (size_t j = 0; j < i && known[i]; j++)
            if (known[j] && dev[j] == dev[i] && ino[j] == ino[i]) {
                snprintf(err, errlen, "'%.1000s' and '%.1000s' are one run (the same "
                         "results.csv); each run counts once", names[j], names[i]);
                st = FB_ERR_USAGE;
                break;
            }
    }
    free(dev);
    free(ino);
    free(known);
    return st;
}

bool fb_run_folder_is_run(const char *dir)
{
    char p[PATH_MAX + 16];
    struct stat sb;

    snprintf(p, sizeof p, "%s/results.csv", dir);
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

long fb_run_folder_runs_inside(const char *top, char (*list)[4096], size_t cap, char *err,
                               size_t errlen)
{
    struct dirent **e = NULL;
    int ne = scandir(top, &e, NULL, alphasort);
    long n = 0;

    if (ne < 0) {
        snprintf(err, errlen, "cannot read folder '%s': %s", top, strerror(errno));
        return -1;
    }
    for (int i = 0; i < ne; i++) {
        if (n >= 0 && e[i]->d_name[0] != '.') {
            if ((size_t)n == cap) {
                snprintf(err, errlen, "'%s' holds more than %zu runs; give the runs themselves",
                         top, cap);
                n = -1;
            } else if (snprintf(list[n], sizeof list[n], "%s/%s", top, e[i]->d_name) <
                           (int)sizeof list[n] &&
                       fb_run_folder_is_run(list[n])) {
                n++;
            }
        }
        free(e[i]);
    }
    free(e);
    return n;
}
