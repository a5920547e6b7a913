/* host-strict (harness/device/backend_strict*.c), driven through the backend table: a missing
 * stream wait reads stale data and the wait fixes it; a destroyed stream, another case's
 * stream and an event read before it ran are FB_ERR_STRICT with their one line; a host read of
 * a device buffer ends the process with one line naming the address, benchmark and hook; big
 * buffers cost no memory until written. The host backend, for contrast, sees none of it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "test.h"

static const struct fb_backend *be = &fb_backend_host_strict;
static const struct fb_pattern PAT = {.seed = 7, .scale = 1, .offset = 100}; /* never 0 */
enum { N = 1024 };

/* stderr into a file while fn runs; what was written comes back in buf. */
static void capture(void (*fn)(fb_status *), fb_status *st, char *buf, size_t len)
{
    FILE *tmp = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    fflush(stderr);
    dup2(fileno(tmp), STDERR_FILENO);
    fn(st);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    n = fread(buf, 1, len - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
}

/* A fill on stream a, then a copy to the host on stream b: without a wait, b's copy runs
 * before a's fill (which runs only when a is waited for) and reads zeros. */
static size_t fill_then_copy(const struct fb_backend *b, bool wait)
{
    struct fb_stream *sa = NULL, *sb = NULL;
    struct fb_event *e = NULL;
    int32_t *dev = NULL, *host = calloc(N, sizeof *host);
    size_t wrong = N;

    CHECK(b->stream_create(&sa) == FB_OK && b->stream_create(&sb) == FB_OK);
    CHECK(b->event_create(&e) == FB_OK);
    CHECK(b->alloc(FB_MEM_DEVICE, N * sizeof *dev, (void **)&dev) == FB_OK);
    CHECK(b->fill(dev, N, FB_DTYPE_INT32, PAT, sa) == FB_OK);
    CHECK(b->event_record(e, sa) == FB_OK);
    if (wait)
        CHECK(b->stream_wait_event(sb, e) == FB_OK);
    CHECK(b->copy(host, dev, N * sizeof *dev, FB_COPY_D2H, sb) == FB_OK);
    CHECK(b->stream_sync(sb) == FB_OK);
    wrong = fb_pattern_check_host(host, N, FB_DTYPE_INT32, PAT);
    CHECK(b->stream_sync(sa) == FB_OK);
    b->free(FB_MEM_DEVICE, dev);
    b->event_destroy(e);
    b->stream_destroy(sa);
    b->stream_destroy(sb);
    free(host);
    return wrong;
}

static void use_destroyed(fb_status *st)
{
    struct fb_stream *s = NULL;
    int32_t *dev = NULL;

    fb_backend_scope_case("h2d", "pinned_h2d");
    be->stream_create(&s);
    be->alloc(FB_MEM_DEVICE, 64, (void **)&dev);
    be->stream_destroy(s);
    fb_backend_scope_hook("iterate");
    *st = be->fill(dev, 16, FB_DTYPE_INT32, PAT, s);
    be->free(FB_MEM_DEVICE, dev);
    fb_backend_scope_case(NULL, NULL);
}

static void use_other_case(fb_status *st)
{
    struct fb_stream *s = NULL;

    fb_backend_scope_case("compute", "step_ours");
    be->stream_create(&s);
    fb_backend_scope_case("compute", "step_ref");
    fb_backend_scope_hook("verify");
    *st = be->stream_sync(s);
    fb_backend_scope_case(NULL, NULL);
    be->stream_destroy(s); /* destroying is allowed from anywhere */
}

static void elapsed_early(fb_status *st)
{
    struct fb_stream *s = NULL;
    struct fb_event *a = NULL, *b = NULL;
    double us = -1;

    be->stream_create(&s);
    be->event_create(&a);
    be->event_create(&b);
    be->event_record(a, s);
    be->busy_wait(10, s);
    be->event_record(b, s);
    *st = be->event_elapsed_us(a, b, &us); /* no sync: neither has run */
    CHECK(us == 0.0);
    CHECK(be->stream_sync(s) == FB_OK);
    CHECK(be->event_elapsed_us(a, b, &us) == FB_OK && us >= 10.0);
    be->event_destroy(a);
    be->event_destroy(b);
    be->stream_destroy(s);
}

/* In a child: the host reads a device buffer. */
static void host_read(void)
{
    int pipefd[2];
    char buf[512] = "";
    pid_t pid;
    int status = 0;
    ssize_t n;

    CHECK(pipe(pipefd) == 0);
    fflush(NULL);
    if ((pid = fork()) == 0) {
        volatile int32_t *dev = NULL;
        dup2(pipefd[1], STDERR_FILENO);
        be->alloc(FB_MEM_DEVICE, 4096, (void **)&dev);
        fb_backend_scope_case("p2p", "matrix_uni");
        fb_backend_scope_hook("verify");
        printf("%d", (int)dev[3]); /* faults */
        _exit(0);
    }
    close(pipefd[1]);
    n = read(pipefd[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(pipefd[0]);
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    CHECK_HAS(buf, "strict: host access to device memory at 0x");
    CHECK_HAS(buf, " (p2p, verify)");
    CHECK(strchr(buf, '\n') == strrchr(buf, '\n')); /* one line */
}

int main(void)
{
    struct fb_device_info info;
    char out[1024];
    fb_status st = FB_OK;
    void *big = NULL;
    int32_t *dev = NULL, host[N];
    size_t wrong = 0;

    /* the host backend runs work at once: a missing wait goes unnoticed there */
    CHECK(fb_backend_host.open(0, &info) == FB_OK);
    CHECK(fill_then_copy(&fb_backend_host, false) == 0);
    fb_backend_host.close();

    CHECK(fb_backend_find("host-strict") == be);
    CHECK(be->open(0, &info) == FB_OK);
    CHECK(!be->measures && be->on_cpu && !be->host_memory);
    CHECK(fill_then_copy(be, false) == N); /* stale: every element wrong */
    CHECK(fill_then_copy(be, true) == 0);

    capture(use_destroyed, &st, out, sizeof out);
    CHECK(st == FB_ERR_STRICT);
    CHECK_HAS(out, "strict: h2d iterate: stream ");
    CHECK_HAS(out, " used after destroy");

    capture(use_other_case, &st, out, sizeof out);
    CHECK(st == FB_ERR_STRICT);
    CHECK_HAS(out, "strict: compute verify: stream ");
    CHECK_HAS(out, " of case step_ours used in case step_ref");

    capture(elapsed_early, &st, out, sizeof out);
    CHECK(st == FB_ERR_STRICT);
    CHECK_HAS(out, "asked before both ran");

    /* the backend's own operations reach device memory; check is synchronous */
    CHECK(be->alloc(FB_MEM_DEVICE, sizeof host, (void **)&dev) == FB_OK);
    {
        struct fb_stream *s = NULL;
        CHECK(be->stream_create(&s) == FB_OK);
        CHECK(be->fill(dev, N, FB_DTYPE_INT32, PAT, s) == FB_OK);
        CHECK(be->check(dev, N, FB_DTYPE_INT32, PAT, &wrong, s) == FB_OK && wrong == 0);
        CHECK(fb_pattern_check_host(fb_device_view(dev), N, FB_DTYPE_INT32, PAT) == 0);
        CHECK((void *)fb_device_view(dev) != (void *)dev);
        be->stream_destroy(s);
    }
    be->free(FB_MEM_DEVICE, dev);

    /* 16 GiB of addresses: lazily backed, given and taken back at once */
    CHECK(be->alloc(FB_MEM_DEVICE, (size_t)16 << 30, &big) == FB_OK && big);
    be->free(FB_MEM_DEVICE, big);

    host_read();
    be->close();
    CHECK(fb_device_view(host) == (void *)host); /* identity once closed */
    TEST_DONE();
}
