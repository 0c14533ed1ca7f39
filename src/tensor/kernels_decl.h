/* Kernel prototypes for one scalar type; included twice by kernels.h (no include guard).
 * QKV_KREAL is the scalar type, QKV_K(name) the suffixed function name. */

/* C (M,N) = op(A) op(B) + beta C;  op(A): (M,K) [A stored (K,M) if ta], op(B): (K,N) [B stored (N,K) if tb] */
QKV_INTERNAL void QKV_K(gemm)(int ta, int tb, int64_t M, int64_t N, int64_t K, const QKV_KREAL *A,
                 const QKV_KREAL *B, QKV_KREAL beta, QKV_KREAL *C);
/* one BLAS call with explicit row strides (lda, ldb, ldc), on the calling thread; not
 * counted in qkv__gemm_flops (callers that use it count their own) */
QKV_INTERNAL void QKV_K(gemm_ld)(int ta, int tb, int64_t M, int64_t N, int64_t K, const QKV_KREAL *A, int64_t lda,
                    const QKV_KREAL *B, int64_t ldb, QKV_KREAL beta, QKV_KREAL *C, int64_t ldc);
/* the same over `batch` matrices; sa/sb/sc are element strides between them (0 = broadcast) */
QKV_INTERNAL void QKV_K(gemm_batched)(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K,
                         const QKV_KREAL *A, int64_t sa, const QKV_KREAL *B, int64_t sb,
                         QKV_KREAL beta, QKV_KREAL *C, int64_t sc);

/* y = a (op) b, broadcast by bc */
QKV_INTERNAL void QKV_K(binary)(qkv_binop op, const qkv_bcast *bc, const QKV_KREAL *a, const QKV_KREAL *b,
                   QKV_KREAL *y);
/* da += dy * dy/da, db += dy * dy/db, summed over broadcast dims; da or db may be NULL */
QKV_INTERNAL void QKV_K(binary_backward)(qkv_binop op, const qkv_bcast *bc, const QKV_KREAL *a,
                            const QKV_KREAL *b, const QKV_KREAL *dy, QKV_KREAL *da, QKV_KREAL *db);

/* y = a (op) b for same-shape a, b (n elements): the common case, one flat loop per op */
QKV_INTERNAL void QKV_K(binary_flat)(qkv_binop op, int64_t n, const QKV_KREAL *a, const QKV_KREAL *b, QKV_KREAL *y);
/* da += dy dy/da, db += dy dy/db for same-shape a, b; da or db may be NULL;
 * zero: 1 = da, 2 = db start as garbage (kernels.h) */
QKV_INTERNAL void QKV_K(binary_flat_backward)(qkv_binop op, int64_t n, const QKV_KREAL *a, const QKV_KREAL *b,
                                 const QKV_KREAL *dy, QKV_KREAL *da, QKV_KREAL *db, int zero);

/* a gradient taken into a running sum and left zero for the next one: acc = g (first) or
 * acc += g, then g = 0, in one pass */
QKV_INTERNAL void QKV_K(accumulate_zero)(int64_t n, QKV_KREAL *acc, QKV_KREAL *g, int first);

/* y (rows,n): every row = b (n)  (a bias, before a product accumulates onto it) */
QKV_INTERNAL void QKV_K(fill_rows)(int64_t rows, int64_t n, const QKV_KREAL *b, QKV_KREAL *y);
/* db (n) += sum over rows of dy (rows,n) */
QKV_INTERNAL void QKV_K(sum_rows)(int64_t rows, int64_t n, const QKV_KREAL *dy, QKV_KREAL *db);

/* y = alpha x + beta  (n elements) */
QKV_INTERNAL void QKV_K(affine)(int64_t n, const QKV_KREAL *x, double alpha, double beta, QKV_KREAL *y);
/* y += alpha x  (n elements) */
QKV_INTERNAL void QKV_K(axpy)(int64_t n, double alpha, const QKV_KREAL *x, QKV_KREAL *y);

