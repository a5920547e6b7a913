/* Running gnuplot, a run-time dependency of `compare` and `report`: finding it on PATH and
 * running a script as a child process (fork and exec,
 * never a shell string), in a chosen folder so the script's relative paths work. */
#ifndef FB_GNUPLOT_H
#define FB_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "status.h"

/* Looks for an executable "gnuplot" in each folder of $PATH (an empty entry is the current
 * folder). Writes its path into path and returns true when found. */
bool fb_gnuplot_find(char *path, size_t len);

/* Runs `gnuplot [-e setup] script` with the program at `gnuplot` (a path from
 * fb_gnuplot_find) for the folder `dir` (NULL: the current one), which must be a folder and not
 * a link. setup (NULL: none) is gnuplot code run before the script; the script and the data it
 * reads are named relative to `dir`. gnuplot runs in a private folder made inside `dir`, so
 * that every file it writes is made there, where nobody could have planted a link; each file
 * it made is then renamed into `dir` under its name (replacing what was there, a link
 * included, never writing through it), and the private folder removed. Scripts name their
 * outputs without a folder. gnuplot's own messages go to our stderr. FB_OK when it exited 0 and
 * its files are in place; FB_ERR_IO when it could not start, exited non-zero or died, or a file
 * could not be moved (a line in err). */
fb_status fb_gnuplot_run(const char *gnuplot, const char *dir, const char *setup,
                         const char *script, char *err, size_t errlen);

#endif
