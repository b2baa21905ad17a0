"""The Debian package: built with CPack from this build directory, inspected
(control fields, maintainer scripts, conffiles, contents), then unpacked
into a temporary directory with dpkg-deb -x — never installed on this
machine — and run from there: its latch-server starts from its own
/etc/latch/latch.conf (the port, data directory and socket moved into the
test's directory), tells a stand-in for systemd READY=1 on $NOTIFY_SOCKET,
serves on TCP and on the unix socket, and says STOPPING=1 at a clean stop.
The service unit is checked for what the README promises of it."""

import configparser
import os
import re
import shutil
import socket
import stat
import subprocess
import time

import pytest

import latchtest as lt

PROGRAMS = ["latch-server", "latch-check-aof", "latch-redlock", "latch-chaos", "latch-fixture",
            "latch-demo", "latch-contention"]


def project_version():
    with open(os.path.join(lt.source_dir(), "CMakeLists.txt")) as f:
        return re.search(r"project\(latch VERSION ([0-9.]+)", f.read()).group(1)


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    if shutil.which("cpack") is None or shutil.which("dpkg-deb") is None:
        pytest.fail("cpack and dpkg-deb are needed (tools/dev/deps.sh test installs dpkg-dev)")
    out = tmp_path_factory.mktemp("deb")
    # As the README says, from the build directory; the package lands in -B.
    p = subprocess.run(["cpack", "-G", "DEB", "-B", str(out)], cwd=lt.build_dir(),
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    path = out / ("latch_%s_%s.deb" % (project_version(), arch))
    assert path.exists(), os.listdir(str(out))
    return path


@pytest.fixture(scope="module")
def unpacked(deb, tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=120)
    control = tmp_path_factory.mktemp("control")
    subprocess.run(["dpkg-deb", "-e", str(deb), str(control)], check=True, timeout=120)
    return root, control


def test_control_fields(deb):
    info = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True,
                          check=True).stdout
    fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", info, re.M))
    assert fields["Package"] == "latch"
    assert fields["Version"] == project_version()
    depends = fields["Depends"]
    # The shared libraries the programs link (found by dpkg-shlibdeps) and adduser.
    for lib in ("libuv1", "libspdlog", "libstdc++6", "adduser"):
        assert lib in depends, depends


def test_contents(unpacked):
    root, control = unpacked
    for program in PROGRAMS:
        path = root / "usr" / "bin" / program
        assert path.exists() and os.access(str(path), os.X_OK), program
        assert (root / "usr" / "share" / "man" / "man1" / (program + ".1")).exists() or \
            (root / "usr" / "share" / "man" / "man1" / (program + ".1.gz")).exists()
    assert (root / "usr" / "lib" / "latch" / "latch-chaos-slow-fsync.so").exists()
    assert (root / "etc" / "latch" / "latch.conf").exists()
    assert (root / "usr" / "lib" / "systemd" / "system" / "latch.service").exists()
    assert (root / "var" / "lib" / "latch").is_dir()
    assert (root / "usr" / "share" / "doc" / "latch" / "README.md").exists()
    assert (control / "conffiles").read_text().split() == ["/etc/latch/latch.conf"]
    for script in ("postinst", "prerm", "postrm"):
        mode = (control / script).stat().st_mode
        assert mode & stat.S_IXUSR, script
    postinst = (control / "postinst").read_text()
    # Its own user, owning the data directory.
    assert "adduser --system --group --home /var/lib/latch" in postinst
    assert "chown latch:latch /var/lib/latch" in postinst


