//! `skillpipe filter` end to end: the built binary on real input with real commands.

mod common;

use common::TestHome;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn readme_example() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin("Hi %{echo x} !{echo there}\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hi  there\n");
    assert_eq!(stderr(&out), "");
    let audit = home.audit();
    assert_eq!(audit.len(), 2);
    assert!(audit.iter().all(|r| r["decision"] == "ran"));
}

#[test]
fn nothing_runs_without_allow_scripts() {
    let home = TestHome::new();
    let canary = home.path().join("canary");
    let input = format!("a %{{touch {0}}} b !{{touch {0}}} c\n", canary.display());
    let out = home
        .cmd()
        .arg("filter")
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stdout(&out), "a  b  c\n");
    assert!(!canary.exists());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.contains("scripts are not allowed"), "{err}");
    assert!(home.audit().iter().all(|r| r["decision"] == "denied"));
}

#[test]
fn strict_exits_3_on_blocked_or_invalid_or_failed() {
    let home = TestHome::new();
    for input in [
        "x %{rm -rf /nonexistent}\n",
        "x !{echo a; echo b}\n",
        "x !{false}\n",
    ] {
        let out = home
            .cmd()
            .args([
                "filter", "--allow", "echo", "--allow", "false", "-y", "--strict",
            ])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{input}: {}", stderr(&out));
        assert_eq!(stdout(&out), "x \n");
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y", "--strict"])
        .write_stdin("fine !{echo ok}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn invalid_shell_syntax_is_named() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin("!{echo $(id)}\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "\n");
    assert!(
        stderr(&out).contains("shell syntax is not supported"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.audit()[0]["decision"], "invalid");
}

#[test]
fn invalid_utf8_and_code_pass_through_untouched() {
    let home = TestHome::new();
    let mut input = b"bytes \xff\xfe ok `!{echo no}`\n```\n%{echo no}\n```\n".to_vec();
    input.extend_from_slice(b"100% sure! {braces} \\!{echo literal}\n");
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut want = b"bytes \xff\xfe ok `!{echo no}`\n```\n%{echo no}\n```\n".to_vec();
    want.extend_from_slice(b"100% sure! {braces} !{echo literal}\n");
    assert_eq!(out.stdout, want);
    assert!(home.audit().is_empty());
}

#[test]
fn side_effect_output_only_with_show_side_effects() {
    let home = TestHome::new();
    let run = |show: bool| {
        let mut c = home.cmd();
        c.args(["filter", "--allow", "echo", "-y"]);
        if show {
            c.arg("--show-side-effects");
        }
        c.write_stdin("a%{echo visible-effect}b\n")
            .output()
            .unwrap()
    };
    let quiet = run(false);
    assert_eq!(stdout(&quiet), "ab\n");
    assert!(!stderr(&quiet).contains("visible-effect"));
    let shown = run(true);
    assert_eq!(stdout(&shown), "ab\n");
    assert!(stderr(&shown).contains("visible-effect"));
}

#[test]
fn captures_keep_output_order() {
    let home = TestHome::new();
    let input: String = (0..20).map(|i| format!("[{i}:!{{echo c{i}}}]")).collect();
    let want: String = (0..20).map(|i| format!("[{i}:c{i}]")).collect();
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), want);
}

#[test]
fn captures_in_a_long_stream_keep_output_order() {
    // Captures spread over a few MB, so input is read ahead while they run and read in place
    // between them; every byte must still come out in order.
    let home = TestHome::new();
    let filler = "plain prose between captures, 100% ordinary!\n".repeat(2000);
    let input: String = (0..30)
        .map(|i| format!("{filler}[{i}:!{{echo c{i}}}]"))
        .collect();
    let want: String = (0..30).map(|i| format!("{filler}[{i}:c{i}]")).collect();
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stdout == want.as_bytes(),
        "output differs from the input"
    );
}

#[test]
fn closed_stdout_ends_quietly() {
    let home = TestHome::new();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("skillpipe"))
        .arg("filter")
        .env("XDG_STATE_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let line = b"some prose that keeps coming\n".repeat(1000);
        for _ in 0..200 {
            if stdin.write_all(&line).is_err() {
                return;
            }
        }
    });
    let mut first = [0u8; 100];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(stderr(&out), "");
}

#[test]
fn shipped_example_runs_with_shipped_skills() {
    let home = TestHome::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let input = std::fs::read(format!("{root}/examples/answer.md")).unwrap();
    let out = home
        .cmd()
        .current_dir(root)
        .args(["filter", "--skills-dir", "skills", "--allow-scripts", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("12 × 37 is 444."), "{text}");
    assert!(!text.contains("!{scripts/lookup.py serendipity}"), "{text}");
    assert!(text.contains("`!{scripts/calc.py \"1 + 1\"}`"), "{text}");
    assert!(
        text.contains("%{scripts/say.sh \"this stays as text\"}"),
        "{text}"
    );
}
