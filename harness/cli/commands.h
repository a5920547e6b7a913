/* The subcommands of the fabricbench binary. Each returns the process exit code:
 * 0 success, 1 a failed check or measurement, 2 bad usage or input. */
#ifndef FB_COMMANDS_H
#define FB_COMMANDS_H

/* Initialises and finalises MPI itself (after checking the options). */
int fb_cmd_run(int argc, char **argv);

/* `locate`: initialises and finalises MPI itself (after checking the options); exit 0 no
 * suspect, 1 suspects named, 2 bad input, 3 timeout (docs/locate.md). */
int fb_cmd_locate(int argc, char **argv);
/* run's machinery with its own work (run_mode.h): one point again and again, and every node's
 * health counters after each interval. Exit 0 healthy, 1 degraded, 2 usage, 3 timeout. */
int fb_cmd_soak(int argc, char **argv);

/* Before MPI starts (main.c): doctor's and expect's answer to --help or bad options (their
 * exit code), else -1 and MPI is started for the command below. */
int fb_cmd_doctor_options(int argc, char **argv);
int fb_cmd_expect_options(int argc, char **argv);

/* Called between MPI_Init and MPI_Finalize. */
int fb_cmd_doctor(int argc, char **argv);
/* `expect`: the expected-figure model of this job (docs/expected.md); between MPI_Init and
 * MPI_Finalize. Exit 0 printed, 2 bad input. */
int fb_cmd_expect(int argc, char **argv);

/* No MPI. sweep starts mpirun or srun itself, and never initialises MPI. */
int fb_cmd_sweep(int argc, char **argv);
int fb_cmd_list(int argc, char **argv);
int fb_cmd_version(void);
int fb_cmd_densenet(int argc, char **argv);
int fb_cmd_compare(int argc, char **argv);
int fb_cmd_accept(int argc, char **argv);
int fb_cmd_nccl_log(int argc, char **argv);
int fb_cmd_report(int argc, char **argv);
int fb_cmd_trend(int argc, char **argv);
/* `mix fsdp|horovod|ddp|moe`: a mix of the user's model for `run replay --mix` (docs/benchmarks/
 * replay.md). Exit 0 written, 1 output error, 2 bad input. */
int fb_cmd_mix(int argc, char **argv);
/* `health`: one node's hardware from sysfs against a profile (docs/slurm.md). Exit 0 healthy,
 * 1 a finding (the node drained with --drain), 2 bad input. */
int fb_cmd_health(int argc, char **argv);

#endif
