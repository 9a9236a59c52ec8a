# mimalloc for the portable (fully static) build: Debian ships only a shared libmimalloc, so
# the source of the same Debian release (bookworm's mimalloc 2.0.9+ds) is downloaded at
# configure time, checked against a pinned SHA-256, and its single-unit build (src/static.c,
# what upstream's mimalloc-obj target compiles) is linked into the executable as an object,
# where it replaces malloc and free as the shared library does in the normal build.
include(DebianArchive)
pf_debian_archive(NAME mimalloc-src PATH pool/main/m/mimalloc/mimalloc_2.0.9+ds.orig.tar.xz
                  SHA256 cbc9d207ff105ad1f0cb739c378076143a6452b8d0624309cea0abfb040e972b OUT pf_mimalloc_dir
                  HINT "Point -DPREFLIGHT_DEBIAN_MIRROR at a reachable mirror or configure with -DPREFLIGHT_MIMALLOC=OFF (glibc's malloc instead).")
if(NOT EXISTS "${pf_mimalloc_dir}/mimalloc-2.0.9+ds/src/static.c")
  message(FATAL_ERROR "mimalloc: ${pf_mimalloc_dir} holds no mimalloc-2.0.9+ds/src/static.c")
endif()

set(pf_mimalloc_root "${pf_mimalloc_dir}/mimalloc-2.0.9+ds")
add_library(pf_mimalloc_static OBJECT "${pf_mimalloc_root}/src/static.c")
target_include_directories(pf_mimalloc_static SYSTEM PRIVATE "${pf_mimalloc_root}/include")
# Upstream's definition and flags for an overriding build (its CMakeLists with MI_OVERRIDE on:
# MI_MALLOC_OVERRIDE, initial-exec TLS). Without the definition the object only adds mi_malloc
# and glibc's malloc stays in use.
target_compile_definitions(pf_mimalloc_static PRIVATE MI_MALLOC_OVERRIDE)
target_compile_options(pf_mimalloc_static PRIVATE -fvisibility=hidden -ftls-model=initial-exec
                       -fno-builtin-malloc -w)
message(STATUS "mimalloc: Debian's 2.0.9 source, compiled into the portable binary")
