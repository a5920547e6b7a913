/* The run folder's rules (harness/results/run_folder.c, fb_file_create, NCCL's log file): a link as
 * --out is refused, any file of an earlier run stops a run without --force, and files are made
 * inside the folder by name, never through a link left there; a path read from a file stays
 * below the folder the user named, and an output the user names is neither empty nor a link;
 * the run lock (.lock: pid and host) refuses a live holder, takes a stale one over, and is
 * removed only by its owner. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "nccl_log.h"
#include "run_folder.h"
#include "test.h"

static char top[64];

static const char *at(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", top, name);
    return buf[k];
}

static int content_is(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strcmp(buf, text) == 0;
}

static int is_regular(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The run lock in folder "locked": taken, refused while held (this process is alive), removed
 * by its owner only; a stale lock (this host, no such pid) taken over with a note; another
 * host's lock and an unreadable one refused and left as they were. */
static void run_lock(void)
{
    char err[4400], note[4400], mine[320], host[256] = "", text[320];
    long dead = 4000000;

    CHECK(mkdir(at("locked"), 0755) == 0);
    CHECK(gethostname(host, sizeof host - 1) == 0);
    snprintf(mine, sizeof mine, "%ld %s\n", (long)getpid(), host);
    CHECK(fb_run_folder_lock(at("locked"), note, sizeof note, err, sizeof err) == FB_OK);
    CHECK_STR(note, "");
    CHECK(content_is(at("locked/.lock"), mine));
    CHECK(!is_regular(at("locked/.lock.takeover")));
    /* held by a live process (this one): refused, naming pid and host */
    err[0] = '\0';
    CHECK(fb_run_folder_lock(at("locked"), note, sizeof note, err, sizeof err) == FB_ERR_USAGE);
    snprintf(text, sizeof text, "is being written by pid %ld on %s", (long)getpid(), host);
    CHECK_HAS(err, text);
    CHECK(content_is(at("locked/.lock"), mine));
    fb_run_folder_unlock(at("locked"));
    CHECK(!is_regular(at("locked/.lock")));
    /* stale: this host, a pid that does not exist */
    while (kill((pid_t)dead, 0) == 0)
        dead++;
    snprintf(text, sizeof text, "%ld %s\n", dead, host);
    fb_test_put(at("locked/.lock"), text);
    CHECK(fb_run_folder_lock(at("locked"), note, sizeof note, err, sizeof err) == FB_OK);
    snprintf(text, sizeof text, "took over the stale lock of '%s' (pid %ld on %s is gone)",
             at("locked"), dead, host);
    CHECK_STR(note, text);
    CHECK(content_is(at("locked/.lock"), mine));
    fb_run_folder_unlock(at("locked"));
    /* not ours: left alone by unlock; another host's is live, an unreadable one refused */
    fb_test_put(at("locked/.lock"), "1 another-host\n");
    fb_run_folder_unlock(at("locked"));
    CHECK(content_is(at("locked/.lock"), "1 another-host\n"));
    CHECK(fb_run_folder_lock(at("locked"), note, sizeof note, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "is being written by pid 1 on another-host");
    fb_test_put(at("locked/.lock"), "garbage");
    CHECK(fb_run_folder_lock(at("locked"), note, sizeof note, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "has a lock that cannot be read");
    CHECK(content_is(at("locked/.lock"), "garbage"));
    snprintf(text, sizeof text, "locked/.lock.%ld.tmp", (long)getpid());
    CHECK(!is_regular(at(text)));
}

/* A folder holding only `file` is refused without force and names it; taken with force. */
static void holds(const char *file)
{
    char err[4400] = "";
    const char *dir = at("held");
    mkdir(dir, 0775);
    fb_test_put(at("held/notes.txt"), "not a run file\n");
    CHECK(fb_run_folder_check(dir, false, err, sizeof err) == FB_OK);
    if (strchr(file, '>')) { /* "name>target": a dangling link of that name */
        char name[64];
        snprintf(name, sizeof name, "held/%.*s", (int)strcspn(file, ">"), file);
        CHECK(symlink(strchr(file, '>') + 1, at(name)) == 0);
    } else {
        char name[64];
        snprintf(name, sizeof name, "held/%s", file);
        fb_test_put(at(name), "earlier\n");
    }
    CHECK(fb_run_folder_check(dir, false, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "already holds a run");
    CHECK_HAS(err, "--force");
    CHECK(fb_run_folder_check(dir, true, err, sizeof err) == FB_OK);
    CHECK(system("rm -rf held") == 0);
}

int main(void)
{
    char err[4400] = "", path[4200];

    snprintf(top, sizeof top, "/tmp/fb_test_run_folder.XXXXXX");
    if (!mkdtemp(top))
        return 1;
    CHECK(chdir(top) == 0);

    CHECK(fb_run_folder_is_run_file("results.csv") && fb_run_folder_is_run_file("env.json"));
    CHECK(fb_run_folder_is_run_file("fabricbench.log") && fb_run_folder_is_run_file("nccl-rank0.log"));
    CHECK(fb_run_folder_is_run_file("nccl-rank123.log"));
    CHECK(!fb_run_folder_is_run_file("nccl-rank.log") && !fb_run_folder_is_run_file("nccl-rankx.log"));
    CHECK(!fb_run_folder_is_run_file("h2d.png") && !fb_run_folder_is_run_file("results.csv.tmp"));

    /* a new folder, and an empty one, may take a run */
    CHECK(fb_run_folder_check(at("new/run"), false, err, sizeof err) == FB_OK);
    mkdir(at("empty"), 0775);
    CHECK(fb_run_folder_check(at("empty"), false, err, sizeof err) == FB_OK);
    CHECK(fb_run_folder_check(at("empty/"), false, err, sizeof err) == FB_OK);

    /* each file of a run, alone, is a run; so is a dangling link with a run file's name */
    holds("results.csv");
    holds("env.json");
    holds("fabricbench.log");
    holds("nccl-rank3.log");
    holds("fabricbench.log>/nonexistent/target");

    /* a link as --out: refused with its target, with or without a trailing slash or --force */
    mkdir(at("elsewhere"), 0775);
    CHECK(symlink(at("elsewhere"), at("link")) == 0);
    CHECK(fb_run_folder_check(at("link"), false, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "symbolic link");
    CHECK_HAS(err, "elsewhere");
    CHECK(fb_run_folder_check(at("link/"), true, err, sizeof err) == FB_ERR_USAGE);
    /* ... but a link above the folder is the user's layout, and is followed */
    CHECK(fb_run_folder_check(at("link/run1"), false, err, sizeof err) == FB_OK);
    fb_test_put(at("afile"), "x");
    CHECK(fb_run_folder_check(at("afile"), true, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "not a folder");

    /* a path read from a file stays below the folder named (fb_run_folder_below) */
    mkdir(at("sweep"), 0775);
    mkdir(at("sweep/v1"), 0775);
    CHECK(symlink(at("elsewhere"), at("sweep/v1/out")) == 0);
    CHECK(symlink(at("elsewhere"), at("sweep/link")) == 0);
    fb_test_put(at("sweep/file"), "x");
    CHECK(fb_run_folder_below(at("sweep"), "v1", err, sizeof err) == FB_OK);
    CHECK(fb_run_folder_below(at("sweep"), "./v1//new/deeper", err, sizeof err) == FB_OK);
    CHECK(fb_run_folder_below(at("sweep"), "../victim", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'../victim' has a '..' component: it would leave");
    CHECK(fb_run_folder_below(at("sweep"), "v1/new/../../..", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'..' component");
    CHECK(fb_run_folder_below(at("sweep"), "/etc", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'/etc' is an absolute path");
    CHECK(fb_run_folder_below(at("sweep"), "", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'' is empty");
    CHECK(fb_run_folder_below(at("sweep"), "link", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'link': 'link' is a symbolic link");
    CHECK(fb_run_folder_below(at("sweep"), "v1/out/x", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'out' is a symbolic link");
    CHECK(fb_run_folder_below(at("sweep"), "file/x", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "'file' is not a folder");
    CHECK(fb_run_folder_below(at("sweep"), "a\nb", err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "control character");
    CHECK(!strchr(err, '\n'));
    /* an output the user names (fb_run_folder_output): not empty, not a link */
    CHECK(fb_run_folder_output("--junit", "", false, err, sizeof err) == FB_ERR_USAGE);
    CHECK_STR(err, "bad value for --junit: empty path");
    CHECK(fb_run_folder_output("--junit", at("sweep/link"), false, err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK_HAS(err, "it is a symbolic link (to '");
    CHECK(fb_run_folder_output("--junit", at("sweep"), false, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, "it exists and is a folder");
    CHECK(fb_run_folder_output("--junit", at("sweep/file"), false, err, sizeof err) == FB_OK);
    CHECK(fb_run_folder_output("--out", at("sweep/new"), true, err, sizeof err) == FB_OK);
    CHECK(fb_run_folder_check("", false, err, sizeof err) == FB_ERR_USAGE);
    CHECK_STR(err, "bad value for --out: empty path");

    /* files are made by name: a link or a hard link of that name is replaced, not followed */
    fb_test_put(at("victim"), "keep me\n");
    CHECK(symlink(at("victim"), at("empty/fabricbench.log")) == 0);
    FILE *f = fb_file_create(at("empty/fabricbench.log"));
    CHECK(f != NULL);
    if (f) {
        fputs("new\n", f);
        fclose(f);
    }
    CHECK(content_is(at("victim"), "keep me\n"));
    CHECK(is_regular(at("empty/fabricbench.log")) && content_is(at("empty/fabricbench.log"), "new\n"));
    CHECK(link(at("victim"), at("empty/results.csv.tmp")) == 0);
    CHECK(fb_atomic_write(at("empty/results.csv"), "a,b\n", 4) == FB_OK);
    CHECK(content_is(at("victim"), "keep me\n") && content_is(at("empty/results.csv"), "a,b\n"));
    CHECK(symlink(at("victim"), at("empty/env.json.tmp")) == 0);
    CHECK(fb_atomic_write(at("empty/env.json"), "{}\n", 3) == FB_OK);
    CHECK(content_is(at("victim"), "keep me\n") && is_regular(at("empty/env.json")));

    /* NCCL's log: a link of its name is removed before NCCL opens it; a '%' in the folder
     * (NCCL's %h, %p) keeps the log out of the folder rather than elsewhere */
    unsetenv("NCCL_DEBUG");
    unsetenv("NCCL_DEBUG_FILE");
    CHECK(symlink(at("victim"), at("empty/nccl-rank0.log")) == 0);
    CHECK(fb_nccl_log_setup(at("empty"), 0, path, sizeof path) == FB_OK);
    CHECK_STR(path, at("empty/nccl-rank0.log"));
    struct stat sb;
    CHECK(lstat(path, &sb) != 0); /* the link is gone; NCCL makes the file */
    CHECK(content_is(at("victim"), "keep me\n"));
    unsetenv("NCCL_DEBUG_FILE");
    CHECK(fb_nccl_log_setup(at("run%h"), 1, path, sizeof path) == FB_ERR_IO);
    CHECK(path[0] == '\0' && getenv("NCCL_DEBUG_FILE") == NULL);

    run_lock();

    snprintf(path, sizeof path, "rm -rf '%s'", top);
    CHECK(system(path) == 0);
    TEST_DONE();
}
