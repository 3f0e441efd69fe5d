//! The executor without restrictions (the fast path): real processes, real pipes, real signals.

use crate::common;

use common::procs::{alive, eventually, read_pid};
use skillpipe::exec::{ExecError, RunSpec, run};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn spec(program: &str, args: &[&str]) -> RunSpec {
    let mut spec = RunSpec::new(program, args.iter().map(OsString::from));
    spec.cwd = std::env::temp_dir();
    spec.env = vec![("PATH".into(), PATH.into())];
    spec.timeout = Duration::from_secs(20);
    spec
}

fn bash(script: &str, args: &[&str]) -> RunSpec {
    let mut all = vec!["-c", script, "bash"];
    all.extend_from_slice(args);
    spec("bash", &all)
}

#[tokio::test]
async fn echo_round_trip() {
    let r = run(spec("echo", &["hello", "world"])).await.unwrap();
    assert!(r.success());
    assert_eq!(r.exit_code, 0);
    assert_eq!(r.stdout, b"hello world\n");
    assert!(r.stderr.is_empty());
    assert!(r.signal.is_none());
    assert!(!r.truncated_stdout && !r.truncated_stderr && !r.timed_out);
}

#[tokio::test]
async fn arguments_are_never_interpreted_by_a_shell() {
    let r = run(spec("printf", &["%s|", "$HOME", "a b", ";", "*", "`id`"]))
        .await
        .unwrap();
    assert_eq!(r.stdout, b"$HOME|a b|;|*|`id`|");
}

#[tokio::test]
async fn exit_codes_come_through() {
    let r = run(bash("echo oops >&2; exit 3", &[])).await.unwrap();
    assert_eq!(r.exit_code, 3);
    assert!(!r.success());
    assert_eq!(r.stderr, b"oops\n");
}

#[tokio::test]
async fn environment_is_exactly_the_spec_plus_tmpdir() {
    // Whatever the test process has (HOME, CARGO_*, ...), the command gets only these.
    let mut s = spec("env", &[]);
    s.env.push(("SKILL_NAME".into(), "demo".into()));
    s.env.push(("TMPDIR".into(), "/should/be/replaced".into()));
    let r = run(s).await.unwrap();
    let out = String::from_utf8(r.stdout).unwrap();
    let mut names: Vec<&str> = out.lines().filter_map(|l| l.split('=').next()).collect();
    names.sort();
    assert_eq!(names, ["PATH", "SKILL_NAME", "TMPDIR"], "{out}");
    assert!(out.contains("SKILL_NAME=demo\n"));
    assert!(!out.contains("/should/be/replaced"));
}

#[tokio::test]
async fn tmpdir_is_fresh_writable_and_removed_afterwards() {
    let r = run(bash(
        "echo data > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && echo \"$TMPDIR\"",
        &[],
    ))
    .await
    .unwrap();
    let out = String::from_utf8(r.stdout).unwrap();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("data"));
    let tmp = lines.next().unwrap();
    assert!(!Path::new(tmp).exists(), "{tmp} should be removed");
}

#[tokio::test]
async fn stdin_json_round_trip() {
    let input = serde_json::json!({"word": "héllo", "n": [1, 2, 3]});
    let mut s = spec("cat", &[]);
    s.stdin = Some(serde_json::to_vec(&input).unwrap());
    let r = run(s).await.unwrap();
    let back: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(back, input);
}

#[tokio::test]
async fn stdin_is_closed_when_not_given() {
    // `cat` would hang on an open stdin; the timeout would catch it.
    let mut s = spec("cat", &[]);
    s.timeout = Duration::from_secs(5);
    let r = run(s).await.unwrap();
    assert!(!r.timed_out);
    assert!(r.stdout.is_empty());
}

#[tokio::test]
async fn large_input_that_is_never_read_does_not_block() {
    let mut s = spec("true", &[]);
    s.stdin = Some(vec![b'x'; 4 << 20]);
    let r = run(s).await.unwrap();
    assert_eq!(r.exit_code, 0);
}

#[tokio::test]
async fn twenty_megabytes_of_output_are_capped() {
    let mut s = bash(
        "head -c 20971520 /dev/zero; head -c 20971520 /dev/zero >&2; echo done >&2",
        &[],
    );
    s.max_output_bytes = 1 << 20;
    let r = run(s).await.unwrap();
    assert_eq!(r.exit_code, 0, "the command ran to its end");
    assert_eq!(r.stdout.len(), 1 << 20);
    assert_eq!(r.stderr.len(), 1 << 20);
    assert!(r.truncated_stdout && r.truncated_stderr);
}

#[tokio::test]
async fn output_under_the_cap_is_not_flagged() {
    let mut s = spec("echo", &["12345"]);
    s.max_output_bytes = 6;
    let r = run(s).await.unwrap();
    assert_eq!(r.stdout, b"12345\n");
    assert!(!r.truncated_stdout);
}

