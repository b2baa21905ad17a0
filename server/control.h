// What administrative commands may ask of the server around the loop.
//
// Data commands need only their CommandContext (arguments, session, Store,
// clocks, reply). CONFIG, INFO, CLIENT, MONITOR, WATCH, SHUTDOWN,
// BGREWRITEAOF and DEBUG also reach this small interface: the server
// implements it, and the unit tests' in-process server too.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/clock.h"
#include "server/config.h"
#include "server/stats.h"

namespace latch {

class Faults;
class Session;
class WatchRegistry;

class ServerControl {
 public:
  virtual ~ServerControl() = default;

  virtual const Config& config() const = 0;
  // CONFIG SET: installs `updated` and runs the hooks of `effects` (see
  // ConfigEffect). All or nothing: on failure the old values stay and the
  // reason is returned.
  virtual std::optional<std::string> Reconfigure(const Config& updated, uint32_t effects) = 0;

  virtual Stats& stats() = 0;
  virtual const Clock& clock() const = 0;
  // DEBUG WALLCLOCK: the wall clock runs `ms` away from the real one.
  virtual bool SetWallOffsetMs(int64_t ms) = 0;
  // Every open session, newest first.
  virtual void ForEachSession(const std::function<void(Session&)>& f) = 0;
  virtual WatchRegistry& watches() = 0;
  virtual void AddMonitor(Session& s) = 0;

  virtual void RequestShutdown() = 0;
  // BGREWRITEAOF: nullopt when started (or deferred to the end of the
  // transaction in progress), else why not.
  virtual std::optional<std::string> StartRewrite(const TimeSnapshot& now) = 0;
  // DEBUG POWERLOSS: cut the log to what was fsynced and exit at once.
  [[noreturn]] virtual void SimulatePowerLoss() = 0;

  // The test bench's faults (server/faults.h): FAULT's state.
  virtual Faults& faults() = 0;

  // The INFO text for these sections (lower case; empty: the default set).
  virtual std::string Info(const std::vector<std::string>& sections, const TimeSnapshot& now) = 0;
};

}  // namespace latch
