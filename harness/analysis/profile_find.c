/* Finding a hardware profile by name: the installed folder beside the binary, then
 * FB_PROFILE_PATH; a path is taken as given (profile_find.h). */
#define _DEFAULT_SOURCE /* readlink, PATH_MAX */
#include "profile_find.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"

static bool is_path(const char *arg)
{
    size_t n = strlen(arg);
    return strchr(arg, '/') || (n > 4 && strcmp(arg + n - 4, ".ini") == 0);
}

static bool is_name(const char *arg)
{
    if (!*arg || arg[0] == '.' || strlen(arg) > 64)
        return false;
    for (const char *c = arg; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_' || *c == '.'))
            return false;
    return true;
}

/* What a name in a folder is, when it is not a regular file (after links): "a folder", "a FIFO",
 * "a device", "a socket"; NULL for a regular file. */
static const char *not_regular(mode_t m)
{
    return S_ISREG(m) ? NULL : S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

/* dir/name.ini into path: 1 when it is a regular file (after links), 0 when there is none, -1
 * when something else holds the name (*what says what). */
static int try_dir(const char *dir, size_t dlen, const char *name, char *path, size_t cap,
                   const char **what)
{
    struct stat sb;
    int n = snprintf(path, cap, "%.*s/%s.ini", (int)dlen, dir, name);

    if (n <= 0 || (size_t)n >= cap || stat(path, &sb) != 0)
        return 0;
    *what = not_regular(sb.st_mode);
    return *what ? -1 : 1;
}

/* Appends the profile names of one folder to list, in alphabetical order (for the message):
 * those that are regular files, as try_dir takes them. */
static void list_names(const char *dir, size_t dlen, char *list, size_t cap)
{
    char d[PATH_MAX];
    struct dirent **e = NULL;
    if (snprintf(d, sizeof d, "%.*s", (int)dlen, dir) >= (int)sizeof d)
        return;
    int ne = scandir(d, &e, NULL, alphasort);
    for (int i = 0; i < ne; i++) {
        size_t n = strlen(e[i]->d_name), used = strlen(list);
        char f[PATH_MAX + 256];
        struct stat sb;
        bool regular = snprintf(f, sizeof f, "%s/%s", d, e[i]->d_name) < (int)sizeof f &&
                       stat(f, &sb) == 0 && S_ISREG(sb.st_mode);
        if (regular && n > 4 && strcmp(e[i]->d_name + n - 4, ".ini") == 0 && used + n + 2 < cap)
            snprintf(list + used, cap - used, "%s%.*s", used ? " " : "", (int)(n - 4),
                     e[i]->d_name);
        free(e[i]);
    }
    free(e);
}

fb_status fb_profile_find(const char *arg, const char *exe_dir, const char *env, char *path,
                          size_t cap, char *err, size_t errlen)
{
    char self[PATH_MAX], installed[PATH_MAX], names[512] = "";
    const char *what = NULL;
    int found;
    if (!arg || !*arg) {
        snprintf(err, errlen, "--profile is empty (give a profile name or an .ini file)");
        return FB_ERR_USAGE;
    }
    if (is_path(arg)) {
        if (snprintf(path, cap, "%s", arg) >= (int)cap) {
            snprintf(err, errlen, "--profile: the path is too long");
            return FB_ERR_USAGE;
        }
        return FB_OK;
    }
    if (!is_name(arg)) {
        snprintf(err, errlen, "--profile '%.64s': not a profile name (letters, digits, '-', '_', "
                 "'.') nor a path to an .ini file", arg);
        return FB_ERR_USAGE;
    }
    if (!exe_dir) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        exe_dir = slash ? self : NULL; /* unknown: no installed folder to look in */
    }
    if (!exe_dir || snprintf(installed, sizeof installed, "%.*s/%s",
                             (int)(sizeof installed - 64), exe_dir, FB_PROFILE_REL_DIR) >=
                        (int)sizeof installed)
        installed[0] = '\0';
    if (*installed && (found = try_dir(installed, strlen(installed), arg, path, cap, &what)))
        goto named;
    if (*installed)
        list_names(installed, strlen(installed), names, sizeof names);
    for (const char *d = env ? env : ""; *d;) {
        size_t n = strcspn(d, ":");
        if (n && (found = try_dir(d, n, arg, path, cap, &what)))
            goto named;
        if (n)
            list_names(d, n, names, sizeof names);
        d += n + (d[n] == ':');
    }
    struct stat sb;
    if (stat(arg, &sb) == 0) { /* no profile of that name, but a file or folder: a path */
        snprintf(path, cap, "%s", arg);
        return FB_OK;
    }
    {
        /* a name is looked for in those folders only; a file here is named by its path */
        char here[200];
        snprintf(here, sizeof here, "%.64s.ini", arg);
        bool ini_here = stat(here, &sb) == 0 && S_ISREG(sb.st_mode);
        snprintf(err, errlen, "no profile named '%s' in %s%s%s (profiles there: %s), nor a file "
                 "or folder '%s' here%s%s%s", arg,
                 *installed ? installed : "(no installed folder: the binary's is unknown)",
                 env && *env ? " or FB_PROFILE_PATH=" : "", env && *env ? env : "",
                 *names ? names : "none", arg, ini_here ? "; for the file here, give its path: './" : "",
                 ini_here ? here : "", ini_here ? "'" : "");
    }
    return FB_ERR_USAGE;
named: /* the first folder that holds the name decides: its profile, or what is wrong there */
    if (found > 0)
        return FB_OK;
    {
        char shown[PATH_MAX + 64];
        fb_escape(path, strlen(path), 200, shown, sizeof shown);
        snprintf(err, errlen, "profile '%s': '%s' is %s, not a profile file", arg, shown, what);
    }
    return FB_ERR_USAGE;
}
