# toml++ and CLI11: the installed packages when there are any (Debian 12: libtomlplusplus-dev,
# libcli11-dev), otherwise the headers of those same Debian packages, downloaded at configure
# time from the Debian archive, checked against pinned SHA-256 hashes and unpacked into the
# build tree. Both libraries are usable header-only, so nothing is compiled and the binary
# then needs no toml++ shared library. This is what makes the build work where neither is
# packaged (Ubuntu 22.04 has no libtomlplusplus-dev).
#
#   -DPREFLIGHT_FETCH_HEADERS=OFF          fail instead of downloading
#   -DPREFLIGHT_FORCE_FETCHED_HEADERS=ON   use the downloaded headers even where the packages
#                                          are installed (how the fallback is tested here)
#   -DPREFLIGHT_DEBIAN_MIRROR=URL          another Debian mirror (default deb.debian.org)
option(PREFLIGHT_FETCH_HEADERS "Download toml++ / CLI11 headers (pinned Debian packages) when not installed" ON)
option(PREFLIGHT_FORCE_FETCHED_HEADERS "Use the downloaded toml++ / CLI11 headers even when installed" OFF)

# Debian 12 (bookworm) main. The toml++ package is filed under amd64 because it also carries
# the shared library's link; only its architecture-independent headers are used.
set(pf_tomlplusplus_deb "pool/main/t/tomlplusplus/libtomlplusplus-dev_3.3.0+ds-1_amd64.deb")
set(pf_tomlplusplus_sha256 "2779cce0001466dcf60eb6262ff68a888d49f9e30aee80c499d1d4f6f9f6e12e")
set(pf_cli11_deb "pool/main/c/cli11/libcli11-dev_2.1.2+ds-1_all.deb")
set(pf_cli11_sha256 "f1f6ee9ec053e0e0bcec47345e241b6a8ee006321248b4329e9ce88d2b4b64a8")

include(DebianArchive)

# The headers of one Debian package (cmake/DebianArchive.cmake); sets OUT to its usr/include.
function(pf_debian_headers name deb sha256 out)
  if(NOT PREFLIGHT_FETCH_HEADERS)
    string(CONCAT refuse "${name} is not installed and PREFLIGHT_FETCH_HEADERS is OFF "
                  "(Debian: apt-get install ${name}, or configure with -DPREFLIGHT_FETCH_HEADERS=ON)")
  endif()
  pf_debian_archive(NAME ${name}-deb PATH ${deb} SHA256 ${sha256} OUT dir REFUSE "${refuse}"
                    HINT "Install the package (Debian: ${name}) or point -DPREFLIGHT_DEBIAN_MIRROR at a reachable mirror.")
  if(NOT IS_DIRECTORY "${dir}/usr/include")
    message(FATAL_ERROR "${name}: ${dir} holds no usr/include")
  endif()
  set(${out} "${dir}/usr/include" PARENT_SCOPE)
endfunction()

if(NOT PREFLIGHT_FORCE_FETCHED_HEADERS)
  find_package(CLI11 CONFIG QUIET)
  if(PREFLIGHT_PORTABLE)
    # The installed headers, compiled in: a portable binary links no toml++ shared library.
    find_path(pf_installed_toml_include toml++/toml.h)
    if(pf_installed_toml_include)
      add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED)
      set_target_properties(tomlplusplus::tomlplusplus PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${pf_installed_toml_include}"
        INTERFACE_COMPILE_DEFINITIONS "TOML_HEADER_ONLY=1")
    endif()
  else()
    find_package(tomlplusplus QUIET)
  endif()
endif()

if(NOT TARGET CLI11::CLI11)
  pf_debian_headers(libcli11-dev ${pf_cli11_deb} ${pf_cli11_sha256} cli11_include)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${cli11_include}")
  message(STATUS "CLI11: headers of Debian's libcli11-dev 2.1.2 in ${cli11_include}")
endif()

if(NOT TARGET tomlplusplus::tomlplusplus)
  pf_debian_headers(libtomlplusplus-dev ${pf_tomlplusplus_deb} ${pf_tomlplusplus_sha256} toml_include)
  add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED)
  set_target_properties(tomlplusplus::tomlplusplus PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${toml_include}"
    INTERFACE_COMPILE_DEFINITIONS "TOML_HEADER_ONLY=1")
  message(STATUS "toml++: headers of Debian's libtomlplusplus-dev 3.3.0 in ${toml_include}, header-only")
endif()
