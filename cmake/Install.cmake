# Install rules and the .deb (issue 16, item 1; docs/install.md).
#
# The layout under the prefix, the same one kloop looks in relative to its own executable
# (<bin>/..), so an installed or moved prefix needs no environment variable:
#   bin/kloop
#   bin/kloop-replay                 the replay worker, found next to kloop (only when it was built)
#   lib/kloop/libkloop-cupti.so      the CUPTI injection library (only when it was built)
#   share/kloop/prompts/             the LLM proposer's templates and proposal.schema.json
#   share/kloop/report/              Chart.js (from npm at build time) for kloop report --html
#   share/doc/kloop/                 README.md and docs/
# The nvcc compatibility header and bench/ceilings/ceilings.cu are compiled into kloop; nothing else
# is read from the source tree at run time.
set(KLOOP_INSTALL_CUPTI_DIR "lib/kloop")
set(KLOOP_INSTALL_PROMPTS_DIR "share/kloop/prompts")
set(KLOOP_INSTALL_DOC_DIR "share/doc/kloop")
set(KLOOP_INSTALL_REPORT_DIR "share/kloop/report")

# The build tree mirrors the installed layout for the prompts, so that build/bin/kloop finds them the
# way an installed kloop does (build/lib/libkloop-cupti.so is the build tree's place of the library).
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/kloop)
file(CREATE_LINK ${CMAKE_SOURCE_DIR}/prompts ${CMAKE_BINARY_DIR}/${KLOOP_INSTALL_PROMPTS_DIR} SYMBOLIC)

# The charting library of kloop report --html (docs/report.md): `npm ci` of web/package-lock.json in
# build/web, Chart.js's minified file copied to build/share/kloop/report. Offline-tolerant: without npm
# or the registry the build warns and leaves MISSING.txt there, and kloop report --html names it.
find_program(KLOOP_NPM npm)
if(NOT KLOOP_NPM)
  message(WARNING "npm not found: kloop report --html will not work (scripts/bootstrap.sh installs npm)")
endif()
set(_kloop_npm_stamp ${CMAKE_BINARY_DIR}/web/npm-ci.stamp)
add_custom_command(OUTPUT ${_kloop_npm_stamp}
  COMMAND ${CMAKE_COMMAND} -DNPM=${KLOOP_NPM} -DSRC=${CMAKE_SOURCE_DIR}/web -DWORK=${CMAKE_BINARY_DIR}/web
          -DOUT=${CMAKE_BINARY_DIR}/${KLOOP_INSTALL_REPORT_DIR} -P ${CMAKE_SOURCE_DIR}/cmake/NpmCi.cmake
  DEPENDS ${CMAKE_SOURCE_DIR}/web/package.json ${CMAKE_SOURCE_DIR}/web/package-lock.json
          ${CMAKE_SOURCE_DIR}/cmake/NpmCi.cmake
  COMMENT "npm ci: Chart.js for kloop report --html")
add_custom_target(kloop-report-assets ALL DEPENDS ${_kloop_npm_stamp})
add_dependencies(kloop kloop-report-assets)

install(TARGETS kloop RUNTIME DESTINATION bin)
# kloop optimize's search steps replay through this worker, which capture::findReplayWorker looks for
# beside kloop; without it every replayed step would fall back to workload runs.
if(TARGET kloop-replay)
  install(TARGETS kloop-replay RUNTIME DESTINATION bin)
endif()
install(DIRECTORY ${CMAKE_BINARY_DIR}/${KLOOP_INSTALL_REPORT_DIR}/ DESTINATION ${KLOOP_INSTALL_REPORT_DIR})
if(TARGET kloop-cupti)
  # The driver dlopens the library: it must find libcupti through its own RUNPATH once installed too.
  get_target_property(_kloop_cupti_rpath kloop-cupti BUILD_RPATH)
  set_target_properties(kloop-cupti PROPERTIES INSTALL_RPATH "${_kloop_cupti_rpath}")
  install(TARGETS kloop-cupti LIBRARY DESTINATION ${KLOOP_INSTALL_CUPTI_DIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/prompts/ DESTINATION ${KLOOP_INSTALL_PROMPTS_DIR})
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${KLOOP_INSTALL_DOC_DIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${KLOOP_INSTALL_DOC_DIR}/docs)

# ---- CPack: `cpack -G DEB` in the build directory ----------------------------------------------------
# Dependencies: what `ldd bin/kloop` lists outside libc/libstdc++ (docs/install.md lists the ldd output),
# plus the clang resource headers (lib/clang/22/include, from libclang-common-22-dev) that kloop passes
# to clang as -resource-dir for every parse (lib/Frontend). The CUDA toolkit (nvcc, libcupti) is not a
# Debian package; kloop finds it at run time (docs/install.md).
set(CPACK_PACKAGE_NAME "kloop")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "kloop maintainers <kloop@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CUDA kernel tuning loop on Clang LibTooling 22")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libllvm22, libclang-cpp22, libclang-common-22-dev, libcurl4 | libcurl4t64, libsqlite3-0, libstdc++6, libc6, libgcc-s1")
# gcc: nvcc's default host compiler, which kloop asks for its OpenMP macros and headers (lib/Frontend/HostCompiler.cpp).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gcc")
set(CPACK_GENERATOR "DEB")
include(CPack)
