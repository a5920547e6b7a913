/* CSV field quoting and row output. */
#include "csv.h"

#include <string.h>

void fb_csv_field(FILE *f, const char *text)
{
    if (!text)
        return;
    if (!text[strcspn(text, ",\"\r\n")]) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

int fb_csv_row(FILE *f, const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        fb_csv_field(f, fields[i]);
    }
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}
