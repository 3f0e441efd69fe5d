//! `skillpipe filter` end to end: the built binary on real input with real commands.

use crate::common;

use common::TestHome;
use std::io::{Read, Write};
use std::process::Stdio;

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
    // `sandbox` names the restrictions in force, in one vocabulary.
    for r in &audit {
        let s = r["sandbox"].as_str().unwrap();
        assert!(
            s == "none"
                || s.split(',')
                    .all(|w| ["network", "filesystem", "pids", "mounts", "limits"].contains(&w)),
            "{s}"
        );
    }
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
    assert!(
        home.audit().iter().all(|r| r["sandbox"].is_null()),
        "nothing ran"
    );
}

/// A directive shown in an indented code block is an example, as the renderer draws it: it
/// stays text and does not run; the same line in a list item's text runs.
#[test]
fn a_directive_in_an_indented_code_block_is_text() {
    let home = TestHome::new();
    let input = "To show it:\n\n    %{echo RAN}\n\nDone.\n- item\n\n    %{echo LISTED}\n";
    let out = home
        .cmd()
        .args([
            "filter",
            "--allow",
            "echo",
            "-y",
            "--sandbox",
            "best-effort",
        ])
        .args(["--show-side-effects"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "To show it:\n\n    %{echo RAN}\n\nDone.\n- item\n\n    \n"
    );
    let ran: Vec<_> = home
        .audit()
        .into_iter()
        .map(|r| r["argv"].clone())
        .collect();
    assert_eq!(
        ran,
        [serde_json::json!(["echo", "LISTED"])],
        "only the list item's ran"
    );
}

/// `...` (or `…`) in place of a skill script's argument is a placeholder copied from an
/// explanation: not run. To a system command it may be a real argument (`grep -c '...'`).
#[test]
fn a_placeholder_argument_is_not_run() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .args([
            "filter",
            "--skills-dir",
            concat!(env!("CARGO_MANIFEST_DIR"), "/skills"),
        ])
        .args([
            "--allow-scripts",
            "--allow",
            "echo",
            "-y",
            "--sandbox",
            "best-effort",
        ])
        .write_stdin("a !{scripts/calc.py ...} b !{scripts/calc.py …} c !{echo ...} d")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "a  b  c ... d");
    let err = stderr(&out);
    assert_eq!(
        err.matches("is a placeholder, not a value").count(),
        2,
        "{err}"
    );
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
    let mut child = common::spawn::skillpipe()
        .arg("filter")
        .env("XDG_STATE_HOME", home.path())
        .current_dir(home.path())
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
    assert!(
        text.contains("A year has 8760 hours, and 12 × 37 is 444."),
        "{text}"
    );
    assert!(text.contains("serendipity: the luck of finding"), "{text}");
    assert!(!text.contains("!{scripts/lookup.py serendipity}"), "{text}");
    assert!(text.contains("`!{scripts/calc.py \"1 + 1\"}`"), "{text}");
    assert!(
        text.contains("%{scripts/say.sh \"this stays as text\"}"),
        "{text}"
    );
}

