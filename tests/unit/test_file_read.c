/* The one reader of run-folder files (files/file_read.h) and the escaping of file text in
 * messages (core/escape.h): regular files only (a FIFO does not block, a folder and a device
 * are refused), the cap of a kind checked before anything is read, the line length, a leading
 * byte-order mark skipped, an optional missing file, and control characters and bytes above
 * ASCII shown as \xNN. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "file_read.h"
#include "test.h"

static char dir[64];

static const char *put(const char *name, const char *data, size_t len)
{
    static char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((f = fopen(path, "wb"))) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
    return path;
}

static void test_escape(void)
{
    char out[64];

    CHECK_STR(fb_escape_str("plain text", 0, out, sizeof out), "plain text");
    CHECK_STR(fb_escape_str("a\nb\tc\x7f\\", 0, out, sizeof out), "a\\x0ab\\x09c\\x7f\\\\");
    CHECK_STR(fb_escape_str("\xef\xbb\xbfrun_id", 0, out, sizeof out), "\\xef\\xbb\\xbfrun_id");
    CHECK_STR(fb_escape_str("abcdefgh", 4, out, sizeof out), "abcd...");
    CHECK_STR(fb_escape("a\0b", 3, 0, out, sizeof out), "a\\x00b");
    /* too small a buffer: cut with "...", never past its end */
    CHECK_STR(fb_escape_str("0123456789", 0, out, 8), "0123...");
    CHECK_STR(fb_escape_str("\n\n\n", 0, out, 9), "\\x0a...");
    CHECK(fb_escape_is_control('\n') && fb_escape_is_control('\t') &&
          fb_escape_is_control(0x7f) && !fb_escape_is_control(' ') &&
          !fb_escape_is_control(0xc3));
}

static void test_read(void)
{
    char err[700], path[256], *buf = NULL, big[FB_FILE_LINE_MAX + 16];
    size_t len = 99;
    const char *p;
    fb_status st;

    /* read whole as it is; a byte-order mark at the start is the parsers' to skip */
    p = put("bom.csv", "\xef\xbb\xbf" "a,b\n1,2\n", 11);
    st = fb_file_read(p, FB_FILE_RESULTS_CSV, false, &buf, &len, err, sizeof err);
    CHECK(st == FB_OK && len == 11 && buf && strcmp(buf, FB_FILE_BOM "a,b\n1,2\n") == 0);
    CHECK(buf && fb_file_bom(buf, len) == 3 && fb_file_bom(buf + 3, len - 3) == 0 &&
          fb_file_bom(buf, 2) == 0);
    free(buf);
    buf = NULL;

    /* missing: an error, or nothing when optional */
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK(fb_file_read(path, FB_FILE_JSON, false, &buf, &len, err, sizeof err) == FB_ERR_IO);
    CHECK_HAS(err, "cannot open '");
    CHECK_HAS(err, "missing.json': No such file or directory");
    CHECK(fb_file_read(path, FB_FILE_JSON, true, &buf, &len, err, sizeof err) == FB_OK &&
          !buf && len == 0);

    /* a FIFO (no writer: opening it must not wait), a folder, a device */
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(fb_file_read(path, FB_FILE_JSON, false, &buf, &len, err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK_HAS(err, "/fifo: not a regular file");
    CHECK(fb_file_read(dir, FB_FILE_JSON, false, &buf, &len, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, ": not a regular file");
    CHECK(fb_file_read("/dev/zero", FB_FILE_NCCL_LOG, false, &buf, &len, err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK_STR(err, "/dev/zero: not a regular file");
    CHECK(!buf);

    /* over the cap: refused from its size, before anything is read (a sparse file) */
    snprintf(path, sizeof path, "%s/big.ini", dir);
    {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
        CHECK(fd >= 0 && ftruncate(fd, (off_t)fb_file_cap(FB_FILE_PROFILE) + 1) == 0);
        if (fd >= 0)
            close(fd);
    }
    CHECK(fb_file_read(path, FB_FILE_PROFILE, false, &buf, &len, err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK_HAS(err, "big.ini: 1048577 bytes, more than the 1 MiB a profile may hold");
    CHECK(fb_file_cap(FB_FILE_RESULTS_CSV) == (size_t)1 << 30 &&
          fb_file_cap(FB_FILE_JSON) == (size_t)64 << 20 &&
          fb_file_cap(FB_FILE_NCCL_LOG) == (size_t)256 << 20 &&
          fb_file_cap(FB_FILE_LAUNCHES_CSV) == (size_t)16 << 20 &&
          fb_file_cap(FB_FILE_SITE) == (size_t)1 << 20);

    /* a line of FB_FILE_LINE_MAX bytes is read, one byte more is refused on its line */
    memset(big, 'x', sizeof big);
    memcpy(big, "ok\n", 3);
    big[3 + FB_FILE_LINE_MAX] = '\n';
    p = put("edge.log", big, 4 + FB_FILE_LINE_MAX);
    CHECK(fb_file_read(p, FB_FILE_NCCL_LOG, false, &buf, &len, err, sizeof err) == FB_OK &&
          len == 4 + FB_FILE_LINE_MAX);
    free(buf);
    buf = NULL;
    big[3 + FB_FILE_LINE_MAX] = 'x';
    big[4 + FB_FILE_LINE_MAX] = '\n';
    p = put("long.log", big, 5 + FB_FILE_LINE_MAX);
    CHECK(fb_file_read(p, FB_FILE_NCCL_LOG, false, &buf, &len, err, sizeof err) ==
          FB_ERR_USAGE);
    CHECK_HAS(err, "long.log:2: line longer than 65536 bytes");

    /* a path with a line break is shown escaped */
    snprintf(path, sizeof path, "%s/two\nlines", dir);
    CHECK(fb_file_read(path, FB_FILE_JSON, false, &buf, &len, err, sizeof err) == FB_ERR_IO);
    CHECK_HAS(err, "/two\\x0alines'");
    CHECK(!strchr(err, '\n'));
}

/* fb_file_line: each line's content without its line end (LF, CRLF or none at the end), its
 * '#' comment and blanks at either end; NUL bytes said; line numbers counted. */
static void test_lines(void)
{
    static const char text[] =
        "a = 1\r\n  # only a comment\n\n\tb = 2 # two \r\nc\0d\n# a \0 in a comment\nlast";
    const char *want[] = {"a = 1", "", "", "b = 2", "c\0d", "", "last"};
    size_t pos = 0, lineno = 0, n, count = 0;
    const char *l;
    bool nul;

    while (fb_file_line(text, sizeof text - 1, &pos, &lineno, &l, &n, &nul)) {
        size_t want_n = count == 4 ? 3 : strlen(want[count]);
        CHECK(count < 7 && lineno == count + 1);
        if (count >= 7)
            break;
        CHECK(n == want_n && memcmp(l, want[count], n) == 0);
        CHECK(nul == (count == 4 || count == 5));
        count++;
    }
    CHECK(count == 7);
}

int main(void)
{
    char cmd[128];

    snprintf(dir, sizeof dir, "/tmp/fb_test_file_read.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_escape();
    test_read();
    test_lines();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_DONE();
}
