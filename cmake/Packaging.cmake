# Installing latch (`cmake --install build --prefix DIR`) and its Debian
# package (`cpack -G DEB` in the build directory).
#
#   bin/                  latch-server and every tool
#   lib/latch/            latch-chaos-slow-fsync.so (latch-chaos finds it there)
#   share/man/man1/       a page per program, made from its --help
#   share/doc/latch/      README.md, the guide, the test bench's manual, latch.conf
#   etc/latch/latch.conf  the configuration (with prefix /usr: /etc/latch)
#   var/lib/latch/        the service's data directory (with prefix /usr: /var/lib/latch)
#   lib/systemd/system/latch.service  (with prefix /usr only: the package's unit)
include(GNUInstallDirs)
include(${CMAKE_CURRENT_LIST_DIR}/PackagedConf.cmake)

set(LATCH_PROGRAMS latch-server latch-check-aof latch-redlock latch-chaos latch-fixture
  latch-demo latch-contention)
install(TARGETS ${LATCH_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS latch-chaos-slow-fsync LIBRARY DESTINATION lib/latch)

# Man pages from --help, built with the programs.
set(man_pages)
foreach(program IN LISTS LATCH_PROGRAMS)
  set(page ${CMAKE_BINARY_DIR}/man/${program}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program}
      -DVERSION=${PROJECT_VERSION} -DOUTPUT=${page} -P ${CMAKE_CURRENT_LIST_DIR}/HelpToMan.cmake
    DEPENDS ${program} ${CMAKE_CURRENT_LIST_DIR}/HelpToMan.cmake
    COMMENT "Man page of ${program}")
  list(APPEND man_pages ${page})
endforeach()
add_custom_target(latch-man-pages ALL DEPENDS ${man_pages})
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES README.md docs/guide.md docs/testbench.md docs/architecture.md latch.conf
  DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The service's configuration, unit and data directory: under the prefix, or,
# for prefix /usr (the package), where Debian keeps them. Decided when
# installing, so that `cmake --install build --prefix ~/.local` needs no root.
latch_packaged_conf(${PROJECT_SOURCE_DIR}/latch.conf ${CMAKE_BINARY_DIR}/packaging/latch.conf)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/latch.conf)
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(latch_etc /etc/latch)
    set(latch_state /var/lib/latch)
    file(INSTALL DESTINATION \${CMAKE_INSTALL_PREFIX}/lib/systemd/system TYPE FILE
      FILES ${PROJECT_SOURCE_DIR}/packaging/latch.service)
  else()
    set(latch_etc \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR}/latch)
    set(latch_state \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LOCALSTATEDIR}/lib/latch)
  endif()
  file(INSTALL DESTINATION \${latch_etc} TYPE FILE FILES ${CMAKE_BINARY_DIR}/packaging/latch.conf)
  file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${latch_state}\")
")

# ---- the Debian package
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME latch)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "latch maintainers <latch@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "lock server that speaks the Redis protocol")
set(CPACK_PACKAGE_DESCRIPTION
  "latch is a lock server that speaks the Redis protocol (RESP2/3): one event
loop, an append-only log in Redis's AOF format, a restart quarantine that
keeps RedLock safe when a node forgets its locks, fencing tokens and fair
waiting. The package holds latch-server as a systemd service (user latch,
data in /var/lib/latch, configuration in /etc/latch/latch.conf) and the
tools: latch-redlock, latch-fixture, latch-chaos, latch-check-aof,
latch-demo and latch-contention.")
# Installed as with --prefix /usr (whatever this build directory's prefix),
# staged with DESTDIR so that the absolute destinations (/etc/latch,
# /var/lib/latch) go into the package too.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
# No debugging information in the package's programs.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/conffiles
  ${PROJECT_SOURCE_DIR}/packaging/postinst
  ${PROJECT_SOURCE_DIR}/packaging/prerm
  ${PROJECT_SOURCE_DIR}/packaging/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