/* y = f(x) elementwise for f in qkv_unop; for GELU (both forms) also d = f'(x) when d != NULL,
 * so the backward needs no second erf/tanh */
QKV_INTERNAL void QKV_K(unary)(qkv_unop op, int64_t n, const QKV_KREAL *x, QKV_KREAL *y, QKV_KREAL *d);
/* the epilogue of a linear, in place over its (rows,n) output y: y = f(y + b) and d = f'(y + b)
 * (d NULL: f alone), for f = ReLU (d: 1 or 0), GELU or its tanh form; b (n) or NULL */
QKV_INTERNAL void QKV_K(bias_act)(qkv_unop op, int64_t rows, int64_t n, const QKV_KREAL *b, QKV_KREAL *y,
                     QKV_KREAL *d);
/* dx += dy f'(x); uses x, y = f(x) or the saved d = f'(x), whichever is cheapest;
 * zero: dx starts as garbage (kernels.h) */
QKV_INTERNAL void QKV_K(unary_backward)(qkv_unop op, int64_t n, const QKV_KREAL *x, const QKV_KREAL *y,
                           const QKV_KREAL *d, const QKV_KREAL *dy, QKV_KREAL *dx, int zero);

/* x viewed as (outer, n, inner): y[o,j] = scale * sum_i x[o,i,j] */
QKV_INTERNAL void QKV_K(sum_axis)(int64_t outer, int64_t n, int64_t inner, const QKV_KREAL *x, double scale,
                     QKV_KREAL *y);
/* dx[o,i,j] += scale * dy[o,j] */
QKV_INTERNAL void QKV_K(sum_axis_backward)(int64_t outer, int64_t n, int64_t inner, const QKV_KREAL *dy,
                              double scale, QKV_KREAL *dx);

/* x, y: (rows, n): y = exp(x - max) / sum exp(x - max); a row of all -inf gives zeros */
QKV_INTERNAL void QKV_K(softmax)(int64_t rows, int64_t n, const QKV_KREAL *x, QKV_KREAL *y);
/* dx += scale y (dy - sum(dy y))  (scale: for the fused masked softmax; 1 otherwise) */
QKV_INTERNAL void QKV_K(softmax_backward)(int64_t rows, int64_t n, const QKV_KREAL *y, const QKV_KREAL *dy,
                             double scale, QKV_KREAL *dx);
/* x, y: (rows, n), mask (int32) broadcast over x by bc (a = x, b = mask), or NULL:
 * y = softmax over each row of (mask != 0 ? fill : scale x); an all -inf row gives zeros */
QKV_INTERNAL void QKV_K(masked_softmax)(int64_t rows, int64_t n, const QKV_KREAL *x, const qkv_bcast *bc,
                           const int32_t *mask, double scale, double fill, QKV_KREAL *y);

/* q: (B,T,H hd), k: (B,T,kvH hd), v: (B,T,vH vd), y: (B,T,H vd), p: (B,H,T,T): per head h,
 * P = softmax(blocked ? -inf : scale Q_h K_h'^T) (a fully blocked row gives zeros), Y_h = P V_h''
 * (h' = h / (H/kvH), h'' = h / (H/vH)) */
QKV_INTERNAL void QKV_K(sdpa)(const qkv_sdpa_shape *s, const QKV_KREAL *q, const QKV_KREAL *k, const QKV_KREAL *v,
                 QKV_KREAL *p, QKV_KREAL *y);
/* dv += P^T dY, dq += dS K, dk += dS^T Q, with dS = scale P (dP - rowsum(P dP)), dP = dY V^T;
 * any of dq, dk, dv may be NULL (or the same array); scratch: (parts, T, T), parts >= 1;
 * zero: 1 = dq, 2 = dk, 4 = dv start as garbage (kernels.h) */
QKV_INTERNAL void QKV_K(sdpa_backward)(const qkv_sdpa_shape *s, const QKV_KREAL *q, const QKV_KREAL *k,
                          const QKV_KREAL *v, const QKV_KREAL *p, const QKV_KREAL *dy, QKV_KREAL *dq,
                          QKV_KREAL *dk, QKV_KREAL *dv, QKV_KREAL *scratch, int64_t parts, int zero);

