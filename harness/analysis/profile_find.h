/* Where `accept --profile` finds a profile: a name ("c4140-m") is looked up among the installed
 * profiles (PREFIX/share/fabricbench/profiles, found from the binary's own place, so an unpacked
 * or relocated install works), then in the folders of FB_PROFILE_PATH, then as a path in the
 * current folder; anything with a slash or ending in .ini is a path, as given. */
#ifndef FB_PROFILE_FIND_H
#define FB_PROFILE_FIND_H

#include <stddef.h>

#include "status.h"

/* The installed profiles' folder relative to the binary's folder (bin/ or, in a build tree,
 * bench/, where the build mirrors the profiles into build/share/fabricbench/profiles). */
#define FB_PROFILE_REL_DIR "../share/fabricbench/profiles"

/* Resolves `arg` into `path` (cap bytes). `exe_dir` is the binary's folder (NULL: read from
 * /proc/self/exe) and `env` the value of FB_PROFILE_PATH (NULL: none). FB_OK with the path;
 * FB_ERR_USAGE with a one-line reason in err (the name, where it looked, the names it found)
 * when a name matches no profile and no file, or when `arg` is empty or not a plain name. A path is returned as
 * given: fb_profile_load reports what is wrong with it. Not collective. */
fb_status fb_profile_find(const char *arg, const char *exe_dir, const char *env, char *path,
                          size_t cap, char *err, size_t errlen);

#endif