#[test]
fn concurrent_filters_append_whole_audit_lines() {
    let home = TestHome::new();
    let log = home.path().join("shared-audit.jsonl");
    let long = "x".repeat(300);
    let children: Vec<_> = (0..4)
        .map(|p| {
            // Mostly denied (logged at once, so the four processes write at the same time),
            // a few run; long arguments make each line a few hundred bytes.
            let input: String = (0..50)
                .map(|i| {
                    if i % 10 == 0 {
                        format!("%{{echo p{p} d{i}}}")
                    } else {
                        format!("%{{rm p{p} d{i} {long}}}")
                    }
                })
                .collect();
            let mut child = common::spawn::skillpipe()
                .env("HOME", home.path())
                .env("XDG_STATE_HOME", home.path().join("state"))
                .env("XDG_CONFIG_HOME", home.path().join("config"))
                .current_dir(home.path())
                .args(["filter", "--allow", "echo", "-y", "--allow-network"])
                .args(["--allow-filesystem", "--audit-log"])
                .arg(&log)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let all: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // Each run also writes a "started" line before it starts.
    let started = all.iter().filter(|r| r["phase"] == "started").count();
    assert_eq!(started, 20);
    let lines: Vec<serde_json::Value> = all
        .into_iter()
        .filter(|r| r["phase"] != "started")
        .collect();
    assert_eq!(lines.len(), 200);
    for p in 0..4 {
        let mine: Vec<&serde_json::Value> = lines
            .iter()
            .filter(|r| r["argv"][1] == format!("p{p}"))
            .collect();
        assert_eq!(mine.len(), 50, "process {p}");
        let ran = mine.iter().filter(|r| r["decision"] == "ran").count();
        assert_eq!(ran, 5, "process {p}");
        // Each process logs its own directives in order.
        let order: Vec<String> = mine.iter().map(|r| r["argv"][2].to_string()).collect();
        let expected: Vec<String> = (0..50).map(|i| format!("\"d{i}\"")).collect();
        assert_eq!(order, expected);
    }
    let cut = lines.iter().find(|r| r["decision"] == "denied").unwrap();
    assert_eq!(cut["argv"][3].as_str().unwrap().chars().count(), 256);
}

#[test]
fn audit_required_refuses_to_run_when_the_log_cannot_be_written() {
    let home = TestHome::new();
    let canary = home.path().join("canary");
    home.write(
        "config/skillpipe/agents/strict-audit.toml",
        "name = \"strict-audit\"\ndescription = \"d\"\ninstructions = \"i\"\n\
         [script_policy]\nallow_scripts = true\nallowed_commands = [\"touch\"]\n\
         confirm = \"never\"\naudit = \"required\"\nallow_filesystem = true\n",
    );
    let input = format!("a %{{touch {}}} b\n", canary.display());
    // A directory where the log file should be: it cannot be opened for appending.
    let unwritable = home.path().join("log-is-a-dir");
    std::fs::create_dir(&unwritable).unwrap();
    let out = home
        .cmd()
        .args([
            "filter",
            "--agent",
            "strict-audit",
            "--strict",
            "--audit-log",
        ])
        .arg(&unwritable)
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(stdout(&out), "a  b\n");
    assert!(!canary.exists(), "ran without an audit log");
    assert!(
        stderr(&out).contains("audit = \"required\""),
        "{}",
        stderr(&out)
    );
    // With a writable log the same directive runs and is logged.
    let out = home
        .cmd()
        .args(["filter", "--agent", "strict-audit", "--strict"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(canary.exists());
    let audit = home.audit();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["decision"], "ran");
    assert_eq!(audit[0]["agent"], "strict-audit");
}

#[test]
fn agent_and_skill_flags_choose_skills_and_policy() {
    let home = TestHome::new();
    for name in ["alpha", "beta"] {
        home.write(
            &format!("sk/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: test skill {name}\n---\nbody\n"),
        );
        home.write(
            &format!("sk/{name}/scripts/{name}.sh"),
            &format!("echo \"{name} $SKILL_NAME\"\n"),
        );
    }
    // The agent brings skill alpha and a policy that runs scripts without asking.
    home.write(
        "config/skillpipe/agents/only-alpha.toml",
        "name = \"only-alpha\"\ndescription = \"d\"\ninstructions = \"i\"\nskills = [\"alpha\"]\n\
         [script_policy]\nallow_scripts = true\nconfirm = \"never\"\n",
    );
    let input = "[!{scripts/alpha.sh}] [!{scripts/beta.sh}]\n";
    let out = home
        .cmd()
        .args(["filter", "--skills-dir", "sk", "--agent", "only-alpha"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[alpha alpha] []\n");
    assert!(stderr(&out).contains("no loaded skill has scripts/beta.sh"));
    // --skill alone: only that skill is loaded.
    let out = home
        .cmd()
        .args(["filter", "--skills-dir", "sk", "--skill", "beta"])
        .args(["--allow-scripts", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[] [beta beta]\n");
}

#[test]
fn exec_in_code_runs_directives_inside_code() {
    let home = TestHome::new();
    let input = "`!{echo a}` and\n```\n!{echo b}\n```\n";
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), input);
    let out = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y", "--exec-in-code"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "`a` and\n```\nb\n```\n");
}

#[test]
fn output_over_max_output_bytes_is_cut_with_a_warning() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/agents/small.toml",
        "name = \"small\"\ndescription = \"d\"\ninstructions = \"i\"\n\
         [script_policy]\nallow_scripts = true\nallowed_commands = [\"seq\"]\n\
         confirm = \"never\"\nmax_output_bytes = 10\n",
    );
    let out = home
        .cmd()
        .args(["filter", "--agent", "small"])
        .write_stdin("[!{seq 1 100}]\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[1\n2\n3\n4\n5]\n");
    assert!(
        stderr(&out)
            .contains("warning: command `seq`: stdout was 292 bytes, over max_output_bytes (10 bytes); the rest was dropped"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.audit()[0]["truncated"], true);
}

/// Program order: a capture runs only after every side effect before it has finished, so it
/// sees what they did (positive control: the same capture alone finds nothing).
#[test]
fn a_capture_sees_the_side_effects_written_before_it() {
    let home = TestHome::new();
    let run = |input: &str| {
        home.cmd()
            .args([
                "filter",
                "--allow",
                "sh",
                "--allow",
                "cat",
                "-y",
                "--allow-filesystem",
            ])
            .write_stdin(input)
            .output()
            .unwrap()
    };
    let alone = run("[!{cat marker}]\n");
    assert_eq!(stdout(&alone), "[]\n", "{}", stderr(&alone));
    let out = run("%{sh -c 'sleep 0.2; echo done > marker'}[!{cat marker}]\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[done]\n", "{}", stderr(&out));
}

/// A command that is not installed: its `started` line is followed by one `completed` line
/// saying why (the run never ends without it).
#[test]
fn a_missing_command_completes_its_audit_entry() {
    let home = common::TestHome::new();
    let out = home
        .cmd()
        .args(["filter", "--allow", "no-such-program-xyz", "-y"])
        .write_stdin("a !{no-such-program-xyz go} b")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a  b");
    let audit = home.audit_all();
    let phases: Vec<&str> = audit.iter().filter_map(|r| r["phase"].as_str()).collect();
    assert_eq!(phases, ["started", "completed"], "{audit:?}");
    assert_eq!(audit[1]["decision"], "invalid");
    assert_eq!(audit[1]["reason"], "command not found: no-such-program-xyz");
}

/// Foreign text on stderr — a directive's body, a script's last stderr line — shows its escapes
/// in the one wording of the terminal sanitizer (`␛`), never as Rust escapes (`\u{1b}`).
#[test]
fn escapes_on_stderr_have_one_wording() {
    let home = TestHome::new();
    home.write(
        "sk/e/SKILL.md",
        "---\nname: e\ndescription: Fails in red\n---\nRun it.\n",
    );
    home.write(
        "sk/e/scripts/red.sh",
        "#!/bin/bash\nprintf 'bad \\033[31mred\\n' >&2\nexit 1\n",
    );
    let out = home
        .cmd()
        .args(["filter", "--skills-dir", "sk", "--allow-scripts", "-y"])
        .write_stdin("!{e/scripts/red.sh \"a\x1bb\"}\n!{e/scripts/red.sh \"a\tb\"}\n")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("invalid: !{e/scripts/red.sh \"a␛b\"}: control character U+001B"),
        "{err}"
    );
    assert!(
        err.contains("failed: !{e/scripts/red.sh \"a␉b\"}: exit 1: bad ␛[31mred"),
        "{err}"
    );
    assert!(!err.contains("\\u{") && !err.contains('\x1b'), "{err}");
}

/// A signal stops the filter where it is: the run under way is killed, and what is still to
/// come is not run (declined as stopping, never "failed" for a command that never started).
#[test]
fn a_signal_stops_the_filter_before_the_next_directive() {
    let home = TestHome::new();
    let out = home.stop_once_started(
        &[
            "filter",
            "--allow",
            "sleep",
            "--allow",
            "echo",
            "-y",
            "--sandbox",
            "best-effort",
        ],
        b"a !{sleep 30} b\nc !{echo SECOND} d\n",
        "sleep",
    );
    assert_eq!(out.status.code(), Some(143));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stopped by SIGTERM"), "{err}");
    assert!(!err.contains("failed: !{echo SECOND}"), "{err}");
    assert!(
        home.audit_all()
            .iter()
            .filter(|r| r["argv"][0] == "echo")
            .all(|r| r["decision"] == "declined"),
        "{:?}",
        home.audit_all()
    );
}

/// `--keep-refused`: a directive that does not run (refused by the policy, or invalid) is
/// written through as the exact bytes it was, in place; one that runs is still replaced. The
/// control: without the flag the refused one is stripped.
#[test]
fn keep_refused_writes_refused_directives_through_as_they_were() {
    let home = TestHome::new();
    let input = "a %{touch  x} b !{echo ok} c !{rm -rf \"/tmp/no\"} d %{echo $HOME} e\n";
    let filter = |extra: &[&str]| {
        home.cmd()
            .args(["filter", "--allow", "echo", "-y"])
            .args(extra)
            .write_stdin(input)
            .output()
            .unwrap()
    };
    let out = filter(&["--keep-refused"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "a %{touch  x} b ok c !{rm -rf \"/tmp/no\"} d %{echo $HOME} e\n"
    );
    let decisions: Vec<String> = home
        .audit()
        .iter()
        .map(|r| r["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, ["denied", "ran", "denied", "invalid"]);
    // The control: by default, what does not run is stripped.
    let out = filter(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "a  b ok c  d  e\n");
}