/* y = x - max - log sum exp(x - max) */
QKV_INTERNAL void QKV_K(log_softmax)(int64_t rows, int64_t n, const QKV_KREAL *x, QKV_KREAL *y);
/* dx += dy - exp(y) * sum(dy) */
QKV_INTERNAL void QKV_K(log_softmax_backward)(int64_t rows, int64_t n, const QKV_KREAL *y,
                                 const QKV_KREAL *dy, QKV_KREAL *dx);

/* x, y: (rows, n); w, b: (n) or NULL: y = (x - mean) * rstd * w + b, rstd = 1/sqrt(var + eps),
 * biased variance; mean, rstd: (rows) saved for backward */
QKV_INTERNAL void QKV_K(layernorm)(int64_t rows, int64_t n, const QKV_KREAL *x, const QKV_KREAL *w,
                      const QKV_KREAL *b, double eps, QKV_KREAL *y, QKV_KREAL *mean,
                      QKV_KREAL *rstd);
/* dx += rstd (dxh - mean(dxh) - xh mean(dxh xh)), dxh = dy w; dw += sum dy xh; db += sum dy
 * (dx, dw, db may each be NULL; dw may be db); zero: dx starts as garbage (kernels.h);
 * scratch: qkv_layernorm_backward_scratch(rows, n) elements for the row sums' partials (NULL
 * when dw and db are both NULL) */
QKV_INTERNAL void QKV_K(layernorm_backward)(int64_t rows, int64_t n, const QKV_KREAL *x, const QKV_KREAL *w,
                               const QKV_KREAL *mean, const QKV_KREAL *rstd, const QKV_KREAL *dy,
                               QKV_KREAL *dx, QKV_KREAL *dw, QKV_KREAL *db, int zero, QKV_KREAL *scratch);
/* The residual add and the layer norm after it in one pass: h = x + a, y = layernorm(h) as above.
 * x, h, y: (rows, n); a: (a_rows, n), row r of x takes row r % a_rows of a (a_rows divides rows:
 * the same shape, or broadcast over the leading axes); mean, rstd: (rows) saved for backward */
QKV_INTERNAL void QKV_K(add_layernorm)(int64_t rows, int64_t n, const QKV_KREAL *x, const QKV_KREAL *a,
                                       int64_t a_rows, const QKV_KREAL *w, const QKV_KREAL *b, double eps,
                                       QKV_KREAL *h, QKV_KREAL *y, QKV_KREAL *mean, QKV_KREAL *rstd);
/* Its backward: s = dh + (layer norm's dx for dy), each row at once; dx (+)= s, da (+)= s (row r
 * into row r % a_rows; a broadcast a's rows are summed in the order of r), dw, db as in
 * layernorm_backward. dy or dh may be NULL (no gradient reached y or h; not both); dx, da, dw, db
 * may be NULL, and da may be dx (then dx is written first); zero_x, zero_a: dx, da start as
 * garbage (da only when a_rows = rows). scratch: qkv_add_layernorm_backward_scratch elements. */
QKV_INTERNAL void QKV_K(add_layernorm_backward)(int64_t rows, int64_t n, const QKV_KREAL *h, const QKV_KREAL *w,
                                                const QKV_KREAL *mean, const QKV_KREAL *rstd, const QKV_KREAL *dy,
                                                const QKV_KREAL *dh, QKV_KREAL *dx, int zero_x, QKV_KREAL *da,
                                                int zero_a, int64_t a_rows, QKV_KREAL *dw, QKV_KREAL *db,
                                                QKV_KREAL *scratch);

/* table: (V, dim), idx: (n) in [0, V) -> y: (n, dim), y[i] = table[idx[i]] */
QKV_INTERNAL void QKV_K(embedding)(int64_t n, int64_t dim, const QKV_KREAL *table, const int32_t *idx,
                      QKV_KREAL *y);
