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

/* dir/name.ini when it is a regular file. */
static bool try_dir(const char *dir, size_t dlen, const char *name, char *path, size_t cap)
{
    struct stat sb;
    int n = snprintf(path, cap, "%.*s/%s.ini", (int)dlen, dir, name);
    return n > 0 && (size_t)n < cap && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Appends the profile names of one folder to list, in alphabetical order (for the message). */
static void list_names(const char *dir, size_t dlen, char *list, size_t cap)
{
    char d[PATH_MAX];
    struct dirent **e = NULL;
    if (snprintf(d, sizeof d, "%.*s", (int)dlen, dir) >= (int)sizeof d)
        return;
    int ne = scandir(d, &e, NULL, alphasort);
    for (int i = 0; i < ne; i++) {
        size_t n = strlen(e[i]->d_name), used = strlen(list);
        if (n > 4 && strcmp(e[i]->d_name + n - 4, ".ini") == 0 && used + n + 2 < cap)
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
    if (*installed && try_dir(installed, strlen(installed), arg, path, cap))
        return FB_OK;
    if (*installed)
        list_names(installed, strlen(installed), names, sizeof names);
    for (const char *d = env ? env : ""; *d;) {
        size_t n = strcspn(d, ":");
        if (n && try_dir(d, n, arg, path, cap))
            return FB_OK;
        if (n)
            list_names(d, n, names, sizeof names);
        d += n + (d[n] == ':');
    }
    struct stat sb;
    if (stat(arg, &sb) == 0) { /* no profile of that name, but a file or folder: a path */
        snprintf(path, cap, "%s", arg);
        return FB_OK;
    }
    snprintf(err, errlen, "no profile named '%s' in %s%s%s (profiles there: %s)", arg,
             *installed ? installed : "(no installed folder: the binary's is unknown)",
             env && *env ? " or FB_PROFILE_PATH=" : "", env && *env ? env : "",
             *names ? names : "none");
    return FB_ERR_USAGE;
}
