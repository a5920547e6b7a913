#!/bin/sh
# rank_status.sh DIR CMD...: runs CMD as this MPI rank, writes its exit status into DIR/rank.R
# (R: Open MPI's OMPI_COMM_WORLD_RANK) and exits 0. fault.sh launches its runs through it, so
# that an error exit of one rank does not make mpirun abort the job: mpirun's abort signals the
# ranks still exiting (a sanitizer's leak check runs then) and waits odls_base_sigkill_timeout,
# a second, between its signals, which was most of a fault run's time. Here every rank ends on
# its own: one that does not is a hang for the caller's timeout, not a rank mpirun killed.
dir=$1
shift
"$@"
echo $? >"$dir/rank.${OMPI_COMM_WORLD_RANK:?not started by Open MPI}"
