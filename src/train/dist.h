/* Data-parallel training across processes: the few collective operations the training loop
 * needs, over MPI when qkv is built with `make MPI=1` and started by mpirun, and trivially for
 * one process otherwise. The operations move bytes only, never add: every sum is qkv's own, in
 * a fixed order (train.c), so results do not depend on the process count or on MPI's
 * reduction algorithms. */
#ifndef QKV_DIST_H
#define QKV_DIST_H

#include "qkv_api.h"

#include "tensor/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct qkv_dist {
    int rank, size;            /* this process and how many there are (0 and 1 without MPI) */
} qkv_dist;

/* MPI_Init when built with MPI (a process started without mpirun is a world of one), else
 * rank 0 of 1; call once, from main, before anything else. 0, or -1 with one line in e */
QKV_INTERNAL int qkv__dist_init(int *argc, char ***argv, qkv_dist *d, qkv_err *e);
/* MPI_Finalize (nothing without MPI) */
QKV_INTERNAL void qkv__dist_finalize(void);
/* the process's place, as qkv__dist_init found it (rank 0 of 1 before it or without MPI) */
QKV_INTERNAL qkv_dist qkv__dist_world(void);
/* true when built with MPI */
QKV_INTERNAL bool qkv__dist_mpi(void);
/* every process's n bytes from `mine`, in rank order, into `all` (size x n bytes; n the same on
 * every process). 0, or -1 */
QKV_INTERNAL int qkv__dist_allgather(const qkv_dist *d, const void *mine, void *all, size_t n);
/* stop every process at once after an error that only this one has seen */
QKV_INTERNAL void qkv__dist_abort(const qkv_dist *d, int code);

#endif
