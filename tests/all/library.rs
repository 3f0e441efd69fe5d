//! skillpipe as a library: the launcher is explicit and a misconfiguration fails fast (never
//! recursion), the examples run end to end, and the config file refuses unknown keys.

use crate::common;

use common::TestHome;
use skillpipe::sandbox::LauncherError;
use skillpipe::{Dispatcher, Launcher, ScriptPolicy};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_skillpipe");

fn scripts_on() -> ScriptPolicy {
    ScriptPolicy::allowing(["echo"])
}

/// An example built by `cargo test` (examples live next to the test binaries' `deps`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

#[test]
fn this_program_without_the_hook_is_refused_at_build() {
    // The test harness never called run_if_launcher().
    let err = Dispatcher::builder(scripts_on())
        .launcher(Launcher::ThisProgram)
        .build()
        .err()
        .expect("must not build");
    assert!(err.to_string().contains("run_if_launcher()"), "{err}");
}

#[test]
fn a_launcher_that_does_not_answer_the_handshake_is_refused() {
    let err = Launcher::Path("/bin/true".into()).resolve().unwrap_err();
    assert!(matches!(err, LauncherError::NoHandshake { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("/bin/true is not a skillpipe sandbox launcher")
    );
    // Positive control: the skillpipe binary answers.
    assert_eq!(
        Launcher::Path(BIN.into()).resolve().unwrap(),
        PathBuf::from(BIN)
    );
}

/// Run in its own process (by the test below): the hook sets process-wide state that would
/// change what the other tests here see.
#[test]
#[ignore = "run in a child process by a_hook_called_after_threads_started_fails_the_build"]
fn late_hook_child() {
    // As in a host whose `#[tokio::main]` started its runtime before the hook ran.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        let _ = rx.recv();
    });
    skillpipe::sandbox::run_if_launcher();
    let err = Dispatcher::builder(scripts_on())
        .launcher(Launcher::ThisProgram)
        .build()
        .err()
        .expect("must not build");
    drop(tx);
    worker.join().unwrap();
    println!("BUILD ERROR: {err}");
}

#[test]
fn a_hook_called_after_threads_started_fails_the_build() {
    let out = common::spawn::detached(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "library::late_hook_child",
            "--ignored",
            "--nocapture",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("BUILD ERROR: "), "{text}");
    assert!(text.contains("threads, too late"), "{text}");
    assert!(text.contains("before building a runtime"), "{text}");
}

#[test]
fn a_required_audit_log_without_a_path_fails_the_build() {
    let mut policy = scripts_on();
    policy.audit = skillpipe::policy::AuditMode::Required;
    let err = Dispatcher::builder(policy.clone())
        .launcher(Launcher::Path(PathBuf::from(BIN)))
        .build()
        .err()
        .expect("must not build");
    assert!(
        matches!(err, skillpipe::dispatch::BuildError::NoAuditLog),
        "{err}"
    );
    assert!(err.to_string().contains("audit = \"required\""), "{err}");
    // The control: with a log path it builds.
    let home = TestHome::new();
    let built = Dispatcher::builder(policy)
        .launcher(Launcher::Path(PathBuf::from(BIN)))
        .audit(skillpipe::AuditLog::new(Some(
            home.path().join("audit.jsonl"),
        )))
        .build();
    assert!(built.is_ok(), "{:?}", built.err());
}

#[test]
fn no_launcher_is_needed_when_nothing_may_run() {
    let d = Dispatcher::builder(ScriptPolicy::default())
        .launcher(Launcher::ThisProgram)
        .build();
    assert!(d.is_ok(), "allow_scripts is off: nothing will be launched");
}

