/* Fuzzes the writers' escaping (harness/core/gp_text.c, md_text.c, xml_text.c): the input, cut
 * at its first NUL, as a gnuplot string expression, a gnuplot comment, Markdown text, a code
 * span and block, a link, XML text and an attribute. Besides not crashing: each is parsed back
 * with the unit test's checks (tests/unit/escape_check.h): the gnuplot expression evaluates to
 * the input and holds no raw line break, the comment and Markdown text decode to it, the code
 * span and block cannot be closed from inside, the XML is well-formed. */
#include "fuzz.h"

#include "escape_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fuzz_cstr(data, size);
    const char *bad = escape_check_all(in);

    if (bad)
        fprintf(stderr, "fuzz_escape: %s broke\n", bad);
    FUZZ_CHECK(!bad);
    free(in);
    return 0;
}
