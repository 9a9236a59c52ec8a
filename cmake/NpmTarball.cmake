# Fetch a pinned npm package tarball into the build tree, verify its integrity hash, and
# extract it. The npm client is used by package name (never a hard-coded registry address), so
# the machine's own registry configuration applies. The hash is the sha512 that the registry
# publishes as `dist.integrity`, written here in hex. Scoped names (`@scope/pkg`) are stored
# as `scope-pkg`, the file name `npm pack` gives them.
function(pf_fetch_npm_tarball name version sha512 out_var)
  string(REGEX REPLACE "^@" "" file_stem "${name}")
  string(REPLACE "/" "-" file_stem "${file_stem}")
  set(stamp_dir "${CMAKE_BINARY_DIR}/_npm/${file_stem}-${version}")
  set(tarball "${stamp_dir}/${file_stem}-${version}.tgz")
  set(extracted "${stamp_dir}/package")
  if(NOT EXISTS "${extracted}/package.json")
    file(MAKE_DIRECTORY "${stamp_dir}")
    if(NOT EXISTS "${tarball}")
      find_program(NPM_EXECUTABLE npm REQUIRED)
      message(STATUS "Fetching ${name}@${version} with npm pack")
      execute_process(
        COMMAND "${NPM_EXECUTABLE}" pack "${name}@${version}" --silent
                --pack-destination "${stamp_dir}"
        WORKING_DIRECTORY "${stamp_dir}"
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
      if(NOT rc EQUAL 0 OR NOT EXISTS "${tarball}")
        message(FATAL_ERROR "npm pack ${name}@${version} failed (${rc}): ${err}")
      endif()
    endif()
    file(SHA512 "${tarball}" actual)
    if(NOT actual STREQUAL sha512)
      file(REMOVE "${tarball}")
      message(FATAL_ERROR "Integrity check failed for ${name}@${version}:\n"
                          "  expected ${sha512}\n  actual   ${actual}")
    endif()
    file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${stamp_dir}")
  endif()
  set(${out_var} "${extracted}" PARENT_SCOPE)
endfunction()
