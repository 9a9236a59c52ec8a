# Validates preflight's SARIF against the published SARIF 2.1.0 JSON schema. The schema is the
# one Microsoft's SARIF SDK validates with (sarif-2.1.0-rtm.5.json, JSON Schema draft-04),
# shipped in the npm package @microsoft/jest-sarif; the validator is ajv 6 (the last major
# version with draft-04 support) and its dependencies. All are fetched at configure time by
# `npm pack` with pinned versions and sha512 integrity hashes, like the parser sources; nothing
# third-party is committed. They are laid out as a flat node_modules tree in the build folder
# and the check runs under node as the ctest test cli_sarif_schema.
include(NpmTarball)
find_program(NODE_EXECUTABLE NAMES node nodejs REQUIRED)

set(pf_sarif_packages
  "@microsoft/jest-sarif|1.0.0-beta.0|0357ce84f77a21ce620e4e05f583f0d6a341e1717eefe22f891ef197caf617a433424c7972963d2ec1a4dab1318852047016e3a559d29b058606e9004a4890f4"
  "ajv|6.12.6|8f77d52e0bd3a39dbb6a7c98c893864d825b1bebe79d062f1349b99a691cd532be9f1029a6408b3082f4699e1d6e55423681928619be933138654ca4068320e2"
  "fast-deep-equal|3.1.3|7f7a90f68432f63d808417bf1fd542f75c0b98a042094fe00ce9ca340606e61b303bb04b2a3d3d1dce4760dcfd70623efb19690c22200da8ad56cd3701347ce1"
  "fast-json-stable-stringify|2.1.0|96177fc05f8b93df076684c2b6556b687b5f8795d88a32236a55dc93bb1a52db9a9d20f22ccc671e149710326a1f10fb9ac47c0f4b829aa964c23095f31bf01f"
  "json-schema-traverse|0.4.1|c5b6c21f9742614e53f0b704861ba1ec727cf075ee5b7aac237634cce64529f6441dca5688753f271ce4eb6f41aec69bfe63221d0b62f7030ffbce3944f7b756"
  "uri-js|4.4.1|eeb294cb2df7435c9cf7ca50d430262edc17d74f45ed321f5a55b561da3c5a5d628b549e1e279e8741c77cf78bd9f3172bacf4b3c79c2acf5fac2b8b26f9dd06"
  "punycode|2.3.1|bd8b7b503d54f5683ad77f2c84bb4b3af740bbef03b02fe2945b44547707fb0c9d712a4d136d007d239db9fe8c91115a84be4563b5f5a14ee7295645b5fabc16")

set(pf_sarif_modules "${CMAKE_BINARY_DIR}/_sarif_validator/node_modules")
foreach(entry IN LISTS pf_sarif_packages)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 pkg)
  list(GET parts 1 version)
  list(GET parts 2 sha512)
  pf_fetch_npm_tarball("${pkg}" "${version}" "${sha512}" pkg_dir)
  if(NOT EXISTS "${pf_sarif_modules}/${pkg}/package.json")
    file(MAKE_DIRECTORY "${pf_sarif_modules}/${pkg}")
    file(COPY "${pkg_dir}/" DESTINATION "${pf_sarif_modules}/${pkg}")
  endif()
endforeach()

set(pf_sarif_schema "${pf_sarif_modules}/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json")
add_test(NAME cli_sarif_schema
  COMMAND "${NODE_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/sarif_schema_check.js"
          "${pf_sarif_schema}" "$<TARGET_FILE:preflight>" "${CMAKE_SOURCE_DIR}"
          "${CMAKE_CURRENT_SOURCE_DIR}/golden")
set_tests_properties(cli_sarif_schema PROPERTIES
  ENVIRONMENT "NODE_PATH=${pf_sarif_modules}" TIMEOUT 120)