def test_every_program_runs_unpacked(unpacked):
    root, _ = unpacked
    for program in PROGRAMS:
        p = subprocess.run([str(root / "usr" / "bin" / program), "--version"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, (program, p.stderr)
        assert p.stdout.splitlines()[0] == "%s (latch) %s" % (program, project_version())


def test_the_installed_configuration(unpacked):
    root, _ = unpacked
    conf = (root / "etc" / "latch" / "latch.conf").read_text()
    with open(os.path.join(lt.source_dir(), "latch.conf")) as f:
        sample = f.read()
    # The sample, with only the service's lines changed.
    changed = set(conf.splitlines()) - set(sample.splitlines())
    assert changed == {"dir /var/lib/latch", "supervised auto",
                       "unixsocket /run/latch/latch.sock", "unixsocketperm 770",
                       "# /etc/latch/latch.conf: latch.conf of the source tree, with dir, "
                       "supervised", "# and unixsocket set for the service "
                       "(/usr/lib/systemd/system/latch.service)."}, changed
    assert "\nmaxmemory-policy noeviction\n" in conf
    assert "\nappendonly yes\n" in conf


def test_the_service_unit(unpacked):
    root, _ = unpacked
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(str(root / "usr" / "lib" / "systemd" / "system" / "latch.service"))
    service = unit["Service"]
    assert service["Type"] == "notify"
    assert service["User"] == "latch" and service["Group"] == "latch"
    exec_start = service["ExecStart"].split()
    assert exec_start[:2] == ["/usr/bin/latch-server", "/etc/latch/latch.conf"]
    assert (root / exec_start[0].lstrip("/")).exists()
    assert "--supervised" in exec_start and "systemd" in exec_start
    # The data directory persists (the quarantine's record lives there).
    assert service["StateDirectory"] == "latch"
    assert service["WorkingDirectory"] == "/var/lib/latch"
    assert service["RuntimeDirectory"] == "latch"
    # Restarted after a failure, not after a clean stop; a clean stop (the
    # log synced, no quarantine next time) gets the time it needs.
    assert service["Restart"] == "on-failure"
    assert service["KillSignal"] == "SIGTERM"
    assert re.match(r"\d+min$", service["TimeoutStopSec"])
    assert int(service["LimitNOFILE"]) >= 10000 + 32
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    if shutil.which("systemd-analyze"):
        # The unit's syntax, as systemd reads it (not whether its paths exist
        # on this machine: the package is not installed).
        p = subprocess.run(["systemd-analyze", "verify", "--man=no",
                            str(root / "usr" / "lib" / "systemd" / "system" / "latch.service")],
                           capture_output=True, text=True, timeout=60)
        bad = [l for l in (p.stdout + p.stderr).splitlines()
               if "Unknown key" in l or "Unknown section" in l or "Invalid" in l]
        assert not bad, bad


def _notify_socket(tmp_path):
    path = str(tmp_path / "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(30)
    return s, path


def test_the_unpacked_server_starts_from_its_configuration(unpacked, tmp_path):
    root, _ = unpacked
    notify, notify_path = _notify_socket(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    sock = str(tmp_path / "latch.sock")
    port = lt.free_port()
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    # The package's command line (latch.service's ExecStart), with what
    # belongs to the machine (port, /var/lib/latch, /run/latch) moved here.
    p = subprocess.Popen([str(root / "usr" / "bin" / "latch-server"),
                          str(root / "etc" / "latch" / "latch.conf"), "--supervised", "systemd",
                          "--daemonize", "no", "--port", str(port), "--dir", str(data),
                          "--unixsocket", sock], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        ready = notify.recv(4096).decode()
        assert "READY=1" in ready.split("\n"), ready
        assert "STATUS=Ready to accept connections" in ready
        with lt.Conn(port) as c:
            assert c.cmd("PING") == b"PONG"
            assert c.cmd("CONFIG", "GET", "supervised") == [b"supervised", b"systemd"]
            assert c.cmd("CONFIG", "GET", "maxmemory-policy") == [b"maxmemory-policy",
                                                                  b"noeviction"]
            assert c.cmd("CONFIG", "GET", "appendonly") == [b"appendonly", b"yes"]
            assert c.cmd("SET", "lock:a", "tok", "NX", "PX", "60000") == b"OK"
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o770
        u = socket.socket(socket.AF_UNIX)
        u.connect(sock)
        u.sendall(b"GET lock:a\r\n")
        assert u.recv(100) == b"$3\r\ntok\r\n"
        u.close()
        p.terminate()  # systemctl stop: SIGTERM, a clean shutdown
        assert p.wait(timeout=30) == 0
        assert notify.recv(4096).decode().strip() == "STOPPING=1"
        assert not os.path.exists(sock)
        assert (data / "latch.aof").exists() and (data / "latch.state").exists()
    finally:
        if p.poll() is None:
            p.kill()
        out = p.communicate(timeout=30)[0].decode(errors="replace")
        notify.close()
    assert "Supervised by systemd" in out


def test_a_quarantined_start_is_ready_and_says_so(unpacked, tmp_path):
    """After a power loss that may have lost locks, the node is ready (it
    serves reads and releases) and its status line says how long it grants
    nothing: systemd does not wait for the quarantine, nor time out on it."""
    root, _ = unpacked
    data = tmp_path / "data"
    data.mkdir()
    server = str(root / "usr" / "bin" / "latch-server")
    conf = str(root / "etc" / "latch" / "latch.conf")
    port = lt.free_port()
    base = [server, conf, "--port", str(port), "--dir", str(data), "--unixsocket", "",
            "--appendfsync", "everysec", "--enable-debug-command", "yes"]
    first = subprocess.Popen(base + ["--supervised", "no"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        assert lt.wait_for(lambda: _pong(port), 20)
        with lt.Conn(port) as c:
            # A slow disk: the lock's record is not yet fsynced when the
            # power goes (a process crash alone loses nothing on the same
            # boot, and is not quarantined).
            assert c.cmd("DEBUG", "FAULT-IO", "log-fsync", 5000) == b"OK"
            assert c.cmd("SET", "lock:a", "tok", "NX", "PX", "60000") == b"OK"
            c.send(lt.encode("DEBUG", "POWERLOSS"))
            c.read_until_close(timeout=10)
    finally:
        first.kill()
        first.wait(timeout=10)
    notify, notify_path = _notify_socket(tmp_path)
    second = subprocess.Popen(base + ["--supervised", "auto"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env=dict(os.environ, NOTIFY_SOCKET=notify_path))
    try:
        ready = notify.recv(4096).decode()
        assert "READY=1" in ready.split("\n")
        assert re.search(r"STATUS=Ready to accept connections; restart quarantine: no lock granted "
                         r"for another \d+ ms", ready), ready
    finally:
        second.terminate()
        second.wait(timeout=30)
        notify.close()


def _pong(port):
    try:
        with lt.Conn(port, timeout=1) as c:
            return c.cmd("PING") == b"PONG"
    except OSError:
        return False
