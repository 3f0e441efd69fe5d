//! The sandbox path: the executor re-executes the built skillpipe binary as `__launch`, which
//! sets up network/PID namespaces and Landlock, and runs the command under its PID-1 init.
//! Needs Linux with user namespaces and Landlock ABI >= 3; tests say so and skip otherwise.

use crate::common;

use common::procs::{alive, eventually, read_pid};
use skillpipe::exec::{ExecError, RunSpec, run, run_with_capabilities};
use skillpipe::sandbox::{self, Capabilities, Enforced, SandboxSpec, Support};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
const BIN: &str = env!("CARGO_BIN_EXE_skillpipe");

/// Whether this machine can run the sandbox at all (prints why not).
fn sandbox_available() -> bool {
    sandbox::set_launcher(BIN);
    let caps = sandbox::probe();
    let ok =
        caps.network_namespace.is_yes() && caps.landlock.is_yes() && caps.pid_namespace.is_yes();
    if !ok {
        eprintln!("skipping: this machine cannot sandbox: {caps:?}");
    }
    ok
}

fn locked_down() -> SandboxSpec {
    let mut s = SandboxSpec::default();
    s.isolate_network = true;
    s.restrict_filesystem = true;
    s.required = true;
    s
}

fn bash(script: &str, args: &[&str]) -> RunSpec {
    let mut all: Vec<OsString> = vec!["-c".into(), script.into(), "bash".into()];
    all.extend(args.iter().map(OsString::from));
    let mut spec = RunSpec::new("bash", all);
    spec.cwd = std::env::temp_dir();
    spec.env = vec![("PATH".into(), PATH.into())];
    spec.timeout = Duration::from_secs(20);
    spec.sandbox = locked_down();
    spec
}

/// Shell snippet: write this process's pid *as the host sees it* (inside a PID namespace `$$`
/// is the namespace's number; /proc is the host's) to "$1".
const HOST_PID_TO_1: &str = "read -r p _ < /proc/self/stat; echo $p > \"$1\"";

