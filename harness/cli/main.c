/* fabricbench: the entry point, dispatching to subcommands. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "topo.h"
#include "watchdog.h"
#include "world.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fabricbench <command> [options]\n\n"
            "Micro-benchmarks for the fabrics that distributed deep-learning training runs on.\n"
            "Launch `run` and `doctor` with one MPI rank per GPU, e.g.\n"
            "  mpirun -np 4 --map-by ppr:2:socket --bind-to socket fabricbench run\n"
            "  (4 GPUs, 2 per socket: local rank i lands on GPU i's socket)\n\n"
            "commands:\n"
            "  run [BENCH...]   run benchmarks, write results/<run-id>/ (see `run --help`)\n"
            "  sweep            relaunch mpirun/srun per binding and NCCL_* setting: doctor,\n"
            "                   run, report (run it without mpirun; see `sweep --help`)\n"
            "  list             list benchmarks, backends and collectives\n"
            "  doctor           print this job's fingerprint and check binding, GPUs, MPI, IB\n"
            "  expect           what each measurement should reach on this job's hardware\n"
            "                   (NICs, PCIe links) and what bounds it; launch it like `run`\n"
            "  densenet         list DenseNet-121's gradient tensors in backward order\n"
            "  compare BASE NEW regression report between two runs (or two machines)\n"
            "  trend RUN_DIR... regression tracking over many runs: steps and what changed\n"
            "  report RUN_DIR   plots (gnuplot) and summary.md of a run folder\n"
            "  locate           name the slow node, link or rank of this job (see\n"
            "                   `locate --help`; launch it like `run`)\n"
            "  accept           judge a run folder against a hardware profile (profiles/)\n"
            "  nccl-log FILE... read NCCL_DEBUG=INFO logs: transports, version, NICs, verdicts\n"
            "  soak             one point for --duration seconds under mpirun, with every\n"
            "                   node's health counters: healthy or degraded (`soak --help`)\n"
            "  health           this node's GPUs, InfiniBand ports and PCIe links from sysfs\n"
            "                   against a profile, for Slurm's HealthCheckProgram (no mpirun)\n"
            "  mix KIND         a mix of your model for `run replay --mix`: fsdp, horovod,\n"
            "                   ddp (from a list of layer sizes) or moe (`mix --help`)\n"
            "  --version        print the version and what this binary was built with\n"
            "  --help           this text\n");
}

/* --help and --version take nothing after them: an extra word is a mistake to report, not to
 * ignore with exit 0. true (the error printed) when there is one. */
static bool no_operands(int argc, char **argv)
{
    if (argc <= 2)
        return false;
    fb_error("%s: unexpected argument '%s' (it takes none; a command's help: fabricbench "
             "COMMAND --help)", argv[1], argv[2]);
    return true;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    fb_topo_plugins_prepare(); /* before MPI_Init loads hwloc's plugins, and any thread */
    if (!cmd) {
        usage(stderr);
        return 2;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (no_operands(argc, argv))
            return 2;
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0)
        return no_operands(argc, argv) ? 2 : fb_cmd_version();
    if (strcmp(cmd, "list") == 0)
        return fb_cmd_list(argc - 1, argv + 1);
    if (strcmp(cmd, "densenet") == 0)
        return fb_cmd_densenet(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return fb_cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return fb_cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "trend") == 0)
        return fb_cmd_trend(argc - 1, argv + 1);
    if (strcmp(cmd, "accept") == 0)
        return fb_cmd_accept(argc - 1, argv + 1);
    if (strcmp(cmd, "nccl-log") == 0)
        return fb_cmd_nccl_log(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return fb_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "locate") == 0)
        return fb_cmd_locate(argc - 1, argv + 1);
    if (strcmp(cmd, "soak") == 0)
        return fb_cmd_soak(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0)
        return fb_cmd_sweep(argc - 1, argv + 1);
    if (strcmp(cmd, "mix") == 0)
        return fb_cmd_mix(argc - 1, argv + 1);
    if (strcmp(cmd, "health") == 0)
        return fb_cmd_health(argc - 1, argv + 1);
    if (strcmp(cmd, "doctor") == 0) {
        int provided, rc = fb_cmd_doctor_options(argc - 1, argv + 1);
        if (rc >= 0)
            return rc;
        /* MPI started as a plain `run` (every benchmark, step's thread too) starts it
         * (fb_world_start), so doctor checks what run uses */
        fb_world_start(&argc, &argv, "doctor",
                       fb_cli_timeout_hint(argc - 1, argv + 1, FB_TIMEOUT_DEFAULT_S),
                       MPI_THREAD_SERIALIZED, &provided);
        return fb_world_finish(fb_cmd_doctor(argc - 1, argv + 1));
    }
    if (strcmp(cmd, "expect") == 0) {
        int provided, rc = fb_cmd_expect_options(argc - 1, argv + 1);
        if (rc >= 0)
            return rc;
        fb_world_start(&argc, &argv, "expect",
                       fb_cli_timeout_hint(argc - 1, argv + 1, FB_TIMEOUT_DEFAULT_S),
                       MPI_THREAD_SINGLE, &provided);
        return fb_world_finish(fb_cmd_expect(argc - 1, argv + 1));
    }
    if (fb_cli_rank_hint() == 0)
        fb_error("unknown command '%s' (see `fabricbench --help`)", cmd);
    return 2;
}
