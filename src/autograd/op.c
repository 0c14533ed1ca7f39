/* Op names and the table of backward rules, both expanded from QKV_OP_LIST (op.h) in the
 * enum's order. */
#include "autograd/tape.h"

#define AS_NAME(e, name, rule) name,
static const char *const OP_NAMES[] = {QKV_OP_LIST(AS_NAME)};
#define AS_BACKWARD(e, name, rule) qkv__##rule##_backward,
static const qkv_backward_fn BACKWARD[] = {QKV_OP_LIST(AS_BACKWARD)};
/* the tables can only be as long as the list; these guard against an edit of the tables */
_Static_assert(sizeof OP_NAMES / sizeof OP_NAMES[0] == QKV_OP_COUNT, "OP_NAMES out of step with qkv_op");
_Static_assert(sizeof BACKWARD / sizeof BACKWARD[0] == QKV_OP_COUNT, "BACKWARD out of step with qkv_op");

const char *qkv_op_name(qkv_op op) { return (unsigned)op < QKV_OP_COUNT ? OP_NAMES[op] : "?"; }

qkv_backward_fn qkv__op_backward(qkv_op op) {
    return (unsigned)op < QKV_OP_COUNT ? BACKWARD[op] : NULL;
}
