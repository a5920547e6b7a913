/* The documented list of volatile fingerprint entries (fp_volatile.h). */
#include "fp_volatile.h"

#include <stddef.h>
#include <string.h>

/* Exact paths, then prefixes (ending in '*'). Keep docs/trend.md's list the same. */
static const char *const volatile_paths[] = {
    "environment.OMPI_ARGV",
    "environment.OMPI_FILE_LOCATION",
    "environment.OMPI_MCA_orte_jobfam_session_dir",
    "environment.OMPI_MCA_orte_local_daemon_uri",
    "environment.OMPI_MCA_orte_hnp_uri",
    "environment.OMPI_MCA_initial_wdir",
    "environment.OMPI_MCA_orte_ess_jobid",
    "environment.OMPI_MCA_ess_base_jobid",
    "environment.OMPI_MCA_pmix*",
    "environment.PMIX_*",
    "environment.SLURM_JOB_ID",
    "environment.SLURM_JOBID",
    "environment.SLURM_STEP_ID",
    "environment.SLURM_STEPID",
    "environment.SLURM_TASK_PID",
    "environment.SLURM_SRUN_COMM_PORT",
    "environment.SLURM_STEP_LAUNCHER_PORT",
    "started",
    "rank0_peak_rss_bytes",
    "max_rank_peak_rss_bytes",
};

bool fb_fp_volatile(const char *path)
{
    for (size_t i = 0; i < sizeof volatile_paths / sizeof *volatile_paths; i++) {
        const char *v = volatile_paths[i];
        size_t n = strlen(v);
        if (v[n - 1] == '*' ? strncmp(path, v, n - 1) == 0 : strcmp(path, v) == 0)
            return true;
    }
    return false;
}