#[tokio::test]
async fn echo_round_trip_under_every_restriction() {
    if !sandbox_available() {
        return;
    }
    let r = run(bash("echo hello; echo $$", &[])).await.unwrap();
    assert_eq!(r.exit_code, 0, "{}", String::from_utf8_lossy(&r.stderr));
    let mut all_three = Enforced::default();
    all_three.network = true;
    all_three.filesystem = true;
    all_three.pids = true;
    assert_eq!(r.enforced, all_three);
    // PID 1 is skillpipe's init; the command is its first child.
    assert_eq!(r.stdout, b"hello\n2\n");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[tokio::test]
async fn stdin_and_environment_pass_through_the_launcher() {
    if !sandbox_available() {
        return;
    }
    let mut s = bash("cat; echo; env | cut -d= -f1 | sort | tr '\\n' ' '", &[]);
    s.stdin = Some(br#"{"a":1}"#.to_vec());
    s.env.push(("SKILL_NAME".into(), "demo".into()));
    let r = run(s).await.unwrap();
    let out = String::from_utf8(r.stdout).unwrap();
    // bash adds PWD, SHLVL and _ itself.
    assert_eq!(out, "{\"a\":1}\nPATH PWD SHLVL SKILL_NAME TMPDIR _ ");
}

#[tokio::test]
async fn exit_code_comes_through_the_init() {
    if !sandbox_available() {
        return;
    }
    let r = run(bash("exit 42", &[])).await.unwrap();
    assert_eq!(r.exit_code, 42);
    assert!(r.signal.is_none());
}

#[tokio::test]
async fn sigsegv_comes_through_the_init() {
    if !sandbox_available() {
        return;
    }
    let r = run(bash("kill -SEGV $$", &[])).await.unwrap();
    assert_eq!(r.exit_code, -11);
    assert_eq!(r.signal.as_deref(), Some("SIGSEGV"));
    assert!(
        String::from_utf8(r.stderr)
            .unwrap()
            .ends_with("Signal: SIGSEGV")
    );
}

#[tokio::test]
async fn timeout_kills_even_a_grandchild_that_called_setsid() {
    if !sandbox_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (plain, detached) = (dir.path().join("plain"), dir.path().join("detached"));
    let script = format!(
        "bash -c '{HOST_PID_TO_1}; exec sleep 30' _ \"$1\" & \
         setsid bash -c '{HOST_PID_TO_1}; exec sleep 30' _ \"$2\" & \
         sleep 30"
    );
    let mut s = bash(
        &script,
        &[plain.to_str().unwrap(), detached.to_str().unwrap()],
    );
    s.sandbox.writable.push(dir.path().to_path_buf());
    s.timeout = Duration::from_secs(1);
    let r = run(s).await.unwrap();
    assert_eq!(r.exit_code, 124);
    assert!(r.timed_out);
    assert!(String::from_utf8(r.stderr).unwrap().ends_with("Timeout"));
    for f in [&plain, &detached] {
        let pid = read_pid(f).unwrap_or_else(|| panic!("{} not written", f.display()));
        assert!(
            eventually(|| !alive(pid)),
            "{} ({pid}) survived",
            f.display()
        );
    }
}

#[tokio::test]
async fn a_term_ignoring_command_is_killed_after_the_grace() {
    if !sandbox_available() {
        return;
    }
    let mut s = bash("trap '' TERM; echo ready; sleep 30", &[]);
    s.timeout = Duration::from_millis(500);
    let r = run(s).await.unwrap();
    assert_eq!(r.exit_code, 124);
    assert_eq!(r.stdout, b"ready\n");
    assert!(String::from_utf8(r.stderr).unwrap().ends_with("Timeout"));
}

#[tokio::test]
async fn a_detached_background_process_dies_with_the_command() {
    if !sandbox_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("bg");
    let script = format!(
        "setsid bash -c '{HOST_PID_TO_1}; exec sleep 30' _ \"$1\" >/dev/null 2>&1 & \
         while [ ! -s \"$1\" ]; do sleep 0.01; done"
    );
    let mut s = bash(&script, &[pidfile.to_str().unwrap()]);
    s.sandbox.writable.push(dir.path().to_path_buf());
    let r = run(s).await.unwrap();
    assert_eq!(r.exit_code, 0, "{}", String::from_utf8_lossy(&r.stderr));
    let pid = read_pid(&pidfile).unwrap();
    assert!(!alive(pid), "{pid} outlived the command's namespace");
}

#[tokio::test]
async fn dropping_the_future_kills_the_namespace() {
    if !sandbox_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("bg");
    let script = format!("setsid bash -c '{HOST_PID_TO_1}; exec sleep 30' _ \"$1\" & sleep 30");
    let mut s = bash(&script, &[pidfile.to_str().unwrap()]);
    s.sandbox.writable.push(dir.path().to_path_buf());
    let started = async {
        while read_pid(&pidfile).is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        r = run(s) => panic!("finished early: {r:?}"),
        _ = started => {}
    }
    let pid = read_pid(&pidfile).unwrap();
    assert!(eventually(|| !alive(pid)), "{pid} survived the cancel");
}

#[tokio::test]
async fn network_isolation_blocks_a_local_port_and_allowing_it_works() {
    if !sandbox_available() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let connect = "exec 3<>/dev/tcp/127.0.0.1/$1 && echo connected";

    let r = run(bash(connect, &[&port])).await.unwrap();
    assert_ne!(r.exit_code, 0);
    assert!(r.stdout.is_empty());
    assert!(r.enforced.network);

    let mut s = bash(connect, &[&port]);
    s.sandbox.isolate_network = false;
    let r = run(s).await.unwrap();
    assert_eq!(
        r.stdout,
        b"connected\n",
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(!r.enforced.network && r.enforced.filesystem);
}

#[tokio::test]
async fn writes_are_confined_to_tmpdir_and_writable_paths() {
    if !sandbox_available() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let script = "echo x > \"$1/f\" && echo home-written; \
                  echo y > \"$TMPDIR/f\" && echo tmp-written; \
                  echo z > \"$2/f\" && echo extra-written; \
                  echo w > /dev/null && echo null-written; \
                  touch \"$1/g\" 2>/dev/null || echo touch-denied; \
                  cat /etc/hostname >/dev/null && echo read-ok";
    let args = [
        home.path().to_str().unwrap(),
        extra.path().to_str().unwrap(),
    ];
    let mut s = bash(script, &args);
    s.sandbox.writable.push(extra.path().to_path_buf());
    let r = run(s).await.unwrap();
    let out = String::from_utf8(r.stdout).unwrap();
    assert_eq!(
        out,
        "tmp-written\nextra-written\nnull-written\ntouch-denied\nread-ok\n"
    );
    assert!(
        String::from_utf8(r.stderr)
            .unwrap()
            .contains("Permission denied")
    );
    assert!(!home.path().join("f").exists());

    // Allowed: the same write succeeds.
    let mut s = bash(script, &args);
    s.sandbox.restrict_filesystem = false;
    let r = run(s).await.unwrap();
    assert!(
        String::from_utf8(r.stdout)
            .unwrap()
            .starts_with("home-written\n")
    );
}

#[tokio::test]
async fn truncating_a_protected_file_is_denied() {
    if !sandbox_available() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("keep");
    std::fs::write(&file, "precious").unwrap();
    let r = run(bash("truncate -s 0 \"$1\"", &[file.to_str().unwrap()]))
        .await
        .unwrap();
    assert_ne!(r.exit_code, 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
}

fn caps_without_landlock() -> Capabilities {
    let mut caps = sandbox::probe();
    caps.landlock = Support::No("simulated: no Landlock here".into());
    caps
}

#[tokio::test]
async fn required_refuses_when_a_restriction_is_missing() {
    if !sandbox_available() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let err = run_with_capabilities(
        bash("echo x > \"$1/f\"", &[home.path().to_str().unwrap()]),
        &caps_without_landlock(),
    )
    .await
    .unwrap_err();
    let ExecError::Sandbox(what) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        what.to_string(),
        "filesystem restriction: simulated: no Landlock here"
    );
    assert!(err.to_string().contains("best-effort"));
    assert!(!home.path().join("f").exists(), "nothing ran");
}

#[tokio::test]
async fn best_effort_runs_with_a_warning() {
    if !sandbox_available() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let mut s = bash("echo x > \"$1/f\"", &[home.path().to_str().unwrap()]);
    s.sandbox.required = false;
    let r = run_with_capabilities(s, &caps_without_landlock())
        .await
        .unwrap();
    assert_eq!(r.exit_code, 0);
    assert!(home.path().join("f").exists(), "not restricted");
    assert!(r.enforced.network && !r.enforced.filesystem);
    assert_eq!(
        r.warnings,
        ["sandbox not enforced: filesystem restriction: simulated: no Landlock here"]
    );
}

#[test]
fn launcher_mirrors_exit_codes_and_signals() {
    if !sandbox_available() {
        return;
    }
    let launch = |script: &str| {
        common::spawn::skillpipe_cmd()
            .args(["__launch", "--net", "--pid", "--userns", "--fs", "--"])
            .args(["/bin/sh", "-c", script])
            .output()
            .unwrap()
    };
    let out = launch("exit 7");
    assert_eq!(out.status.code(), Some(7));
    assert!(String::from_utf8_lossy(&out.stderr).contains("enforced: network,filesystem,pids"));
    let out = launch("kill -SEGV $$");
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV));
    let out = launch("kill -TERM $$");
    assert_eq!(out.status.signal(), Some(libc::SIGTERM));
}

#[test]
fn launcher_refuses_to_run_without_a_command() {
    common::spawn::skillpipe_cmd()
        .args(["__launch", "--net"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("no command given"));
}

#[test]
fn launcher_works_for_an_unprivileged_user() {
    // SAFETY: cannot fail.
    if unsafe { libc::geteuid() } != 0 || !sandbox_available() {
        return; // not root: every other test here already runs unprivileged
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let writable = dir.path().to_str().unwrap();
    let mut cmd = common::spawn::skillpipe();
    std::os::unix::process::CommandExt::uid(&mut cmd, 65534);
    std::os::unix::process::CommandExt::gid(&mut cmd, 65534);
    let out = cmd
        .args([
            "__launch",
            "--net",
            "--pid",
            "--userns",
            "--fs",
            "--writable",
            writable,
            "--",
        ])
        .args([
            "/bin/sh",
            "-c",
            "id -u; echo ok > \"$0/f\"; echo $$",
            writable,
        ])
        .current_dir("/")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("Permission denied") && !dir.path().join("f").exists() {
        eprintln!("skipping: {BIN} is not usable by uid 65534 here: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "65534\n2\n");
    assert!(
        stderr.contains("enforced: network,filesystem,pids"),
        "{stderr}"
    );
    assert!(dir.path().join("f").exists());
}

#[test]
fn doctor_reports_what_is_enforceable_and_honours_the_override() {
    common::spawn::skillpipe_cmd()
        // A model on this machine needs no key: the exit status is the sandbox part's.
        .args([
            "doctor",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ])
        .env(sandbox::UNAVAILABLE_ENV, "landlock")
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "filesystem (Landlock)  NO — disabled by SKILLPIPE_SANDBOX_UNAVAILABLE",
        ))
        .stdout(predicates::str::contains("skills search path"))
        .stdout(predicates::str::contains("audit log"));
}

/// Runs `cmd` as the leader of a new session whose controlling terminal is a fresh pty (stdin
/// closed, stdout and stderr on the pty) and returns what it printed.
fn on_a_terminal(mut cmd: std::process::Command) -> String {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: valid out-pointers; default name, termios and size.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: fresh descriptors from openpty, owned from here on; close-on-exec so concurrent
    // tests' children do not inherit them.
    let (master, slave) = unsafe {
        libc::fcntl(master, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(slave, libc::F_SETFD, libc::FD_CLOEXEC);
        (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    };
    cmd.stdin(std::process::Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    // SAFETY: setsid and ioctl are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 || libc::ioctl(1, libc::TIOCSCTTY as _, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(cmd); // our copies of the slave side
    let mut out = Vec::new();
    // Ends with EIO once every copy of the slave side is closed.
    let _ = std::fs::File::from(master).read_to_end(&mut out);
    child.wait().unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_sandboxed_command_cannot_type_into_the_terminal() {
    if !sandbox_available() {
        return;
    }
    let probe = "import fcntl, os, termios\n\
                 fd = os.open('/dev/tty', os.O_RDONLY)\n\
                 try:\n    fcntl.ioctl(fd, termios.TIOCSTI, b'#')\n    print('INJECTED')\n\
                 except OSError as e:\n    print('REFUSED', e.errno)\n";
    let direct = {
        let mut c = std::process::Command::new("python3");
        c.args(["-c", probe]);
        on_a_terminal(c)
    };
    if !direct.contains("INJECTED") {
        eprintln!("skipping: this kernel refuses TIOCSTI anyway: {direct}");
        return;
    }
    let mut c = std::process::Command::new(BIN);
    c.args(["__launch", "--net", "--pid", "--userns", "--fs", "--"])
        .args(["/usr/bin/env", "python3", "-c", probe]);
    let sandboxed = on_a_terminal(c);
    assert!(
        sandboxed.contains(&format!("REFUSED {}", libc::EPERM)),
        "{sandboxed}"
    );
    assert!(
        sandboxed.contains("enforced: network,filesystem,pids"),
        "{sandboxed}"
    );
}
