/* The link label of every pair of ranks. */
#include "links.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair_link.h"
#include "topology.h"

/* What a rank tells the others about itself. */
struct link_facts {
    char host[64];
    char busid[32]; /* the GPU it drives; "" on host */
    char cpus[512]; /* its CPU binding; "" when unbound or unknown */
};

static void label_pair(struct fb_topo *topo, const struct fb_session *s,
                       const struct link_facts *a, const struct link_facts *b, char *out)
{
    enum fb_link link = FB_LINK_UNKNOWN;
    char why[128];

    if (topo && a->busid[0] && b->busid[0]) {
        int nvlinks = fb_nvml_nvlinks(a->busid, b->busid, why, sizeof why);
        link = fb_topo_gpu_link(topo, a->busid, b->busid, nvlinks > 0 ? nvlinks : 0);
    } else if (topo && !a->busid[0] && !b->busid[0] && s->be == &fb_backend_host) {
        link = fb_topo_cpu_link(topo, a->cpus, b->cpus);
    }
    snprintf(out, FB_LINK_LABEL, "%s", link == FB_LINK_UNKNOWN ? "same-node" : fb_link_name(link));
}

fb_status fb_links_compute(const struct fb_session *s, char (**out)[FB_LINK_LABEL],
                           char (**names)[FB_RANK_NAME])
{
    const struct fb_world *w = &s->world;
    size_t n = (size_t)w->size;
    struct link_facts mine, *all = malloc(n * sizeof *all);
    char(*row)[FB_LINK_LABEL] = calloc(n, sizeof *row);
    char(*matrix)[FB_LINK_LABEL] = NULL;
    char(*who)[FB_RANK_NAME] = NULL;
    struct fb_topo *topo = NULL;
    int *node = malloc(n * sizeof *node);
    char numa[64];
    bool bound = false;
    fb_status st = FB_OK;

    memset(&mine, 0, sizeof mine);
    if (w->rank == 0 && (!(matrix = calloc(n * n, sizeof *matrix)) ||
                         !(who = calloc(n, sizeof *who))))
        st = FB_ERR_NOMEM;
    if (!all || !row || !node)
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if (fb_topo_load(&topo, NULL) != FB_OK)
        topo = NULL; /* labels fall back to same-node / network */
    snprintf(mine.host, sizeof mine.host, "%s", w->host);
    snprintf(mine.busid, sizeof mine.busid, "%s", s->dev.pci_bus_id);
    if (topo && (fb_topo_my_binding(topo, mine.cpus, sizeof mine.cpus, numa, sizeof numa,
                                    &bound) != FB_OK || !bound))
        mine.cpus[0] = '\0';
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, w->comm);
    MPI_Allgather(&w->node, 1, MPI_INT, node, 1, MPI_INT, w->comm);
    for (size_t j = 0; j < n; j++) {
        if (j == (size_t)w->rank)
            snprintf(row[j], FB_LINK_LABEL, "self");
        else if (node[j] != w->node)
            snprintf(row[j], FB_LINK_LABEL, "%s", fb_link_name(FB_LINK_NETWORK));
        else
            label_pair(topo, s, &mine, &all[j], row[j]);
    }
    MPI_Gather(row, (int)(n * FB_LINK_LABEL), MPI_CHAR, matrix, (int)(n * FB_LINK_LABEL), MPI_CHAR,
               0, w->comm);
    for (size_t j = 0; who && j < n; j++)
        snprintf(who[j], FB_RANK_NAME, "%.40s %s%.48s", all[j].host, all[j].busid[0] ? "" : "cpus ",
                 all[j].busid[0] ? all[j].busid : all[j].cpus[0] ? all[j].cpus : "unbound");
out:
    fb_topo_free(topo);
    free(all);
    free(row);
    free(node);
    if (out && names && st == FB_OK) {
        *out = matrix;
        *names = who;
    } else {
        free(matrix);
        free(who);
    }
    return st;
}
