/* The optimizer's functions for the training loop (not installed: optim.h is the API). */
#ifndef QKV_OPTIM_INTERNAL_H
#define QKV_OPTIM_INTERNAL_H

#include "optim/optim.h"

/* qkv_optim_step, and g = 0 in the same pass (the gradient buffer ready for the next step) */
QKV_INTERNAL void qkv__optim_step_zero(qkv_optim *o, float *p, float *g, double lr);

#endif