#[test]
fn a_host_started_as_launcher_without_acting_as_one_stops_at_once() {
    // What the old recursion looked like from the inside: the host is started as a launcher
    // but runs its own main. With the marker in its environment it refuses to start anything.
    let exe = example("own_provider");
    assert!(exe.is_file(), "{} (built by cargo test)", exe.display());
    let start = Instant::now();
    let out = common::spawn::detached(&exe)
        .env("SKILLPIPE_LAUNCHER_MARKER", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    // `main` returned the builder's error (printed with Debug): LauncherError::Recursion.
    assert!(err.contains("Recursion"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn examples_run_end_to_end() {
    let out = common::spawn::detached(example("scan_stream"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("⟨Capture: scripts/lookup.py \"ferret\"⟩"),
        "{text}"
    );
    assert!(text.contains("`%{this}` stays text"), "{text}");

    let home = TestHome::new();
    let out = common::spawn::detached(example("own_provider"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("cannot sandbox") {
        println!("SKIPPED the chat example: this machine cannot enforce the sandbox: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    assert_eq!(text, "Let me compute that: The answer is 42.\n", "{err}");
    assert!(err.contains("[ran !{echo 42}]"), "{err}");
    // Its provider ends each answer as a real one does: no notice that it may be cut.
    assert!(!err.contains("cut"), "{err}");
}

#[test]
fn the_sandbox_example_runs_refuses_and_confines() {
    let home = TestHome::new();
    let out = common::spawn::detached(example("sandboxed_directive"))
        .env("HOME", home.path())
        .env("TMPDIR", home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    if text.contains("cannot sandbox") {
        println!("SKIPPED: this machine cannot enforce the sandbox: {text}");
        return;
    }
    assert!(
        text.contains("→ exit 0 \"hello from the sandbox\""),
        "{text}"
    );
    assert!(text.contains("→ exit 0 \"wrote to TMPDIR\""), "{text}");
    assert!(
        text.contains("→ Denied: `sh -c 'rm -rf /'` matches denied pattern"),
        "{text}"
    );
    assert!(
        text.contains("→ Invalid: shell syntax is not supported"),
        "{text}"
    );
    // The write outside $TMPDIR was refused by the sandbox, not by luck.
    assert!(
        !home.path().join("skillpipe-example-was-here").exists(),
        "{text}"
    );
    // A read-only mount (EROFS) refuses it before Landlock would (EACCES).
    assert!(
        text.contains("Read-only file system") || text.contains("Permission denied"),
        "{text}"
    );
}

#[test]
fn an_unknown_config_key_is_an_error_with_file_and_line() {
    let home = TestHome::new();
    let cfg = home.write(
        "config/skillpipe/config.toml",
        "model = \"m\"\n\n[skils]\nts_interpreter = \"deno\"\n",
    );
    let out = home
        .cmd()
        .args(["filter"])
        .write_stdin("text\n")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:3: ", cfg.display())), "{err}");
    assert!(err.contains("skils"), "{err}");
}

/// A turn is a `Send` future: a server spawns one per request on a multi-threaded runtime.
#[test]
fn a_chat_turn_can_be_spawned() {
    use futures::stream;
    use skillpipe::{
        Busy, ChatOptions, ChatRequest, EventStream, Notice, Provider, Report, Session,
        StreamEvent, Ui,
    };
    use std::sync::Arc;

    struct Canned;
    impl Provider for Canned {
        fn stream(&self, _req: ChatRequest) -> EventStream {
            let tokens = ["Hello ", "%{say hi}", "there."];
            Box::pin(stream::iter(
                tokens.map(|t| Ok(StreamEvent::Text(t.into()))),
            ))
        }
    }
    #[derive(Default)]
    struct Collect(String);
    impl Ui for Collect {
        fn text(&mut self, bytes: &[u8]) {
            self.0.push_str(&String::from_utf8_lossy(bytes));
        }
        fn report(&mut self, _report: &Report) {}
        fn notice(&mut self, _notice: &Notice) {}
        fn busy(&mut self, _what: Option<Busy<'_>>) {}
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dispatcher = Arc::new(
        Dispatcher::builder(ScriptPolicy::default())
            .build()
            .unwrap(),
    );
    let shown = rt
        .block_on(rt.spawn(async move {
            let options = ChatOptions::new("canned");
            let mut session = Session::new(Box::new(Canned), dispatcher, None, options);
            let mut ui = Collect::default();
            session.turn("hi", &mut ui).await.unwrap();
            ui.0
        }))
        .unwrap();
    // Nothing may run and no skill is loaded: no directive was announced, the text stays.
    assert_eq!(shown, "Hello %{say hi}there.");
}

/// A host's own asker that answers "interrupted" gets a decline, never a signal sent to its
/// process (only skillpipe's terminal prompts turn Ctrl-C back into SIGINT).
#[test]
fn a_hosts_asker_is_never_answered_with_a_signal() {
    use skillpipe::{AskError, Kind, Outcome};
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = asked.clone();
    let dispatcher = Dispatcher::builder(scripts_on())
        .launcher(Launcher::Path(PathBuf::from(BIN)))
        .asker(move |_| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err(AskError::Interrupted)
        })
        .build()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let outcome = rt.block_on(dispatcher.run_body(Kind::Capture, "echo hi"));
    // Still here (a SIGINT would have ended the test binary), and the command did not run.
    assert_eq!(
        asked.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the control: it asked"
    );
    match outcome {
        Outcome::Blocked {
            decision, reason, ..
        } => {
            assert_eq!(decision, skillpipe::Decision::Declined);
            assert!(reason.contains("interrupted"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// The policy's `max_captures_per_turn` bounds a chat message's captures; `ChatOptions` may
/// only lower it.
#[test]
fn the_policy_bounds_captures_and_options_may_only_lower_it() {
    use futures::stream;
    use skillpipe::policy::{ConfirmMode, SandboxMode};
    use skillpipe::{
        Busy, ChatOptions, ChatRequest, EventStream, Notice, Provider, Report, Session,
        StreamEvent, Ui,
    };
    use std::sync::Arc;

    /// Asks for another (different) capture every time.
    struct Again;
    impl Provider for Again {
        fn stream(&self, req: ChatRequest) -> EventStream {
            let text = format!("!{{echo {}}}", req.messages.len());
            Box::pin(stream::iter([Ok(StreamEvent::Text(text))]))
        }
    }
    struct Quiet;
    impl Ui for Quiet {
        fn text(&mut self, _bytes: &[u8]) {}
        fn report(&mut self, report: &Report) {
            eprintln!("REPORT {report}");
        }
        fn notice(&mut self, notice: &Notice) {
            eprintln!("NOTICE {notice}");
        }
        fn busy(&mut self, _what: Option<Busy<'_>>) {}
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    let captures = |policy_max: usize, option: Option<usize>| {
        let mut policy = scripts_on();
        policy.confirm = ConfirmMode::Never;
        // Counted whether or not this machine can sandbox `echo`.
        policy.sandbox = SandboxMode::BestEffort;
        policy.max_captures_per_turn = policy_max;
        let dispatcher = Dispatcher::builder(policy)
            .launcher(Launcher::Path(PathBuf::from(BIN)))
            .build()
            .unwrap();
        let mut options = ChatOptions::new("again");
        options.max_captures = option;
        let mut session = Session::new(Box::new(Again), Arc::new(dispatcher), None, options);
        assert_eq!(
            session.max_captures(),
            option.map_or(policy_max, |o| o.min(policy_max))
        );
        rt.block_on(session.turn("go", &mut Quiet))
            .unwrap()
            .captures
    };
    assert_eq!(captures(2, None), 2, "the policy's bound");
    assert_eq!(captures(2, Some(1)), 1, "lowered by the options");
    assert_eq!(captures(2, Some(5)), 2, "not raised by the options");
}

/// A refusal comes typed (what and why) and worded in the policy's terms: an embedder has no
/// command-line flags.
#[test]
fn a_policy_refusal_is_typed_and_names_no_flags() {
    use skillpipe::policy::Denied;
    use skillpipe::{Kind, Outcome};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let off = Dispatcher::builder(ScriptPolicy::default())
        .build()
        .unwrap();
    let Outcome::Blocked { reason, denied, .. } = rt.block_on(off.run_body(Kind::Capture, "ls"))
    else {
        panic!("nothing may run under the default policy")
    };
    assert_eq!(denied, Some(Denied::ScriptsOff));
    assert_eq!(reason, "scripts are not allowed (allow_scripts is off)");

    let dispatcher = Dispatcher::builder(scripts_on())
        .launcher(Launcher::Path(PathBuf::from(BIN)))
        .build()
        .unwrap();
    let Outcome::Blocked { reason, denied, .. } =
        rt.block_on(dispatcher.run_body(Kind::Capture, "rm -rf x"))
    else {
        panic!("rm is not allowed")
    };
    let Some(Denied::NotAllowed {
        command,
        suggestion,
        ..
    }) = denied
    else {
        panic!("{denied:?}")
    };
    assert_eq!(command, "rm -rf x");
    assert_eq!(suggestion.as_deref(), Some("rm"));
    assert_eq!(
        reason,
        "`rm -rf x` is not in allowed_commands (the pattern `rm` would allow it)"
    );
    assert!(!reason.contains("--"), "{reason}");
}

/// Collects what the filter writes, to look at after it returns.
#[derive(Clone, Default)]
struct Written(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Written {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Keeps each report's text, for the assertion message.
#[derive(Default)]
struct Reports(std::sync::Mutex<Vec<String>>);
impl skillpipe::filter::Reporter for Reports {
    fn report(&self, r: &skillpipe::Report) {
        self.0.lock().unwrap().push(format!("{r:?}"));
    }
}

/// Straight from a multi-thread runtime's task (as under `#[tokio::main]`), the blocking
/// `filter::run` blocks in place instead of panicking, and the directive runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_filter_runs_from_a_runtime_task() {
    let home = TestHome::new();
    let mut policy = scripts_on();
    policy.confirm = skillpipe::policy::ConfirmMode::Never;
    // Runs whether or not this machine can sandbox `echo`.
    policy.sandbox = skillpipe::policy::SandboxMode::BestEffort;
    let dispatcher = Dispatcher::builder(policy)
        .launcher(Launcher::Path(PathBuf::from(BIN)))
        .audit(skillpipe::AuditLog::new(Some(
            home.path().join("audit.jsonl"),
        )))
        .build()
        .unwrap();
    let out = Written::default();
    let reports = std::sync::Arc::new(Reports::default());
    let report = skillpipe::filter::run(
        &tokio::runtime::Handle::current(),
        std::sync::Arc::new(dispatcher),
        skillpipe::filter::FilterOptions::default(),
        std::io::Cursor::new(b"a !{echo hi} b".to_vec()),
        out.clone(),
        reports.clone(),
    )
    .unwrap();
    let seen = reports.0.lock().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.0.lock().unwrap()),
        "a hi b",
        "{seen:?}"
    );
    assert!(!report.problems);
}
