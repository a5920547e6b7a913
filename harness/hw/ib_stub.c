/* Stands in for ib_verbs.c in builds without libibverbs: it reports no ports and says it was
 * not built, so doctor can tell "no HCA" from "could not look". */
#include "ib.h"

fb_status fb_ib_ports(struct fb_ib_port **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    return FB_OK;
}

bool fb_ib_built(void) { return false; }
