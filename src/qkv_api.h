/* Public or internal: every function and variable declared in src/ is marked, as Lua marks
 * LUA_API and LUAI_FUNC. The library is compiled with -fvisibility=hidden, so libqkv.so
 * exports exactly the QKV_API declarations (the headers qkv.h and qkv_app.h include, which
 * `make install` installs); QKV_INTERNAL ones are shared between qkv's own files and its tests
 * (which link the static library) only. scripts/check-exports.sh holds the two sets apart. */
#ifndef QKV_API_H
#define QKV_API_H

#if defined(__GNUC__) || defined(__clang__)
#define QKV_API __attribute__((visibility("default")))
#define QKV_INTERNAL __attribute__((visibility("hidden")))
#else
#define QKV_API
#define QKV_INTERNAL
#endif

#endif
