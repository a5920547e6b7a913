/* Text from a file or the command line shown in a message: every byte that is not printable
 * ASCII is written as \xNN (a line break, a control character, a byte-order mark, any byte of
 * UTF-8), so a message stays one visible line. The one helper every reader's message uses. */
#ifndef FB_ESCAPE_H
#define FB_ESCAPE_H

#include <stddef.h>

/* Writes s[0..n) into dst (dstlen bytes, NUL-terminated) with bytes below 0x20, 0x7f and above
 * it as \xNN and a backslash as \\. When it does not fit, or n is over max (0: no limit), ends
 * with "..." instead. Returns dst. */
char *fb_escape(const char *s, size_t n, size_t max, char *dst, size_t dstlen);

/* The same for a NUL-terminated string. */
char *fb_escape_str(const char *s, size_t max, char *dst, size_t dstlen);

/* Whether byte c is a control character: below 0x20 or 0x7f (TAB counted). */
static inline int fb_escape_is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* Whether byte c after byte prev (0 at the start of a text) makes a C1 control character, as
 * fb_escape_control_at reads them: 0x80-0x9f after 0xc2 (UTF-8's form of U+0080-U+009F) or after
 * an ASCII byte or nothing (a lone byte, which many terminals take as the control itself; CSI,
 * 0x9b, starts an escape sequence). For readers that take a text one byte at a time. */
static inline int fb_escape_ends_c1(unsigned char prev, unsigned char c)
{
    return c >= 0x80 && c <= 0x9f && (prev == 0xc2 || prev < 0x80);
}

/* The offset in s of its first control character, C1 included: a byte below 0x20 or 0x7f, a
 * C1 control as UTF-8 writes it (C2 80 to C2 9F) or as a lone byte 0x80-0x9f after anything but
 * a UTF-8 lead byte (where a terminal reads it as one); strlen(s) when it has none. */
size_t fb_escape_control_at(const char *s);

/* The same, with TAB allowed (a blank between a text file's fields). */
size_t fb_escape_control_but_tab(const char *s);

/* The length (1 to 4) of the well-formed UTF-8 sequence at s, RFC 3629's shortest forms only
 * (no surrogates, nothing above U+10FFFF), and its code point in *cp (may be NULL); 0 when the
 * bytes there are not UTF-8 (a NUL ends the string: a sequence cut by it is not). */
int fb_utf8_len(const char *s, unsigned *cp);

/* The offset in s of its first byte that does not start a well-formed UTF-8 sequence;
 * strlen(s) when it is all UTF-8. */
size_t fb_utf8_invalid_at(const char *s);

#endif
