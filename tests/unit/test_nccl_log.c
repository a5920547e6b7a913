/* NCCL's INFO log is sent to the run folder, one file per rank, without overriding a level or a
 * file the user chose. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_log.h"
#include "test.h"

int main(void)
{
    char dir[128], path[256], file[160];
    const char *v;

    snprintf(dir, sizeof dir, "/tmp/fb-test-nccl-log-%d", (int)getpid());
    unsetenv("NCCL_DEBUG");
    unsetenv("NCCL_DEBUG_FILE");
    CHECK(fb_nccl_log_setup(dir, 3, path, sizeof path) == FB_OK);
    snprintf(file, sizeof file, "%s/nccl-rank3.log", dir);
    CHECK_STR(path, file);
    CHECK((v = getenv("NCCL_DEBUG")) && strcmp(v, "INFO") == 0);
    CHECK((v = getenv("NCCL_DEBUG_FILE")) && strcmp(v, file) == 0);
    CHECK(access(dir, W_OK) == 0); /* made on this node */

    /* The user's own file stands. */
    setenv("NCCL_DEBUG_FILE", "/elsewhere/%h.log", 1);
    CHECK(fb_nccl_log_setup(dir, 0, path, sizeof path) == FB_OK && path[0] == '\0');
    CHECK(strcmp(getenv("NCCL_DEBUG_FILE"), "/elsewhere/%h.log") == 0);
    /* A quieter level stands, and then no file is named. */
    unsetenv("NCCL_DEBUG_FILE");
    setenv("NCCL_DEBUG", "WARN", 1);
    CHECK(fb_nccl_log_setup(dir, 0, path, sizeof path) == FB_OK && path[0] == '\0');
    CHECK(strcmp(getenv("NCCL_DEBUG"), "WARN") == 0 && !getenv("NCCL_DEBUG_FILE"));
    /* TRACE says at least as much as INFO: kept, and the file still goes to the run folder. */
    setenv("NCCL_DEBUG", "TRACE", 1);
    CHECK(fb_nccl_log_setup(dir, 1, path, sizeof path) == FB_OK && path[0] != '\0');
    CHECK(strcmp(getenv("NCCL_DEBUG"), "TRACE") == 0);

    /* A folder that cannot be made (a file has its name) is reported, and nothing is set. */
    unsetenv("NCCL_DEBUG_FILE");
    snprintf(file, sizeof file, "%s/plain-file", dir);
    {
        FILE *f = fopen(file, "w");
        CHECK(f != NULL);
        if (f)
            fclose(f);
    }
    CHECK(fb_nccl_log_setup(file, 0, path, sizeof path) == FB_ERR_IO);
    CHECK(!getenv("NCCL_DEBUG_FILE"));
    remove(file);
    /* Parents are made too (a node without the shared file system), and the level is read
     * without regard to case, as NCCL does. */
    setenv("NCCL_DEBUG", "info", 1);
    snprintf(file, sizeof file, "%s/a/b", dir);
    CHECK(fb_nccl_log_setup(file, 2, path, sizeof path) == FB_OK && strstr(path, "/a/b/nccl-rank2.log"));
    CHECK(strcmp(getenv("NCCL_DEBUG"), "info") == 0);
    rmdir(file);
    snprintf(file, sizeof file, "%s/a", dir);
    rmdir(file);
    rmdir(dir);
    TEST_DONE();
}
