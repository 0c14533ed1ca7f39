/* Collective operations over MPI (QKV_MPI) or for one process (see dist.h). */
#include "train/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef QKV_MPI
#include <mpi.h>
#endif

static qkv_dist WORLD = {0, 1};

bool qkv__dist_mpi(void) {
#ifdef QKV_MPI
    return true;
#else
    return false;
#endif
}

qkv_dist qkv__dist_world(void) { return WORLD; }

#ifdef QKV_MPI
/* started by mpirun (OpenMPI, or a PMI launcher such as srun)? A plain start is a world of
 * one without MPI_Init: no singleton MPI start for every run of a sweep */
static bool launched(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}
#endif

int qkv__dist_init(int *argc, char ***argv, qkv_dist *d, qkv_err *e) {
#ifdef QKV_MPI
    if (!launched()) {
        *d = WORLD;
        return 0;
    }
    int ok = 0;
    MPI_Initialized(&ok);
    if (!ok && MPI_Init(argc, argv) != MPI_SUCCESS) {
        return qkv_err_set(e, QKV_ERR_FAIL, "MPI_Init failed");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &WORLD.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &WORLD.size);
#else
    (void)argc;
    (void)argv;
    (void)e;
#endif
    *d = WORLD;
    return 0;
}

void qkv__dist_finalize(void) {
#ifdef QKV_MPI
    if (!launched()) return;
    int ok = 0, done = 0;
    MPI_Initialized(&ok);
    MPI_Finalized(&done);
    if (ok && !done) MPI_Finalize();
#endif
}

int qkv__dist_allgather(const qkv_dist *d, const void *mine, void *all, size_t n) {
    if (d->size == 1) {
        if (all != mine) memmove(all, mine, n);
        return 0;
    }
#ifdef QKV_MPI
    /* in pieces that fit MPI's int counts */
    const size_t piece = (size_t)1 << 30;
    char *tmp = NULL;
    for (size_t off = 0; off < n; off += piece) {
        size_t len = n - off < piece ? n - off : piece;
        if (len == n) return MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
        if (!tmp && !(tmp = malloc(len * (size_t)d->size))) return -1;
        if (MPI_Allgather((const char *)mine + off, (int)len, MPI_BYTE, tmp, (int)len, MPI_BYTE, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
            free(tmp);
            return -1;
        }
        for (int r = 0; r < d->size; r++) memcpy((char *)all + (size_t)r * n + off, tmp + (size_t)r * len, len);
    }
    free(tmp);
    return 0;
#else
    return -1;
#endif
}

void qkv__dist_abort(const qkv_dist *d, int code) {
#ifdef QKV_MPI
    if (d->size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#else
    (void)d;
    (void)code;
#endif
}
