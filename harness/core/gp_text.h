/* Text written into gnuplot scripts and data files: a string of any bytes as a gnuplot string
 * expression that evaluates to exactly those bytes, and text made safe inside a `#` comment.
 * Every string `report` and `compare` write into a .gp script goes through here (issue 15:
 * a results.csv field with a line break ran its own gnuplot commands). */
#ifndef FB_GP_TEXT_H
#define FB_GP_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s as a gnuplot string expression into dst (len bytes, always NUL-terminated when len
 * > 0) and returns the length the whole expression needs (as snprintf does); an expression cut
 * short is not one: size dst from the return value. Printable runs are
 * single-quoted (gnuplot substitutes neither backquotes nor @macros there); each run of
 * control bytes (below 0x20 and 0x7f) and single quotes is a double-quoted string of octal
 * escapes, joined with '.': "it's\n" is 'it'."\047".'s'."\012". The expression never holds
 * a raw line break, and is accepted wherever gnuplot takes a string (assignments, set
 * title/output, plot ... title). */
size_t fb_gp_string(char *dst, size_t len, const char *s);

/* fb_gp_string written to f. */
void fb_gp_put_string(FILE *f, const char *s);

/* s as a label of a tics list that is itself written inside a double-quoted gnuplot string
 * (`labels = "'a' 0, 'b' 1"`, then `eval "set xtics (" . labels . ")"`): fb_gp_string's
 * expression with each '"', '\\' and '`' made '_' (they would end the outer string, start an
 * escape in it, or run a shell command between backquotes, which gnuplot substitutes inside
 * double quotes). Returns the length needed, as fb_gp_string. */
size_t fb_gp_tic_label(char *dst, size_t len, const char *s);

/* Writes s for the inside of a `#` comment (a script's or a data file's) into dst, returns the
 * length needed: control bytes and the backslash (a comment ending in one continues onto the
 * next line) as \xNN, so the comment stays one line. Cut short, dst holds whole escapes only. */
size_t fb_gp_comment(char *dst, size_t len, const char *s);

/* fb_gp_comment written to f. */
void fb_gp_put_comment(FILE *f, const char *s);

#endif
