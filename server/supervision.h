// How latch-server lives under an init system, with redis.conf's settings:
//
//   daemonize yes        fork into the background at start (the parent exits
//                        0 at once; the child leaves the terminal, its stdio
//                        goes to /dev/null, so with no logfile nothing is
//                        logged anywhere, as with Redis)
//   pidfile PATH         the server's pid, written at start and removed at a
//                        clean exit (daemonize yes without one:
//                        /var/run/latch.pid, as Redis's /var/run/redis.pid)
//   supervised MODE      no | systemd | upstart | auto: tell the supervisor
//                        when the server accepts connections. systemd: the
//                        sd_notify protocol, a datagram "READY=1" (and
//                        "STATUS=…", "STOPPING=1") to the unix socket named
//                        by $NOTIFY_SOCKET — written here directly, so no
//                        libsystemd is needed; upstart: SIGSTOP to itself;
//                        auto: whichever the environment names. A supervised
//                        server never daemonizes (Type=notify wants the pid
//                        it started).
//
// The Debian package's unit (packaging/latch.service) runs the server with
// `--supervised systemd`, Type=notify.
#pragma once

#include <string>
#include <string_view>

namespace latch {

enum class SupervisedMode { kNo, kUpstart, kSystemd, kAuto };

namespace supervision {

// The supervisor in charge, once `mode` is resolved against the environment
// (auto: UPSTART_JOB, else NOTIFY_SOCKET). kNo when there is none; kAuto is
// never returned.
SupervisedMode Detect(SupervisedMode mode);

// The early part of a supervised or daemonized start, in main() before any
// thread exists: upstart gets its SIGSTOP; daemonize forks (unless
// supervised). Returns the supervisor in charge.
SupervisedMode Begin(SupervisedMode mode, bool daemonize);

// sd_notify(3)'s protocol: sends `state` (newline-separated assignments,
// "READY=1\nSTATUS=Ready to accept connections") as one datagram to the
// socket named by $NOTIFY_SOCKET (a path, or '@' for the abstract
// namespace). Returns false, having done nothing, without one.
bool NotifySystemd(std::string_view state);

// The pid file: written (with a warning on failure, as Redis) and removed.
void WritePidFile(const std::string& path);
void RemovePidFile(const std::string& path);

}  // namespace supervision
}  // namespace latch
