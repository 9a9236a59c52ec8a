# The parser: tree-sitter's C runtime and the Python grammar, from pinned npm tarballs.
include(NpmTarball)

pf_fetch_npm_tarball(tree-sitter 0.25.1
  9ab70476462d1dfacad40e9fb373ba171901a344228395d45ea1e1c54390bb46e63e8d34405e17692c7879da5acdd1f0c674828e518a1a022a59d68de1dbd32c
  TS_RUNTIME_DIR)
# 0.25.0 is the newest tree-sitter-python on npm (`npm view tree-sitter-python versions`,
# 2026-12-06). The valid Python it reports as an ERROR is read through in analysis/grammar_gaps.h.
pf_fetch_npm_tarball(tree-sitter-python 0.25.0
  782989c7acd06b7e46c5a0ad403fb05c73a162a07110bf9ba7bd56fecddf70332ed3a32bb739155d1e37edd46b0ab6eb0dbc8bb940c9a4083272cee772780b5f
  TS_PYTHON_DIR)

# Third-party C: built at -O2 even in debug trees (the parser dominates check time), without
# our warning flags, and with sanitizers only when the whole build asks for them.
add_library(pf_tree_sitter STATIC "${TS_RUNTIME_DIR}/vendor/tree-sitter/lib/src/lib.c")
target_include_directories(pf_tree_sitter SYSTEM
  PUBLIC "${TS_RUNTIME_DIR}/vendor/tree-sitter/lib/include"
  PRIVATE "${TS_RUNTIME_DIR}/vendor/tree-sitter/lib/src")
set_target_properties(pf_tree_sitter PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(pf_tree_sitter PRIVATE -O2 -w)
target_compile_definitions(pf_tree_sitter PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)

add_library(pf_tree_sitter_python STATIC
  "${TS_PYTHON_DIR}/src/parser.c" "${TS_PYTHON_DIR}/src/scanner.c")
target_include_directories(pf_tree_sitter_python PRIVATE "${TS_PYTHON_DIR}/src")
set_target_properties(pf_tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(pf_tree_sitter_python PRIVATE -O2 -w)
target_link_libraries(pf_tree_sitter_python PUBLIC pf_tree_sitter)
