/* One Slurm node's state and its drain through scontrol (slurm_node.h). */
#include "slurm_node.h"

#include <stdio.h>
#include <string.h>

#include "subprocess.h"

/* The value of ` KEY=` in line up to the next space (or to the end when `rest`), into dst. */
static bool field(const char *line, const char *key, bool rest, char *dst, size_t len)
{
    size_t k = strlen(key);
    const char *p = line;

    while ((p = strstr(p, key)) && !(p == line || p[-1] == ' '))
        p += k;
    if (!p)
        return false;
    p += k;
    size_t n = rest ? strcspn(p, "\n") : strcspn(p, " \n");
    snprintf(dst, len, "%.*s", (int)n, p);
    return true;
}

fb_status fb_slurm_node_parse(const char *line, struct fb_slurm_node *n)
{
    n->state[0] = n->reason[0] = '\0';
    if (!field(line, "State=", false, n->state, sizeof n->state) || !n->state[0])
        return FB_ERR_USAGE;
    if (field(line, "Reason=", true, n->reason, sizeof n->reason)) {
        /* scontrol ends the reason with " [user@time]" */
        char *at = strrchr(n->reason, '[');
        if (at && at > n->reason && at[-1] == ' ' && strchr(at, '@') && strchr(at, ']'))
            at[-1] = '\0';
        if (strcmp(n->reason, "(null)") == 0)
            n->reason[0] = '\0';
    }
    return FB_OK;
}

bool fb_slurm_node_out(const struct fb_slurm_node *n)
{
    return strstr(n->state, "DRAIN") || strstr(n->state, "DOWN") || strstr(n->state, "FAIL");
}

enum fb_slurm_drain_result fb_slurm_drain(const char *node, const char *reason, const char *ours,
                                          struct fb_slurm_node *seen, int *exit_status)
{
    char name[300], why[1200], out[4096];
    char *show[] = {"scontrol", "show", "node", "-o", name + strlen("NodeName="), NULL};
    char *update[] = {"scontrol", "update", name, "State=DRAIN", why, NULL};
    struct fb_slurm_node n = {{0}, {0}};
    struct fb_subprocess_result res;
    int rc = 127;

    snprintf(name, sizeof name, "NodeName=%s", node);
    snprintf(why, sizeof why, "Reason=%s", reason);
    if (fb_subprocess_capture(show, out, sizeof out, &rc) == FB_OK && rc == 0 &&
        fb_slurm_node_parse(out, &n) != FB_OK)
        n.state[0] = n.reason[0] = '\0';
    if (seen)
        *seen = n;
    if (fb_slurm_node_out(&n) && strncmp(n.reason, ours, strlen(ours)) != 0) {
        *exit_status = 0;
        return FB_SLURM_LEFT;
    }
    if (fb_subprocess_wait(update, NULL, 30, 2, NULL, 0, &res) != FB_OK) {
        *exit_status = 127;
        return FB_SLURM_FAILED;
    }
    *exit_status = res.exit_status;
    return res.exit_status == 0 ? FB_SLURM_DRAINED : FB_SLURM_FAILED;
}
