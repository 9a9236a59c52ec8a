# `cmake --install build --prefix P`: the binary, the generated man page and shell
# completions (server/CMakeLists.txt), and the documentation. `cpack -G "TGZ;DEB"` in the
# build directory packages the same tree.
include(GNUInstallDirs)

install(TARGETS preflight RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES "${PF_GENERATED_DOCS_DIR}/man/preflight.1" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
# The directories bash-completion, zsh and fish search for completions of installed programs.
install(FILES "${PF_GENERATED_DOCS_DIR}/bash/preflight"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions")
install(FILES "${PF_GENERATED_DOCS_DIR}/zsh/_preflight"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/zsh/site-functions")
install(FILES "${PF_GENERATED_DOCS_DIR}/fish/preflight.fish"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/fish/vendor_completions.d")
# README's links into docs/ keep working: docs/ is installed next to it.
install(FILES README.md LICENSE CHANGELOG.md ARCHITECTURE.md DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY docs/ DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs" FILES_MATCHING PATTERN "*.md")

# Packages. Nothing here names a person or an address the project does not state: the
# maintainer is the copyright holder of LICENSE, and no homepage is set (the project has no
# public home; PREFLIGHT_PUBLIC_URL, when given, is used).
set(CPACK_PACKAGE_NAME preflight)
set(CPACK_PACKAGE_VENDOR "preflight contributors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Finds silent, expensive bugs in PyTorch training code; estimates GPU memory")
set(CPACK_PACKAGE_DESCRIPTION
    "A command-line linter (preflight check) and language server (preflight lsp) that read \
PyTorch training code without running it and report the bugs that cost GPU hours, and a \
VRAM estimator (preflight estimate).")
set(CPACK_RESOURCE_FILE_LICENSE "${CMAKE_SOURCE_DIR}/LICENSE")
set(CPACK_RESOURCE_FILE_README "${CMAKE_SOURCE_DIR}/README.md")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_SOURCE_GENERATOR "")

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "preflight contributors")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # preflight_VERSION_ARCH.deb
if(PREFLIGHT_PUBLIC_URL)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PREFLIGHT_PUBLIC_URL}")
endif()
# Depends: from the shared libraries the binary links (dpkg-shlibdeps); without that tool,
# the Debian 12 packages of the libraries it links (CMakeLists.txt, server/CMakeLists.txt).
find_program(PF_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(PREFLIGHT_PORTABLE)
  # Statically linked: the package depends on nothing, and its name says what it runs on.
  set(CPACK_SYSTEM_NAME "linux-${CMAKE_SYSTEM_PROCESSOR}-static")
elseif(PF_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(pf_depends "libc6, libstdc++6, libgcc-s1, libspdlog1.10, libfmt9")
  get_target_property(pf_toml_type tomlplusplus::tomlplusplus TYPE)
  if(NOT pf_toml_type STREQUAL "INTERFACE_LIBRARY")  # header-only (cmake/HeaderDeps.cmake): nothing to depend on
    string(APPEND pf_depends ", libtomlplusplus3")
  endif()
  if(TARGET mimalloc)
    string(APPEND pf_depends ", libmimalloc2.0")
  endif()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${pf_depends}")
endif()

include(CPack)
