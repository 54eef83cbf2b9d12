# cmake -DNPM=<npm or NOTFOUND> -DSRC=<web/> -DWORK=<build/web> -DOUT=<build/share/kloop/report> -P NpmCi.cmake
#
# The charting library of `kloop report --html` (docs/report.md): `npm ci` of web/package-lock.json in
# the build tree, then Chart.js's minified UMD file and its licence copied to OUT. Offline-tolerant:
# when npm is missing or `npm ci` fails, the build goes on, says so, and leaves OUT/MISSING.txt with
# the reason instead of the library; kloop report --html then refuses with that reason
# (kloop::optimize::findReportAssets). Nothing else of node_modules is installed.
set(LIB "${WORK}/node_modules/chart.js/dist/chart.umd.min.js")
set(LICENCE "${WORK}/node_modules/chart.js/LICENSE.md")
file(MAKE_DIRECTORY "${WORK}" "${OUT}")
file(REMOVE "${OUT}/chart.umd.min.js" "${OUT}/chart.js-LICENSE.md" "${OUT}/MISSING.txt")

function(give_up why)
  message(WARNING "kloop report --html will not work: ${why}")
  file(WRITE "${OUT}/MISSING.txt" "${why}\n")
endfunction()

if(NOT NPM OR NOT EXISTS "${NPM}")
  give_up("npm was not found when the build was configured, so the charting library (chart.js, web/package.json) was not installed; install npm (scripts/bootstrap.sh does) and configure and build again")
  return()
endif()
configure_file("${SRC}/package.json" "${WORK}/package.json" COPYONLY)
configure_file("${SRC}/package-lock.json" "${WORK}/package-lock.json" COPYONLY)
execute_process(
  COMMAND "${NPM}" ci --prefer-offline --ignore-scripts --omit=dev --no-audit --no-fund --fetch-retries=1
  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE RC OUTPUT_VARIABLE LOG ERROR_VARIABLE LOG)
if(NOT RC EQUAL 0 OR NOT EXISTS "${LIB}")
  # npm's own reason: its first "...Error: ..." line, else its first error line, else its last line.
  string(REGEX MATCH "npm (error|ERR!) [A-Za-z]*Error: [^\n]*" WHY "${LOG}")
  if(NOT WHY)
    string(REGEX MATCH "npm (error|ERR!) [^\n]*" WHY "${LOG}")
  endif()
  if(NOT WHY)
    string(REGEX REPLACE "\n+$" "" LOG "${LOG}")
    string(REGEX MATCH "[^\n]*$" WHY "${LOG}")
  endif()
  give_up("`npm ci` in ${WORK} failed (exit ${RC}: ${WHY}), so the charting library (chart.js) was not installed; build again where the npm registry or npm's cache is reachable")
  return()
endif()
# The page is opened without network: drop the source map reference (the map is not installed).
file(READ "${LIB}" TEXT)
string(REGEX REPLACE "\n//# sourceMappingURL=[^\n]*\n?$" "\n" TEXT "${TEXT}")
file(WRITE "${OUT}/chart.umd.min.js" "${TEXT}")
configure_file("${LICENCE}" "${OUT}/chart.js-LICENSE.md" COPYONLY)
file(TOUCH "${WORK}/npm-ci.stamp")
