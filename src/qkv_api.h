/* Public or internal: every function and variable declared in src/ is marked, as Lua marks
 * LUA_API and LUAI_FUNC:
 *   QKV_API       the library's interface (the headers qkv.h includes): exported by libqkv.so,
 *                 which is compiled with -fvisibility=hidden and exports exactly these;
 *   QKV_APP_API   the application layer's (the headers qkv_app.h adds: configs, tasks, runs,
 *                 ablations): what the qkv command and the tests use of it, linked from
 *                 build/libqkv-app.a; never in libqkv.so, not installed;
 *   QKV_INTERNAL  shared between qkv's own files and its tests only.
 * One naming rule goes with them: QKV_API and QKV_APP_API names are qkv_NAME, QKV_INTERNAL ones
 * qkv__NAME (two underscores, so every call site shows that it reaches inside; the kernels are
 * qkv__k_NAME_f32 and _f64).
 * scripts/check-exports.sh holds the three sets apart. */
#ifndef QKV_API_H
#define QKV_API_H

#if defined(__GNUC__) || defined(__clang__)
#define QKV_API __attribute__((visibility("default")))
#define QKV_APP_API
#define QKV_INTERNAL __attribute__((visibility("hidden")))
#else
#define QKV_API
#define QKV_APP_API
#define QKV_INTERNAL
#endif

#endif