/* dtable[idx[i]] += dy[i] */
QKV_INTERNAL void QKV_K(embedding_backward)(int64_t n, int64_t dim, const int32_t *idx, const QKV_KREAL *dy,
                               QKV_KREAL *dtable);

/* logits: (rows, V), targets: (rows) -> mean over rows with target != ignore of
 * lse(row) - logits[target]; lse: (rows) saved; *count = rows that counted (loss 0 if none) */
QKV_INTERNAL double QKV_K(cross_entropy)(int64_t rows, int64_t V, const QKV_KREAL *logits,
                            const int32_t *targets, int32_t ignore, QKV_KREAL *lse,
                            int64_t *count);
/* dlogits[r] += g/count (softmax(logits[r]) - onehot(target[r])) for counted rows */
QKV_INTERNAL void QKV_K(cross_entropy_backward)(int64_t rows, int64_t V, const QKV_KREAL *logits,
                                   const int32_t *targets, int32_t ignore, const QKV_KREAL *lse,
                                   double g_over_count, QKV_KREAL *dlogits);

/* y = mask != 0 ? value : x, mask (int32) broadcast over x by bc (a = x, b = mask) */
QKV_INTERNAL void QKV_K(masked_fill)(const qkv_bcast *bc, const QKV_KREAL *x, const int32_t *mask,
                        double value, QKV_KREAL *y);
/* dx += mask != 0 ? 0 : dy */
QKV_INTERNAL void QKV_K(masked_fill_backward)(const qkv_bcast *bc, const int32_t *mask, const QKV_KREAL *dy,
                                 QKV_KREAL *dx);

/* x, y: (B,T,nh hd), cs: (T, hd/2, 2) the cos and sin of angle t theta_k (qkv_rope builds it):
 * each head's pair (2k, 2k+1) at position t rotated by sign * angle,
 * y[2k] = c x[2k] - s x[2k+1], y[2k+1] = s x[2k] + c x[2k+1] (s = sign sin); assign: y =, else y += */
QKV_INTERNAL void QKV_K(rope)(int64_t B, int64_t T, int64_t nh, int64_t hd, const double *cs, int sign,
                              const QKV_KREAL *x, QKV_KREAL *y, int assign);

/* y: (rows, H hd), v: (rows, kvH hd) -> z: (rows, H hd); head h uses value head h / (H / kvH):
 * z = y - (y . u) u, u = v / max(|v|, 1e-12) (exclusive self attention) */
QKV_INTERNAL void QKV_K(exclusive)(int64_t rows, int64_t H, int64_t kvH, int64_t hd, const QKV_KREAL *y,
                                   const QKV_KREAL *v, QKV_KREAL *z);
/* its backward: dy (+)= dz - (dz . u) u, dv (+)= the value's share (either may be NULL);
 * assign_*: = instead of += */
QKV_INTERNAL void QKV_K(exclusive_backward)(int64_t rows, int64_t H, int64_t kvH, int64_t hd, const QKV_KREAL *y,
                                            const QKV_KREAL *v, const QKV_KREAL *dz, QKV_KREAL *dy, int assign_y,
                                            QKV_KREAL *dv, int assign_v);

/* x: shape (4 dims) -> y: x with axes a1 and a2 swapped; accumulate: y += instead of y = */
QKV_INTERNAL void QKV_K(transpose)(const int64_t shape[4], int a1, int a2, const QKV_KREAL *x, QKV_KREAL *y,
                      int accumulate);
/* views (outer, *, inner): dst[o, dst_at + i, j] (+)= src[o, src_at + i, j] for i < len;
 * src_n, dst_n are the middle dims. Slice, concat and their backwards. */
QKV_INTERNAL void QKV_K(copy_block)(int64_t outer, int64_t len, int64_t inner, const QKV_KREAL *src,
                       int64_t src_n, int64_t src_at, QKV_KREAL *dst, int64_t dst_n,
                       int64_t dst_at, int accumulate);
