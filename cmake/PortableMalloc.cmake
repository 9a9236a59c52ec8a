# mimalloc for the portable (fully static) build: Debian ships only a shared libmimalloc, so
# the source of the same Debian release (bookworm's mimalloc 2.0.9+ds) is downloaded at
# configure time, checked against a pinned SHA-256, and its single-unit build (src/static.c,
# what upstream's mimalloc-obj target compiles) is linked into the executable as an object,
# where it replaces malloc and free as the shared library does in the normal build.
set(PREFLIGHT_DEBIAN_MIRROR "https://deb.debian.org/debian" CACHE STRING "Debian mirror for header packages")
set(pf_mimalloc_src "pool/main/m/mimalloc/mimalloc_2.0.9+ds.orig.tar.xz")
set(pf_mimalloc_sha256 "cbc9d207ff105ad1f0cb739c378076143a6452b8d0624309cea0abfb040e972b")

set(pf_mimalloc_dir "${CMAKE_BINARY_DIR}/_deps/mimalloc-src")
set(pf_mimalloc_stamp "${pf_mimalloc_dir}/.sha256")
if(EXISTS "${pf_mimalloc_stamp}")
  file(READ "${pf_mimalloc_stamp}" pf_mimalloc_have)
endif()
if(NOT pf_mimalloc_have STREQUAL pf_mimalloc_sha256)
  file(REMOVE_RECURSE "${pf_mimalloc_dir}")
  file(MAKE_DIRECTORY "${pf_mimalloc_dir}")
  set(url "${PREFLIGHT_DEBIAN_MIRROR}/${pf_mimalloc_src}")
  message(STATUS "mimalloc: downloading Debian's source ${url}")
  file(DOWNLOAD "${url}" "${pf_mimalloc_dir}/source.tar.xz"
       EXPECTED_HASH SHA256=${pf_mimalloc_sha256} STATUS status TLS_VERIFY ON)
  list(GET status 0 code)
  if(NOT code EQUAL 0)
    list(GET status 1 why)
    message(FATAL_ERROR "mimalloc: could not download ${url}: ${why}. Point "
                        "-DPREFLIGHT_DEBIAN_MIRROR at a reachable mirror or configure with "
                        "-DPREFLIGHT_MIMALLOC=OFF (glibc's malloc instead).")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E tar xf source.tar.xz
                  WORKING_DIRECTORY "${pf_mimalloc_dir}" RESULT_VARIABLE r)
  if(NOT r EQUAL 0 OR NOT EXISTS "${pf_mimalloc_dir}/mimalloc-2.0.9+ds/src/static.c")
    message(FATAL_ERROR "mimalloc: ${pf_mimalloc_dir}/source.tar.xz holds no src/static.c")
  endif()
  file(WRITE "${pf_mimalloc_stamp}" "${pf_mimalloc_sha256}")
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
