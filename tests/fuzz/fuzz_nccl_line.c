/* Fuzzes the classifier of one NCCL_DEBUG=INFO line (harness/nccllog/nccl_line.c), the part of the
 * log reader that picks lines apart. Whatever the line, the result must be one of the kinds,
 * with its strings terminated; a connection has its ranks and channel, a transport NCCL would
 * write, and a path that matches it; a malformed transport line says why; a network event is
 * one of the events, only on WARN and network-event lines; every string taken from the line is
 * printable ASCII (control bytes and non-ASCII shown as \xNN). */
#include "fuzz.h"

#include "nccl_line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = fuzz_cstr(data, size);
    struct fb_nccl_line l;
    enum fb_nccl_kind k = fb_nccl_classify_line(line, &l);

    FUZZ_CHECK(k == l.kind && k >= FB_NCCL_LINE_OTHER && k <= FB_NCCL_LINE_NET_EVENT);
    FUZZ_CHECK(memchr(l.version, '\0', sizeof l.version) && memchr(l.text, '\0', sizeof l.text));
    FUZZ_CHECK(memchr(l.nic, '\0', sizeof l.nic) && memchr(l.when, '\0', sizeof l.when));
    FUZZ_CHECK(l.event >= FB_NCCL_EV_NONE && l.event < FB_NCCL_EVENTS);
    FUZZ_CHECK(l.event == FB_NCCL_EV_NONE || k == FB_NCCL_LINE_WARN ||
               k == FB_NCCL_LINE_NET_EVENT);
    if (k == FB_NCCL_LINE_NET_EVENT)
        FUZZ_CHECK(l.event != FB_NCCL_EV_NONE);
    FUZZ_CHECK(memchr(l.conn.transport, '\0', sizeof l.conn.transport));
    FUZZ_CHECK(strcmp(fb_nccl_path_str(l.conn.path), "") != 0);
    if (k == FB_NCCL_LINE_CONN) {
        FUZZ_CHECK(l.conn.channel >= 0 && l.conn.src >= 0 && l.conn.dst >= 0);
        FUZZ_CHECK(l.conn.path != FB_NCCL_UNKNOWN && l.conn.transport[0]);
        /* the line's own text, or cut at the field's size, or shown escaped (\xNN), or its
         * escaped form cut with "..." */
        size_t tl = strlen(l.conn.transport);
        FUZZ_CHECK(strstr(line, l.conn.transport) || strchr(l.conn.transport, '\\') ||
                   tl == sizeof l.conn.transport - 1 ||
                   (tl >= 3 && strcmp(l.conn.transport + tl - 3, "...") == 0));
    }
    /* every string taken from the line is printable ASCII: a log's bytes reach no terminal */
    {
        const char *fields[] = {l.version, l.conn.transport, l.text, l.nic, l.when};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            for (const unsigned char *c = (const unsigned char *)fields[i]; *c; c++)
                FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
    }
    if (k == FB_NCCL_LINE_BAD)
        FUZZ_CHECK(l.text[0] != '\0');
    if (k == FB_NCCL_LINE_VERSION)
        FUZZ_CHECK(l.version[0] >= '0' && l.version[0] <= '9');
    free(line);
    return 0;
}
