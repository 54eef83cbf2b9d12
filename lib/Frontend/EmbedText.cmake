# cmake -DIN=<text file> -DOUT=<.inc> -P EmbedText.cmake
# Writes IN's text as a C++ raw string literal (the body of a `R"kloop(...)kloop"`), so that
# the kloop binary carries the file and needs nothing beside it at run time.
file(READ "${IN}" TEXT)
string(FIND "${TEXT}" ")kloop\"" CLASH)
if(NOT CLASH EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string delimiter )kloop\"")
endif()
file(WRITE "${OUT}.tmp" "R\"kloop(${TEXT})kloop\"\n")
file(RENAME "${OUT}.tmp" "${OUT}")
