/* Comparing what two ranks saw (facts.h). */
#include "facts.h"

#include <stdlib.h>

#include <strings.h>

bool fb_facts_same_gpu(const struct fb_rank_facts *a, const struct fb_rank_facts *b)
{
    if (a->gpu_index < 0 || b->gpu_index < 0 || a->node != b->node)
        return false;
    if (a->gpu_busid[0] && b->gpu_busid[0])
        return strcasecmp(a->gpu_busid, b->gpu_busid) == 0;
    return a->gpu_index == b->gpu_index;
}

const char *fb_facts_launcher(void)
{
    const char *orte = getenv("OMPI_MCA_orte_hnp_uri"), *prte = getenv("PRTE_LAUNCHED"),
               *step = getenv("SLURM_STEP_ID");

    if ((orte && *orte) || (prte && *prte))
        return "mpirun";
    if (step && *step)
        return "srun";
    return "";
}