#[tokio::test]
async fn killed_by_a_signal() {
    let r = run(bash("echo before >&2; kill -SEGV $$", &[]))
        .await
        .unwrap();
    assert_eq!(r.exit_code, -11);
    assert_eq!(r.signal.as_deref(), Some("SIGSEGV"));
    assert!(!r.success());
    let err = String::from_utf8(r.stderr).unwrap();
    assert!(err.starts_with("before\n"), "{err}");
    assert!(err.ends_with("\nSignal: SIGSEGV"), "{err}");
}

#[tokio::test]
async fn timeout_kills_the_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild");
    let mut s = bash(
        "sleep 30 & echo $! > \"$1\"; echo started; sleep 30",
        &[pidfile.to_str().unwrap()],
    );
    s.timeout = Duration::from_secs(1);
    let r = run(s).await.unwrap();
    assert!(r.timed_out);
    assert_eq!(r.exit_code, 124);
    assert!(r.signal.is_none());
    assert_eq!(r.stdout, b"started\n");
    assert!(String::from_utf8(r.stderr).unwrap().ends_with("Timeout"));
    let pid = read_pid(&pidfile).expect("grandchild pid");
    assert!(eventually(|| !alive(pid)), "grandchild {pid} survived");
}

#[tokio::test]
async fn a_term_ignoring_command_is_killed_after_the_grace() {
    let mut s = bash("trap '' TERM; echo ready; sleep 30", &[]);
    s.timeout = Duration::from_millis(500);
    let r = run(s).await.unwrap();
    assert_eq!(r.exit_code, 124);
    assert_eq!(r.stdout, b"ready\n");
}

#[tokio::test]
async fn background_jobs_die_with_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("bg");
    let r = run(bash(
        "sleep 30 >/dev/null 2>&1 & echo $! > \"$1\"",
        &[pidfile.to_str().unwrap()],
    ))
    .await
    .unwrap();
    assert_eq!(r.exit_code, 0);
    let pid = read_pid(&pidfile).unwrap();
    assert!(eventually(|| !alive(pid)), "background job {pid} survived");
}

#[tokio::test]
async fn missing_program_is_not_found() {
    let err = run(spec("no-such-command-xyz", &[])).await.unwrap_err();
    assert!(matches!(err, ExecError::NotFound { ref program } if program == "no-such-command-xyz"));
    assert_eq!(err.to_string(), "command not found: no-such-command-xyz");
}

#[tokio::test]
async fn program_is_looked_up_on_the_commands_path_not_ours() {
    let mut s = spec("echo", &["x"]);
    s.env = vec![("PATH".into(), "/nonexistent".into())];
    assert!(matches!(run(s).await, Err(ExecError::NotFound { .. })));
}

#[tokio::test]
async fn dropping_the_future_kills_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (main, bg) = (dir.path().join("main"), dir.path().join("bg"));
    let s = bash(
        "echo $$ > \"$1\"; sleep 30 & echo $! > \"$2\"; wait",
        &[main.to_str().unwrap(), bg.to_str().unwrap()],
    );
    let started = async {
        while read_pid(&bg).is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        r = run(s) => panic!("finished early: {r:?}"),
        _ = started => {}
    }
    for pid in [read_pid(&main).unwrap(), read_pid(&bg).unwrap()] {
        assert!(eventually(|| !alive(pid)), "{pid} survived the cancel");
    }
}

/// Not a test on its own: run by `children_die_with_skillpipe` in a separate process, which
/// it then kills.
#[tokio::test]
#[ignore = "helper process for children_die_with_skillpipe"]
async fn helper_run_until_killed() {
    let pidfile = std::env::var("SKILLPIPE_TEST_PIDFILE").unwrap();
    let _ = run(bash("echo $$ > \"$1\"; exec sleep 30", &[&pidfile])).await;
}

#[test]
fn children_die_with_skillpipe_and_its_run_directory_is_swept_later() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut helper = common::spawn::detached(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "exec::helper_run_until_killed",
            "--ignored",
            "--quiet",
        ])
        .env("SKILLPIPE_TEST_PIDFILE", &pidfile)
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(eventually(|| read_pid(&pidfile).is_some()));
    let pid = read_pid(&pidfile).unwrap();
    assert!(alive(pid));
    helper.kill().unwrap();
    helper.wait().unwrap();
    assert!(eventually(|| !alive(pid)), "{pid} outlived its parent");

    // SIGKILL leaves no chance to clean up: the run directory stays (the positive control)…
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("skillpipe-run-")
        })
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    // …until a later skillpipe's first run removes it, once it is past the grace period.
    let old = std::time::SystemTime::now() - Duration::from_secs(120);
    std::fs::File::open(&left[0])
        .unwrap()
        .set_modified(old)
        .unwrap();
    let o = common::spawn::skillpipe_cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .env("TMPDIR", &tmp)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .write_stdin("a !{echo b} c")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a b c", "{o:?}");
    assert!(!left[0].exists(), "the abandoned run directory stays");
    let now: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(now.is_empty(), "the new run left {now:?}");
}
