# Turns a program's --help (laid out as a man page: NAME, SYNOPSIS, … in
# capitals at the start of a line, the text indented by four spaces; see
# tools/cli/options.h) into a man page in roff.
#
#   cmake -DPROGRAM=path/to/latch-fixture -DNAME=latch-fixture -DVERSION=0.1.0
#         -DOUTPUT=latch-fixture.1 -P HelpToMan.cmake
execute_process(COMMAND ${PROGRAM} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --help exited ${rc}")
endif()
string(TOUPPER "${NAME}" upper)
set(out ".TH ${upper} 1 \"\" \"latch ${VERSION}\" \"latch manual\"\n")
string(REPLACE "\\" "\\\\" help "${help}")
# CMake lists group by square brackets and split on ';': hide both first.
string(REPLACE ";" "@SEMICOLON@" help "${help}")
string(REPLACE "[" "@LBRACKET@" help "${help}")
string(REPLACE "]" "@RBRACKET@" help "${help}")
string(REPLACE "\n" ";" lines "${help}")
set(in_section FALSE)
foreach(line IN LISTS lines)
  if(line MATCHES "^[A-Z][A-Z ]+$")
    if(in_section)
      string(APPEND out ".fi\n")
    endif()
    string(APPEND out ".SH ${line}\n.nf\n")
    set(in_section TRUE)
  else()
    string(REGEX REPLACE "^    " "" line "${line}")
    # roff control characters at the start of a line
    if(line MATCHES "^[.']")
      set(line "\\&${line}")
    endif()
    string(APPEND out "${line}\n")
  endif()
endforeach()
if(in_section)
  string(APPEND out ".fi\n")
endif()
string(REPLACE "@SEMICOLON@" ";" out "${out}")
string(REPLACE "@LBRACKET@" "[" out "${out}")
string(REPLACE "@RBRACKET@" "]" out "${out}")
file(WRITE ${OUTPUT} "${out}")
