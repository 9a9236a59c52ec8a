# One file of the Debian archive, fetched at configure time: downloaded once per build tree
# from PREFLIGHT_DEBIAN_MIRROR, checked against a pinned SHA-256 and unpacked (a .deb's
# data.tar.* too). Used for the toml++ / CLI11 headers (cmake/HeaderDeps.cmake) and
# mimalloc's source (cmake/PortableMalloc.cmake).
#
#   pf_debian_archive(NAME name PATH pool/... SHA256 hex OUT var [REFUSE message] [HINT text])
#
# Sets VAR to the directory it is unpacked in (build/_deps/NAME). REFUSE: the download is not
# allowed; configure stops with that message when nothing is unpacked yet. HINT ends the
# message of a failed download.
include_guard(GLOBAL)
set(PREFLIGHT_DEBIAN_MIRROR "https://deb.debian.org/debian" CACHE STRING "Debian mirror for fetched packages and sources")

function(pf_unpack archive dir)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E tar xf "${archive}" WORKING_DIRECTORY "${dir}" RESULT_VARIABLE r)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "${archive} could not be unpacked")
  endif()
endfunction()

function(pf_debian_archive)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;PATH;SHA256;OUT;REFUSE;HINT" "")
  set(dir "${CMAKE_BINARY_DIR}/_deps/${arg_NAME}")
  set(stamp "${dir}/.sha256")
  if(EXISTS "${stamp}")
    file(READ "${stamp}" have)
  endif()
  if(NOT have STREQUAL arg_SHA256)
    if(arg_REFUSE)
      message(FATAL_ERROR "${arg_REFUSE}")
    endif()
    file(REMOVE_RECURSE "${dir}")
    file(MAKE_DIRECTORY "${dir}")
    get_filename_component(file "${arg_PATH}" NAME)
    set(url "${PREFLIGHT_DEBIAN_MIRROR}/${arg_PATH}")
    message(STATUS "${arg_NAME}: downloading ${url}")
    file(DOWNLOAD "${url}" "${dir}/${file}" EXPECTED_HASH SHA256=${arg_SHA256} STATUS status TLS_VERIFY ON)
    list(GET status 0 code)
    if(NOT code EQUAL 0)
      list(GET status 1 why)
      message(FATAL_ERROR "${arg_NAME}: could not download ${url}: ${why}. ${arg_HINT}")
    endif()
    pf_unpack("${dir}/${file}" "${dir}")
    if(file MATCHES "\\.deb$")  # an ar archive: the files are in its data.tar.*
      file(GLOB data "${dir}/data.tar.*")
      if(NOT data)
        message(FATAL_ERROR "${arg_NAME}: ${dir}/${file} is not a Debian package")
      endif()
      pf_unpack("${data}" "${dir}")
    endif()
    file(WRITE "${stamp}" "${arg_SHA256}")
  endif()
  set(${arg_OUT} "${dir}" PARENT_SCOPE)
endfunction()
