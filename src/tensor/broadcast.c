/* Broadcast plans for elementwise ops (trailing-aligned, as NumPy and PyTorch). */
#include "tensor/kernels.h"

_Atomic uint64_t qkv__gemm_flops = 0;
_Atomic int qkv__gemm_timing = 0;
_Atomic uint64_t qkv__gemm_ns = 0;

int qkv__bcast_init(qkv_bcast *bc, int nda, const int64_t *a, int ndb, const int64_t *b,
                   int *out_ndim, int64_t *out_shape) {
    int nd = nda > ndb ? nda : ndb;
    if (nd > 4) return -1;
    int64_t da[4], db[4];
    for (int i = 0; i < 4; i++) { /* right-align both shapes into 4 dims */
        int ia = i - (4 - nda), ib = i - (4 - ndb);
        da[i] = ia >= 0 ? a[ia] : 1;
        db[i] = ib >= 0 ? b[ib] : 1;
    }
    int64_t stra = 1, strb = 1;
    for (int i = 3; i >= 0; i--) {
        if (da[i] != db[i] && da[i] != 1 && db[i] != 1) return -1;
        bc->n[i] = da[i] > db[i] ? da[i] : db[i];
        bc->sa[i] = da[i] == 1 ? 0 : stra;
        bc->sb[i] = db[i] == 1 ? 0 : strb;
        stra *= da[i];
        strb *= db[i];
    }
    *out_ndim = nd;
    for (int i = 0; i < nd; i++) out_shape[i] = bc->n[4 - nd + i];
    return 0;
}
