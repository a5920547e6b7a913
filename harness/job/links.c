/* The link label of every pair of ranks, from the facts each rank already records for the
 * fingerprint (host, node, CPU binding, GPU bus id). */
#include "links.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "pair_link.h"
#include "topo.h"

static void label_pair(struct fb_topo *topo, const struct fb_session *s,
                       const struct fb_rank_facts *a, const struct fb_rank_facts *b, char *out)
{
    enum fb_link link = FB_LINK_UNKNOWN;
    char why[128];

    if (topo && a->gpu_busid[0] && b->gpu_busid[0]) {
        int nvlinks = fb_pair_link_nvlinks(a->gpu_busid, b->gpu_busid, why, sizeof why);
        link = fb_pair_link_gpu(topo, a->gpu_busid, b->gpu_busid, nvlinks > 0 ? nvlinks : 0);
    } else if (topo && s->be->on_cpu) {
        /* an unbound rank could run anywhere: no link to name */
        link = fb_pair_link_cpu(topo, a->bound ? a->cpus : "", b->bound ? b->cpus : "");
    }
    snprintf(out, FB_LINK_LABEL, "%s",
             link == FB_LINK_UNKNOWN ? "same-node" : fb_pair_link_name(link));
}

fb_status fb_links_compute(const struct fb_session *s, char (**out)[FB_LINK_LABEL],
                           char (**names)[FB_RANK_NAME])
{
    const struct fb_world *w = &s->world;
    size_t n = (size_t)w->size;
    struct fb_rank_facts mine, *all = malloc(n * sizeof *all);
    char(*row)[FB_LINK_LABEL] = calloc(n, sizeof *row);
    char(*matrix)[FB_LINK_LABEL] = NULL;
    char(*who)[FB_RANK_NAME] = NULL;
    struct fb_topo *topo = NULL;
    fb_status st = FB_OK;

    if (w->rank == 0 && (!(matrix = calloc(n * n, sizeof *matrix)) ||
                         !(who = calloc(n, sizeof *who))))
        st = FB_ERR_NOMEM;
    if (!all || !row)
        st = FB_ERR_NOMEM;
    if (fb_topo_load(&topo, NULL) != FB_OK)
        topo = NULL; /* labels fall back to same-node / network */
    if (st == FB_OK)
        st = fb_fingerprint_collect(s, topo, &mine);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    /* Every rank labels its own row, so every rank needs the others' facts. */
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, w->comm);
    for (size_t j = 0; j < n; j++) {
        if (j == (size_t)w->rank)
            snprintf(row[j], FB_LINK_LABEL, "self");
        else if (all[j].node != w->node)
            snprintf(row[j], FB_LINK_LABEL, "%s", fb_pair_link_name(FB_LINK_NETWORK));
        else
            label_pair(topo, s, &mine, &all[j], row[j]);
    }
    MPI_Gather(row, (int)(n * FB_LINK_LABEL), MPI_CHAR, matrix, (int)(n * FB_LINK_LABEL), MPI_CHAR,
               0, w->comm);
    for (size_t j = 0; who && j < n; j++)
        snprintf(who[j], FB_RANK_NAME, "%.40s %s%.48s", all[j].host,
                 all[j].gpu_busid[0] ? "" : "cpus ",
                 all[j].gpu_busid[0]  ? all[j].gpu_busid
                 : all[j].bound       ? all[j].cpus
                                      : "unbound");
out:
    fb_topo_free(topo);
    free(all);
    free(row);
    if (out && names && st == FB_OK) {
        *out = matrix;
        *names = who;
    } else {
        free(matrix);
        free(who);
    }
    return st;
}
