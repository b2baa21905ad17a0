# The configuration the Debian package installs as /etc/latch/latch.conf:
# latch.conf, the documented sample, with the lines a service needs changed.
# Each change must find its line: the sample cannot drift away from it
# silently.
function(latch_packaged_conf source output)
  file(READ ${source} text)
  set(changes
    "dir ./|dir /var/lib/latch"
    "supervised no|supervised auto"
    "# unixsocket /run/latch/latch.sock|unixsocket /run/latch/latch.sock"
    "# unixsocketperm 770|unixsocketperm 770")
  foreach(change IN LISTS changes)
    string(REPLACE "|" ";" pair "${change}")
    list(GET pair 0 from)
    list(GET pair 1 to)
    string(FIND "${text}" "\n${from}\n" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "latch.conf has no line '${from}' for the packaged configuration")
    endif()
    string(REPLACE "\n${from}\n" "\n${to}\n" text "${text}")
  endforeach()
  string(PREPEND text "# /etc/latch/latch.conf: latch.conf of the source tree, with dir, supervised
# and unixsocket set for the service (/usr/lib/systemd/system/latch.service).
")
  file(WRITE ${output} "${text}")
endfunction()
