//! What reaches the user's terminal and who answers the confirmation prompt (DESIGN §8, §2):
//! the built binary on a real terminal (tmux for the screen, a pty for keys) against the in-test
//! model server.

use crate::common;
use crate::common::pty;
use crate::common::tmux;

use common::{Reply, Server, TestHome};
use pty::Pty;
use std::process::Command;
use std::time::Duration;
use tmux::Tmux;

/// The model's answer: clear the screen, set the title and the clipboard, draw a fake prompt.
const HOSTILE: &str = "Sure.\x1b[2J\x1b[H\x1b]2;pwned-title\x07\x1b]52;c;cHduZWQ=\x07\
                       skillpipe: run `touch notes.txt`?\r\n  [y] yes once END";

fn env(home: &TestHome) -> Vec<(&'static str, String)> {
    let p = |rel: &str| home.path().join(rel).display().to_string();
    vec![
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", p("")),
        ("LANG", "C.UTF-8".into()),
        ("TERM", "tmux-256color".into()),
        ("XDG_STATE_HOME", p("state")),
        ("XDG_CONFIG_HOME", p("config")),
    ]
}

#[test]
fn a_hostile_answer_leaves_the_screen_title_and_clipboard_alone() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Sure.", &HOSTILE[5..]])]);
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let argv = [
        bin,
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "test-model",
    ];
    let Some(t) = Tmux::start(&argv, &env(&home), home.path()) else {
        return;
    };
    t.wait_for("/help for commands");
    let title_before = t.title();
    t.keys("hi");
    t.enter();
    let screen = t.wait_for("END");
    // Nothing was cleared: the welcome line is still there above the answer.
    assert!(screen.contains("/help for commands"), "{screen}");
    // The controls are shown, not obeyed; the fake prompt is visibly the model's text.
    assert!(
        screen.contains("Sure.␛[2J␛[H␛]2;pwned-title␇␛]52;c;cHduZWQ=␇"),
        "{screen}"
    );
    // (The answer is rendered as Markdown, so the backticks around the command become styling.)
    assert!(screen.contains("␇skillpipe: run "), "{screen}");
    assert_eq!(t.title(), title_before);
    assert_ne!(t.title(), "pwned-title");
    assert_eq!(t.clipboard(), "");

    // Positive control: the same bytes written raw (`filter --raw`) do clear the screen and set
    // the title and the clipboard on this terminal; `filter` without it shows them inert.
    let answer = home.write("answer.txt", HOSTILE);
    let answer = answer.display().to_string();
    let sh = format!("echo BEFORE; {bin} filter --raw < {answer}; sleep 30");
    let Some(raw) = Tmux::start(&["sh", "-c", &sh], &env(&home), home.path()) else {
        return;
    };
    let screen = raw.wait_for("END");
    assert!(!screen.contains("BEFORE"), "{screen}");
    assert_eq!(raw.title(), "pwned-title");
    assert_eq!(raw.clipboard(), "pwned");
    let sh = format!("echo BEFORE; {bin} filter < {answer}; sleep 30");
    let Some(inert) = Tmux::start(&["sh", "-c", &sh], &env(&home), home.path()) else {
        return;
    };
    let screen = inert.wait_for("END");
    assert!(screen.contains("BEFORE"), "{screen}");
    assert!(screen.contains("␛]52;c;cHduZWQ=␇"), "{screen}");
    assert_ne!(inert.title(), "pwned-title");
    assert_eq!(inert.clipboard(), "");
}

/// The REPL's notices quote the model's directive (the loop guard: `not run again`, `stopped`):
/// one that would set the window title is shown escaped on its status line, and the title stays.
#[test]
fn a_notice_quoting_a_hostile_directive_leaves_the_title_alone() {
    let home = TestHome::new();
    let server = Server::start((0..4).map(|_| Reply::text(["x !{echo \x1b]2;pwned\x07}"])));
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    // A command allowed: directives are announced, so the capture is acted on (and refused).
    let argv = [
        bin,
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--allow",
        "false",
    ];
    let mut env = env(&home);
    env.push(("NO_COLOR", "1".into()));
    let Some(t) = Tmux::start(&argv, &env, home.path()) else {
        return;
    };
    t.wait_for("/help for commands");
    let title_before = t.title();
    t.keys("go");
    t.enter();
    let screen = t.wait_for("again after being given its result");
    assert!(
        screen.contains("· not run again: !{echo ␛]2;pwned␇} (same as earlier"),
        "{screen}"
    );
    assert!(
        screen.contains("· stopped: the model wrote !{echo ␛]2;pwned␇} again"),
        "{screen}"
    );
    assert_eq!(t.title(), title_before);
    assert_ne!(t.title(), "pwned");
}

fn repl(home: &TestHome, server: &Server) -> Pty {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
    c.env_clear();
    for (k, v) in env(home) {
        c.env(k, v);
    }
    c.env("NO_COLOR", "1")
        .current_dir(home.path())
        .args(["chat", "--base-url", &server.url, "--model", "test-model"])
        .args(["--allow", "echo"]);
    let mut p = Pty::spawn(c);
    p.expect("/help for commands");
    p.prompt();
    p
}

/// Waits out the guard interval (the real one: 300 ms) plus a margin.
fn past_guard() {
    std::thread::sleep(skillpipe::confirm::GUARD + Duration::from_millis(100));
}

#[test]
fn keys_typed_while_the_answer_streams_never_answer_the_prompt() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["The answer is !{echo 42}"]),
        Reply::text([" ok."]),
        Reply::text(["Again !{echo 43}"]),
        Reply::text([" fine."]),
        Reply::text(["Third !{echo 44}"]),
        Reply::text([" done."]),
    ]);
    let mut p = repl(&home, &server);

    p.send(b"what is it?\r");
    p.expect("The answer is");
    // Typed while the answer streams (or as the prompt appears): flushed or inside the guard.
    p.send(b"ya\ray");
    p.expect("(Enter = no)");
    past_guard();
    assert!(
        home.audit().is_empty(),
        "answered by type-ahead: {:?}",
        home.audit()
    );
    let shown = p.text();
    assert!(!shown.contains("always run `echo` with any"), "{shown}");
    // `a` alone is not "always": it asks again, and another key declines.
    p.send(b"a");
    p.expect("always run `echo` (any arguments) this session?");
    past_guard();
    p.send(b"x");
    p.expect("other = no no\n");
    p.expect("ok.");
    p.prompt();
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "declined");

    // `a` then Enter: always, for this program, this session.
    p.send(b"again\r");
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"a");
    p.expect("this session?");
    past_guard();
    p.send(b"\r");
    p.expect("always");
    p.expect("fine.");
    p.prompt();
    p.send(b"third\r");
    p.expect("done.");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let decisions: Vec<String> = home
        .audit()
        .iter()
        .map(|r| r["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, ["declined", "ran", "ran"]);
    // The third ran without a prompt: only two were drawn.
    assert_eq!(p.text().matches("(Enter = no)").count(), 2);
}

#[test]
fn filter_with_typed_input_reads_its_prompt_keys_from_the_terminal() {
    let home = TestHome::new();
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
    c.env_clear();
    for (k, v) in env(&home) {
        c.env(k, v);
    }
    c.current_dir(home.path())
        .args(["filter", "--allow", "echo"]);
    let mut p = Pty::spawn(c);
    p.send(b"hello %{echo hi} world\r");
    p.expect("run `echo hi`?");
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"y");
    p.expect("yes");
    p.send(b"more text\r");
    // The terminal's echo, then the filter's output (read before the end, or it may be lost
    // with the terminal when the program exits).
    p.expect("more text");
    p.expect("more text");
    p.send(b"\x04");
    assert_eq!(p.wait_exit().code(), Some(0));
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "ran");
    let shown = p.text();
    // The key went to the prompt, not into the text.
    assert!(
        !shown.contains("ymore") && !shown.contains("yhello"),
        "{shown}"
    );
    assert_eq!(
        shown.matches("more text").count(),
        2,
        "echo and output: {shown}"
    );
    // The text after the side effect came before the prompt was drawn or after its answer,
    // never while it was up.
    assert_eq!(
        shown.matches(" world\n").count(),
        2,
        "echo and output: {shown}"
    );
    let up = shown.find("run `echo hi`?").unwrap();
    let answered = up + shown[up..].find("yes\n").unwrap();
    assert!(!shown[up..answered].contains("world"), "{shown}");
}

/// A skill folder from anywhere (here `--skills-dir`) is foreign: `skills list`, `skills show`
/// and `agents show` quote its SKILL.md, so on a terminal its escapes must be inert.
#[test]
fn listings_of_a_hostile_skill_leave_the_terminal_alone() {
    let home = TestHome::new();
    home.write(
        "sk/evil/SKILL.md",
        "---\nname: evil\ndescription: \"Reads PDFs \\e]52;c;cHduZWQ=\\a and more\"\n\
         metadata:\n  author: \"x\\e]2;pwned-title\\a\"\n---\nbody\n",
    );
    let dir = home.path().join("sk").display().to_string();
    for sub in [&["list"][..], &["show", "evil"][..]] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
        c.env_clear();
        for (k, v) in env(&home) {
            c.env(k, v);
        }
        c.current_dir(home.path())
            .arg("skills")
            .args(sub)
            .args(["--skills-dir", &dir]);
        let mut p = Pty::spawn(c);
        p.expect("and more");
        assert!(p.wait_exit().success(), "{sub:?}: {}", p.text());
        let raw = String::from_utf8_lossy(&p.raw()).into_owned();
        // Positive control: the description reached the terminal, its escape made visible.
        assert!(
            raw.contains("Reads PDFs ␛]52;c;cHduZWQ=␇ and more"),
            "{sub:?}: {raw:?}"
        );
        assert!(
            !raw.contains('\x1b'),
            "{sub:?}: an escape reached the terminal: {raw:?}"
        );
        assert!(!raw.contains('\x07'), "{sub:?}: {raw:?}");
    }
}

/// `agents show PATH` quotes a foreign agent file: on a terminal its escapes are inert.
#[test]
fn agents_show_of_a_hostile_agent_file_leaves_the_terminal_alone() {
    let home = TestHome::new();
    let file = home.write(
        "evil.toml",
        "name = \"evil\"\ndescription = \"hi \\u001b]52;c;cHduZWQ=\\u0007 there\"\ninstructions = \"x\"\n",
    );
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
    c.env_clear();
    for (k, v) in env(&home) {
        c.env(k, v);
    }
    c.current_dir(home.path())
        .args(["agents", "show"])
        .arg(&file);
    let mut p = Pty::spawn(c);
    p.expect("there");
    assert!(p.wait_exit().success(), "{}", p.text());
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    // Positive control: the description was shown, its escape made visible.
    assert!(raw.contains("hi ␛]52;c;cHduZWQ=␇ there"), "{raw:?}");
    assert!(!raw.contains('\x1b') && !raw.contains('\x07'), "{raw:?}");
}

/// Setext headings and indented code blocks, as a terminal shows them: the underline turns the
/// line above into a heading (without colour, `# ` before it), the code keeps its spaces and
/// Markdown characters, and nothing is lost.
#[test]
fn setext_headings_and_indented_code_render_on_the_screen() {
    let home = TestHome::new();
    let answer = "Setup\n=====\n\nRun it:\n\n    make  *all*  -j4\n    ./go --fast\n\nNotes\n-----\nDone END\n";
    // In pieces, so the underline arrives after its title is on screen.
    let server = Server::start([Reply::text(
        answer.split_inclusive('\n').collect::<Vec<_>>(),
    )]);
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let argv = [bin, "chat", "--base-url", &server.url, "--model", "m"];
    let mut env = env(&home);
    env.push(("NO_COLOR", "1".into()));
    let Some(t) = Tmux::start(&argv, &env, home.path()) else {
        return;
    };
    t.wait_for("/help for commands");
    t.keys("hi");
    t.enter();
    let screen = t.wait_for("Done END");
    let want = "# Setup\n\nRun it:\n\n    make  *all*  -j4\n    ./go --fast\n\n## Notes\nDone END";
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let shown = lines.join("\n");
    assert!(shown.contains(want), "{shown}");
    assert!(!shown.contains("====="), "{shown}");
}

/// A line half typed when the prompt appears is the filter's input, not type-ahead for the
/// prompt: it is kept and comes out with the rest of its line (nothing lost).
#[test]
fn filter_keeps_a_line_half_typed_when_the_prompt_appears() {
    let home = TestHome::new();
    let out = home.path().join("out.txt");
    let mut c = Command::new("sh");
    c.env_clear();
    for (k, v) in env(&home) {
        c.env(k, v);
    }
    // The output goes to a file, so what the filter wrote is not mixed with the echo.
    c.current_dir(home.path()).args([
        "-c",
        &format!(
            "{} filter --allow echo > {}",
            env!("CARGO_BIN_EXE_skillpipe"),
            out.display()
        ),
    ]);
    let mut p = Pty::spawn(c);
    // One write: a whole line with a side effect, then the start of the next line.
    p.send(b"hello %{echo hi} world\rhalf a lx\x7fi");
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"y");
    p.expect("yes");
    p.send(b"ne and the rest\r");
    p.send(b"\x04");
    assert_eq!(p.wait_exit().code(), Some(0));
    assert_eq!(home.audit()[0]["decision"], "ran");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "hello  world\nhalf a line and the rest\n"
    );
}

/// One-shot `chat` on a terminal: a status line that arrives while the answer's line is open
/// waits for that line to end, as in the REPL, instead of being glued to it.
#[test]
fn one_shot_status_lines_start_on_a_line_of_their_own() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Here you go: %{echo hi} and\n", "Done."])]);
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
    c.env_clear();
    for (k, v) in env(&home) {
        c.env(k, v);
    }
    c.current_dir(home.path()).args([
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--allow",
        "echo",
        "-y",
        "go",
    ]);
    let mut p = Pty::spawn(c);
    p.expect("skillpipe: ran %{echo hi}");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    assert!(!shown.contains("skillpipe: ran %{echo hi} and"), "{shown}");
    assert!(!shown.contains("Done.skillpipe"), "{shown}");
    assert!(
        shown.contains("Here you go: and\n") && shown.contains("\nskillpipe: ran %{echo hi}\n"),
        "{shown}"
    );
}

/// A side effect's status line that waited for the answer's line comes right after that line,
/// not after a later one that already opened the next block (a code fence).
#[test]
fn a_waiting_status_line_comes_before_the_next_block() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([
        "Number: %{echo 42}",
        " so it is 42.\n\n```sh\nls\n```\n\nEnd.\n",
    ])
    .gap(Duration::from_millis(100))]);
    let shown = one_shot_screen(&home, &server, "echo");
    let status = shown
        .find("skillpipe: ran %{echo 42}")
        .expect("the status line");
    let code = shown.find("\nls").expect("the code block");
    assert!(status < code, "{shown}");
    assert!(shown[..status].contains("so it is 42."), "{shown}");
}

/// A capture's status line shows where it ran: the row ends at the directive and the
/// paragraph goes on from a fresh row, so a continuation that wraps is never split by it.
#[test]
fn a_captures_status_line_shows_where_it_ran_in_one_shot_chat() {
    let home = TestHome::new();
    let long = "word ".repeat(40);
    let server = Server::start([
        Reply::text(["Let me look. !{echo 42}"]),
        Reply::text([format!(" It is 42, {long}and that is all.\n\nEnd.\n")]),
    ]);
    let shown = one_shot_screen(&home, &server, "echo");
    assert!(
        shown.contains("Let me look.\nskillpipe: ran !{echo 42}\nIt is 42, word"),
        "{shown}"
    );
    // The continuation's rows follow one another, no status line among them.
    let after = &shown[shown.find("It is 42").unwrap()..shown.find("End.").unwrap()];
    assert!(!after.contains("skillpipe:"), "{shown}");
}

/// A side effect that ends while a code block streams has its status line after the block, not
/// among its lines.
#[test]
fn a_status_line_waits_for_an_open_code_block() {
    let home = TestHome::new();
    let mut pieces = vec!["Saying it %{sleep 0.2} now.\n```python\n".to_string()];
    pieces.extend((0..10).map(|i| format!("print({i})\n")));
    // The block's end and the start of the next line in one piece.
    pieces.push("```\nThe end ".into());
    pieces.push("is here.\nEnd.\n".into());
    let (shown, status, last) = placed(&home, pieces, 40, "sleep", "print(9)");
    assert!(status > last, "{shown}");
    // Not in the middle of the line after the block either.
    assert!(shown.contains("The end is here."), "{shown}");
}

/// A side effect's status line waits for the end of the paragraph being written, not for a
/// row the terminal is full at: a wrap is no line's end.
#[test]
fn a_side_effects_status_line_never_lands_at_a_wrap() {
    let home = TestHome::new();
    let mut pieces = vec!["Saying it %{echo hi} now, ".to_string()];
    pieces.extend((0..80).map(|i| format!("word{i} ")));
    pieces.push("last.\n\nEnd.\n".into());
    let (shown, status, last) = placed(&home, pieces, 5, "echo", "last.");
    assert!(status > last, "{shown}");
    // Control: the paragraph did wrap (more than one row before its end).
    assert!(shown[..last].matches('\n').count() >= 2, "{shown}");
}

/// The one-shot screen of an answer streamed in `pieces` (`gap_ms` apart) that runs `allow`
/// once as a side effect, and where its `ran` status line and `mark` stand on it.
fn placed(
    home: &TestHome,
    pieces: Vec<String>,
    gap_ms: u64,
    allow: &str,
    mark: &str,
) -> (String, usize, usize) {
    let server = Server::start([Reply::text(pieces).gap(Duration::from_millis(gap_ms))]);
    let shown = one_shot_screen(home, &server, allow);
    let status = shown
        .find(&format!("skillpipe: ran %{{{allow}"))
        .unwrap_or_else(|| panic!("the status line: {shown}"));
    let at = shown
        .find(mark)
        .unwrap_or_else(|| panic!("{mark}: {shown}"));
    (shown, status, at)
}

/// The screen of a one-shot `chat` on a pty against `server`, allowing `allow`, once its
/// answer (ending in `End.`) is through and it exited 0.
fn one_shot_screen(home: &TestHome, server: &Server, allow: &str) -> String {
    let args = [
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--allow",
        allow,
        "-y",
        "go",
    ];
    let mut p = on_pty(home, env!("CARGO_BIN_EXE_skillpipe"), &args);
    p.expect("End.");
    assert_eq!(p.wait_exit().code(), Some(0));
    p.text()
}

/// `cmd` on a pty with the test environment, run from `home`.
fn on_pty(home: &TestHome, program: &str, args: &[&str]) -> Pty {
    let mut c = Command::new(program);
    c.env_clear();
    for (k, v) in env(home) {
        c.env(k, v);
    }
    c.env("NO_COLOR", "1").current_dir(home.path()).args(args);
    Pty::spawn(c)
}

/// The confirmation prompt names every invisible or format character it shows (tags, bidi and
/// Arabic marks, the soft hyphen, Hangul and Braille fillers, variation selectors, the
/// combining grapheme joiner, the Mongolian vowel separator, the line separator) as
/// `⟨U+XXXX⟩`; a visible accented letter beside them stays as written (the control).
#[test]
fn the_prompt_names_invisible_characters() {
    let home = TestHome::new();
    let hidden = [
        '\u{E0041}',
        '\u{061C}',
        '\u{00AD}',
        '\u{3164}',
        '\u{115F}',
        '\u{2800}',
        '\u{FE0F}',
        '\u{E0100}',
        '\u{034F}',
        '\u{180E}',
        '\u{2028}',
        '\u{200B}',
    ];
    let word: String = hidden.iter().flat_map(|c| ['é', *c]).collect();
    home.write("answer.txt", &format!("a %{{printf x{word}y}} b\n"));
    let script = format!(
        "{} filter --allow printf < answer.txt > out.txt",
        env!("CARGO_BIN_EXE_skillpipe")
    );
    let mut p = on_pty(&home, "sh", &["-c", &script]);
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"n");
    p.wait_exit();
    let shown = p.text();
    let named: String = hidden
        .iter()
        .map(|c| format!("é⟨U+{:04X}⟩", *c as u32))
        .collect();
    assert!(shown.contains(&format!("'x{named}y'`?")), "{shown}");
    for c in hidden {
        assert!(!shown.contains(c), "U+{:04X} shown raw: {shown}", c as u32);
    }
}

/// The audit says the command was not run because of Ctrl-C at the prompt (a reason only the
/// raw key produces: a SIGINT from the terminal would leave no declined line).
fn assert_interrupted_at_the_prompt(home: &TestHome, argv0: &str) {
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["argv"][0], argv0, "{audit:?}");
    assert_eq!(audit[0]["decision"], "declined", "{audit:?}");
    assert_eq!(
        audit[0]["reason"], "interrupted by SIGINT (Ctrl-C at the prompt): not run",
        "{audit:?}"
    );
}

/// Ctrl-C at the prompt is "stop", not "no": the filter ends as on SIGINT (exit 130), the rest
/// of its input is not run, even when the key comes within the guard interval.
#[test]
fn ctrl_c_at_the_prompt_stops_the_filter_as_sigint() {
    let home = TestHome::new();
    let script = format!(
        "printf 'a %%{{echo one}} b\\nc %%{{echo two}} d\\n' | {} filter --allow echo > out.txt",
        env!("CARGO_BIN_EXE_skillpipe")
    );
    let mut p = on_pty(&home, "sh", &["-c", &script]);
    p.expect("run `echo one`?");
    p.expect("(Enter = no)");
    // Within the guard: Ctrl-C still counts (stopping runs nothing).
    p.send(b"\x03");
    p.expect("interrupted");
    p.expect("skillpipe: stopped by SIGINT");
    assert_eq!(p.wait_exit().code(), Some(130));
    assert_interrupted_at_the_prompt(&home, "echo");
    assert!(!p.text().contains("echo two`?"), "{}", p.text());
}

/// A signal while a prompt waits for its key stops skillpipe as it would anywhere else (exit
/// 128 + the signal): the prompt gives way, it does not hold the terminal until a key comes.
#[test]
fn a_signal_at_the_prompt_stops_the_filter() {
    let home = TestHome::new();
    let script = format!(
        "printf 'a %%{{echo one}} b\\n' | {} filter --allow echo > out.txt & echo $! > pid; wait $!",
        env!("CARGO_BIN_EXE_skillpipe")
    );
    let mut p = on_pty(&home, "sh", &["-c", &script]);
    p.expect("(Enter = no)");
    term_the_pid_in(home.path());
    p.expect("stopped by SIGTERM");
    assert_eq!(p.wait_exit().code(), Some(143));
    assert!(
        home.audit().iter().all(|r| r["decision"] != "ran"),
        "{:?}",
        home.audit()
    );
}

/// One-shot `chat` and `run`: Ctrl-C at the prompt exits 130 with the command audited as not run.
#[test]
fn ctrl_c_at_the_prompt_stops_one_shot_chat_and_run() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["Let me look: !{echo 42}"]),
        Reply::text(["never asked for"]),
    ]);
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let args = [
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--allow",
        "echo",
        "what is it?",
    ];
    let mut p = on_pty(&home, bin, &args);
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"\x03");
    p.expect("interrupted");
    p.expect("skillpipe: stopped by SIGINT");
    assert_eq!(p.wait_exit().code(), Some(130));
    assert_interrupted_at_the_prompt(&home, "echo");
    assert_eq!(server.requests().len(), 1, "the model was not asked again");
    // The prompt ended its line and no ^C was echoed: no blank line before the status line.
    let shown = p.text();
    assert!(
        shown.contains("interrupted\nskillpipe: stopped by SIGINT"),
        "{shown:?}"
    );

    let home = TestHome::new();
    home.write(
        "sk/hi/SKILL.md",
        "---\nname: hi\ndescription: Says hi.\n---\nSay hi.\n",
    );
    home.write("sk/hi/scripts/hello.sh", "#!/bin/sh\necho hello\n");
    let args = [
        "run",
        "hi",
        "hello",
        "--skills-dir",
        "sk",
        "--allow-scripts",
    ];
    let mut p = on_pty(&home, bin, &args);
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"\x03");
    p.expect("skillpipe: stopped by SIGINT");
    assert_eq!(p.wait_exit().code(), Some(130));
    assert_interrupted_at_the_prompt(&home, "hi/scripts/hello.sh");
    assert!(!p.text().contains("hello\n"), "{}", p.text());
}

/// A status line on stderr starts at the beginning of a line when the shared terminal's cursor
/// is mid-line: after a side effect's output without a newline (`--show-side-effects`, filter
/// and one-shot chat) and after an answer cut off by Ctrl-C; at column 0 no blank line is added.
#[test]
fn status_lines_start_a_line_after_output_left_open() {
    let home = TestHome::new();
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let script = format!(
        "printf 'a %%{{printf red}} b %%{{false}} c\\n' | {bin} filter --allow printf \
         --allow false -y --show-side-effects"
    );
    let mut p = on_pty(&home, "sh", &["-c", &script]);
    p.expect("skillpipe: failed: %{false}: exit 1");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    assert!(shown.contains("red\nskillpipe: failed"), "{shown:?}");
    assert!(!shown.contains("\n\nskillpipe"), "a blank line: {shown:?}");

    let server = Server::start([Reply::text(["Here: %{printf red}\n", "Done."])]);
    let args = [
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--allow",
        "printf",
        "-y",
        "--show-side-effects",
        "go",
    ];
    let mut p = on_pty(&home, bin, &args);
    p.expect("Done.");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    // On a terminal the output goes under its status line, marked as a side effect's.
    assert!(
        shown.contains("skillpipe: ran %{printf red} — side effect output:\n  ┆ red\n"),
        "{shown:?}"
    );

    // Ctrl-C mid-answer: the terminal echoes ^C after the open line; the status line follows
    // on a line of its own.
    let server = Server::start([Reply::text(["The first w"]).stall_after(1)]);
    let args = ["chat", "--base-url", &server.url, "--model", "m", "go"];
    let mut p = on_pty(&home, bin, &args);
    p.expect("The first w");
    p.send(b"\x03");
    p.expect("skillpipe: stopped by SIGINT");
    assert_eq!(p.wait_exit().code(), Some(130));
    let shown = p.text();
    assert!(
        shown.contains("The first w^C\nskillpipe: stopped by SIGINT"),
        "{shown:?}"
    );

    // At column 0 (`--raw`: the line end is not held for a heading underline) the echoed ^C
    // alone leaves the cursor mid-line.
    let server = Server::start([Reply::text(["A whole line.\n"]).stall_after(1)]);
    let args = [
        "chat",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--raw",
        "go",
    ];
    let mut p = on_pty(&home, bin, &args);
    p.expect("A whole line.\n");
    p.send(b"\x03");
    p.expect("skillpipe: stopped by SIGINT");
    assert_eq!(p.wait_exit().code(), Some(130));
    let shown = p.text();
    assert!(
        shown.contains("A whole line.\n^C\nskillpipe: stopped by SIGINT"),
        "{shown:?}"
    );
}

/// The text that leads to a directive is on screen when its confirmation is asked, also when
/// Markdown would hold it back (an emphasis marker still waiting for its closer), in the REPL
/// and in one-shot chat, for a capture and a side effect.
#[test]
fn the_text_before_a_directive_is_on_screen_when_it_asks() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["I will *compute it for you: !{echo 42}"]),
        Reply::text([" ok."]),
        Reply::text(["I will *say it for you: %{echo 43}"]),
    ]);
    let mut p = repl(&home, &server);
    p.send(b"compute\r");
    p.expect("I will *compute it for you:");
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"n");
    p.expect("ok.");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    let mut p = on_pty(
        &home,
        env!("CARGO_BIN_EXE_skillpipe"),
        &[
            "chat",
            "--base-url",
            &server.url,
            "--model",
            "m",
            "--allow",
            "echo",
            "say it",
        ],
    );
    p.expect("I will *say it for you:");
    p.expect("(Enter = no)");
    past_guard();
    p.send(b"n");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// On a narrow terminal the confirmation prompt is broken at spaces (rows no wider than the
/// terminal, room left for the answer), never mid-word by the terminal; "yes" ends its row.
#[test]
fn the_prompt_fits_a_narrow_terminal_at_words() {
    let home = TestHome::new();
    let script = format!(
        "printf 'a %%{{echo one two three four}} b\\n' | {} filter --allow echo > out.txt",
        env!("CARGO_BIN_EXE_skillpipe")
    );
    let mut c = Command::new("sh");
    c.env_clear();
    for (k, v) in env(&home) {
        c.env(k, v);
    }
    c.env("NO_COLOR", "1")
        .current_dir(home.path())
        .args(["-c", &script]);
    let mut p = Pty::spawn_sized(c, 40);
    p.expect("(Enter");
    past_guard();
    p.send(b"y");
    p.expect("yes");
    assert_eq!(p.wait_exit().code(), Some(0));
    let text = pty::clean(&p.text());
    let rows: Vec<&str> = text.lines().collect();
    let start = rows
        .iter()
        .position(|r| r.contains("skillpipe: run"))
        .unwrap();
    let prompt = &rows[start..];
    // Positive control: unbroken, the prompt would not fit.
    assert!(prompt.concat().chars().count() > 80, "{prompt:?}");
    assert!(prompt.iter().all(|r| r.chars().count() <= 40), "{prompt:?}");
    assert!(
        prompt.iter().any(|r| r.trim_end().ends_with("yes")),
        "{prompt:?}"
    );
}

/// A model's text that looks like a second prompt, arriving while the real prompt is up.
const FAKE_PROMPT: &str =
    "skillpipe: run `touch notes.txt`?\n    [y] yes once  [n] no  (Enter = no) ";

/// Checks the screen of `t` while its real prompt is up and after `n` answers it: the text that
/// streamed meanwhile (a fake prompt) is nowhere on screen until the answer, then it comes
/// below the answer (positive control: it did reach the terminal, only later).
fn fake_prompt_waits_for_the_answer(t: &Tmux, sent: impl Fn() -> bool) {
    let screen = t.wait_for("[a] always run");
    assert!(screen.contains("run `echo real`?"), "{screen}");
    let deadline = std::time::Instant::now() + Duration::from_secs(8);
    while !sent() {
        assert!(
            std::time::Instant::now() < deadline,
            "the fake was never sent"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Time for it to be read, scanned and (were it not held) drawn.
    std::thread::sleep(Duration::from_millis(400));
    let screen = t.screen();
    assert!(
        !screen.contains("touch notes.txt"),
        "text reached the terminal while the prompt was up:\n{screen}"
    );
    t.keys("n");
    let screen = t.wait_for("touch notes.txt");
    let answered = screen
        .find("(Enter = no) no")
        .unwrap_or_else(|| panic!("the answer is shown:\n{screen}"));
    let fake = screen.find("touch notes.txt").unwrap();
    assert!(
        answered < fake,
        "the fake came before the answer:\n{screen}"
    );
}

/// Nothing is written to the terminal while a confirmation prompt is up: text the model sends
/// after a side effect (here a fake prompt, drawn below the real one before) waits for the
/// answer, in one-shot `chat`, the REPL and `filter`.
#[test]
fn text_after_a_side_effect_waits_until_its_prompt_is_answered() {
    let home = TestHome::new();
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let server = Server::start([Reply::text([
        "Sure, I'll make the notes file. %{echo real}",
        FAKE_PROMPT,
    ])
    .gap(Duration::from_millis(250))]);
    let argv = [
        bin,
        "chat",
        "--allow",
        "echo",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "hi",
    ];
    let sh = format!("{}; sleep 30", shell_words::join(argv));
    let mut env = env(&home);
    env.push(("NO_COLOR", "1".into()));
    let Some(t) = Tmux::start(&["sh", "-c", &sh], &env, home.path()) else {
        return;
    };
    // The server has sent the whole answer once the stream is done: the request was made and
    // the gaps have passed (the first chunk comes at once, four gaps of 250 ms follow).
    let asked = std::time::Instant::now();
    fake_prompt_waits_for_the_answer(&t, || {
        !server.requests().is_empty() && asked.elapsed() > Duration::from_millis(1200)
    });
    t.wait_for("skillpipe: declined");
    assert_eq!(home.audit()[0]["decision"], "declined");

    // The REPL, the same way.
    let home = TestHome::new();
    server.push(
        Reply::text(["Sure, I'll make the notes file. %{echo real}", FAKE_PROMPT])
            .gap(Duration::from_millis(250)),
    );
    let mut env = self::env(&home);
    env.push(("NO_COLOR", "1".into()));
    let Some(t) = Tmux::start(&argv[..argv.len() - 1], &env, home.path()) else {
        return;
    };
    t.wait_for("/help for commands");
    t.keys("hi");
    t.enter();
    let asked = std::time::Instant::now();
    fake_prompt_waits_for_the_answer(&t, || asked.elapsed() > Duration::from_millis(1200));
    t.wait_for("· declined");
    assert_eq!(home.audit()[0]["decision"], "declined");

    let home = TestHome::new();
    let sent = home.path().join("sent");
    let sh = format!(
        "{{ printf 'Sure. %%{{echo real}}'; sleep 0.2; printf '{}'; touch {}; }} | {bin} filter \
         --allow echo; sleep 30",
        FAKE_PROMPT.replace('\n', "\\n"),
        sent.display()
    );
    let mut env = self::env(&home);
    env.push(("NO_COLOR", "1".into()));
    let Some(t) = Tmux::start(&["sh", "-c", &sh], &env, home.path()) else {
        return;
    };
    fake_prompt_waits_for_the_answer(&t, || sent.exists());
    t.wait_for("skillpipe: declined");
    assert_eq!(home.audit()[0]["decision"], "declined");
}

/// A command whose argument hides 3000 spaces: on an 80×24 terminal the prompt shows the
/// program, every argument's start and a marker counting the spaces, all on screen.
#[test]
fn whitespace_cannot_push_the_command_off_the_prompt() {
    let home = TestHome::new();
    let body = format!("bash -c 'rm -rf gone;{}echo hello'", " ".repeat(3000));
    let input = home.write("long.txt", &format!("Tidy. %{{{body}}} done.\n"));
    // Positive control: whole, the command alone would take more rows than the window has.
    assert!(body.len() / 80 > 24);
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let sh = format!("{bin} filter --allow bash < {}; sleep 30", input.display());
    let mut env = env(&home);
    env.push(("NO_COLOR", "1".into()));
    let Some(t) = Tmux::start_sized(&["sh", "-c", &sh], &env, home.path(), (80, 24)) else {
        return;
    };
    let screen = t.wait_for("(Enter = no)");
    assert!(
        screen.contains("skillpipe: run `bash -c 'rm -rf gone;⟨3000\u{a0}spaces⟩echo hello'`?"),
        "{screen}"
    );
    assert!(
        screen.contains("[a] always run exactly the command above"),
        "{screen}"
    );
    past_guard();
    t.keys("n");
    t.wait_for("declined");
}

/// The key guard runs from when the prompt is drawn: on a terminal that does not answer the
/// cursor query (this pty), the prompt appears only after that wait, and a key 200 ms after it
/// appears is still discarded.
#[test]
fn the_key_guard_starts_when_the_prompt_is_on_screen() {
    let home = TestHome::new();
    let script = format!(
        "printf 'a %%{{echo one}} b\\n' | {} filter --allow echo > out.txt",
        env!("CARGO_BIN_EXE_skillpipe")
    );
    let mut p = on_pty(&home, "sh", &["-c", &script]);
    p.expect("(Enter = no)");
    std::thread::sleep(Duration::from_millis(200));
    p.send(b"y");
    past_guard();
    assert!(
        home.audit().is_empty(),
        "answered inside the guard: {:?}",
        home.audit()
    );
    // Positive control: after the guard, a key answers.
    p.send(b"n");
    p.expect("no");
    assert_eq!(p.wait_exit().code(), Some(0));
    assert_eq!(home.audit()[0]["decision"], "declined");
}

/// The paragraph's words, each screen row of it ending at a word: rows of `shown` from the one
/// starting with `first` up to the row that ends with `last`.
fn paragraph_rows<'a>(shown: &'a str, first: &str, last: &str) -> Vec<&'a str> {
    let rows: Vec<&str> = shown.lines().map(str::trim_end).collect();
    let start = rows
        .iter()
        .position(|r| r.starts_with(first))
        .unwrap_or_else(|| panic!("no row starts with {first:?}:\n{shown}"));
    let end = rows[start..]
        .iter()
        .position(|r| r.ends_with(last))
        .unwrap_or_else(|| panic!("no row ends with {last:?}:\n{shown}"));
    rows[start..=start + end].to_vec()
}

/// Whether `rows` are `text` wrapped at words to at most `width` columns, each row as full as
/// the next word allows (`Err` says how not).
fn wrapped(rows: &[&str], text: &str, width: usize) -> Result<(), String> {
    if rows.join(" ") != text {
        return Err("words lost or split".into());
    }
    for pair in rows.windows(2) {
        let next_word = pair[1].split(' ').next().unwrap();
        if pair[0].chars().count() + 1 + next_word.chars().count() <= width {
            return Err(format!(
                "{:?} would have taken {next_word:?} at {width} columns",
                pair[0]
            ));
        }
    }
    match rows.iter().all(|r| r.chars().count() <= width) {
        true => Ok(()),
        false => Err(format!("a row wider than {width}")),
    }
}

/// Whether the screen shows the owls paragraph wrapped at words to `width`.
fn owls_wrapped(shown: &str, width: usize) -> bool {
    let rows: Vec<&str> = shown.lines().map(str::trim_end).collect();
    let Some(start) = rows.iter().position(|r| r.starts_with("Owls are")) else {
        return false;
    };
    let Some(end) = rows[start..].iter().position(|r| r.ends_with("silent.")) else {
        return false;
    };
    wrapped(&rows[start..=start + end], OWLS, width).is_ok()
}

/// Asserts that `rows` are `text` wrapped at words to at most `width` columns, each row as full
/// as the next word allows.
fn assert_wrapped(rows: &[&str], text: &str, width: usize, shown: &str) {
    if let Err(e) = wrapped(rows, text, width) {
        panic!("{e}:\n{shown}");
    }
}

const OWLS: &str = "Owls are birds of prey that hunt mostly at night. They have large eyes, \
                    a flat face and very soft feathers, so their flight is almost silent.";

/// A resize while the REPL waits at its prompt: the screen shows the earlier answer wrapped at
/// words to the new width, as if the window had always had it (a re-wrapping terminal such as
/// tmux otherwise cuts its rows mid-word), with the prompt and what the user has typed so far
/// under it, once.
#[test]
fn the_repl_lays_its_screen_out_again_after_a_resize() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::chunked(&format!("{OWLS}\n\nEND ONE"), 7),
        Reply::text(["Short second answer. END TWO"]),
    ]);
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let argv = [bin, "chat", "--base-url", &server.url, "--model", "m"];
    let Some(t) = Tmux::start_sized(&argv, &env(&home), home.path(), (80, 30)) else {
        return;
    };
    t.wait_for("/help for commands");
    t.keys("tell me about owls");
    t.enter();
    let shown = t.wait_for("END ONE");
    assert_wrapped(
        &paragraph_rows(&shown, "Owls are", "silent."),
        OWLS,
        80,
        &shown,
    );
    t.keys("and");
    t.wait_for("m> and");
    t.resize((40, 30));
    let shown = t.wait_until("the answer laid out at 40 columns", |s| owls_wrapped(s, 40));
    let last = shown.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(last.trim_end(), "m> and", "{shown}");
    assert_eq!(shown.matches("m> and").count(), 1, "{shown}");
    assert!(shown.contains("/help for commands"), "{shown}");
    // Wider again while typing; then the line entered, whole.
    t.keys(" more");
    t.resize((60, 30));
    t.wait_until("the answer laid out at 60 columns", |s| owls_wrapped(s, 60));
    t.enter();
    let shown = t.wait_for("END TWO");
    assert_wrapped(
        &paragraph_rows(&shown, "Owls are", "silent."),
        OWLS,
        60,
        &shown,
    );
    // The exchange is all there, once, in order.
    let order = [
        "tell me about owls",
        "Owls are",
        "END ONE",
        "and more",
        "END TWO",
    ];
    let at: Vec<usize> = order.iter().map(|w| shown.find(w).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{shown}");
    assert_eq!(shown.matches("Owls are").count(), 1, "{shown}");
}

/// A resize while an answer streams: the next piece lays the screen out again at the new width,
/// the part already shown included, and the answer goes on from there.
#[test]
fn a_resize_mid_answer_rewraps_what_was_shown() {
    let home = TestHome::new();
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let rest = " The rest came after the resize. END";
    let server =
        Server::start(
            [Reply::text([format!("{OWLS}\n\nSo far"), rest.to_string()])
                .hold_after(1, release.clone())],
        );
    let bin = env!("CARGO_BIN_EXE_skillpipe");
    let argv = [bin, "chat", "--base-url", &server.url, "--model", "m"];
    let Some(t) = Tmux::start_sized(&argv, &env(&home), home.path(), (80, 30)) else {
        return;
    };
    t.wait_for("/help for commands");
    t.keys("owls");
    t.enter();
    let shown = t.wait_for("silent.");
    assert_wrapped(
        &paragraph_rows(&shown, "Owls are", "silent."),
        OWLS,
        80,
        &shown,
    );
    t.resize((44, 30));
    release.notify_one();
    let shown = t.wait_for("END");
    assert_wrapped(
        &paragraph_rows(&shown, "Owls are", "silent."),
        OWLS,
        44,
        &shown,
    );
    assert!(
        shown.contains("So far The rest came after the resize."),
        "{shown}"
    );
    assert_eq!(shown.matches("owls").count(), 1, "{shown}");
}

const AFTER: &str = "then the rest of the sentence arrives while the question waits and wraps END";

/// Text that streams while a confirmation waits is shown after the answer to it, from the start
/// of a fresh row and wrapped from there (not as if still on the row the prompt went under);
/// a resize while the question waits keeps that order when the screen is laid out again.
#[test]
fn text_after_a_confirmation_starts_a_fresh_row_also_after_a_resize() {
    for resize in [false, true] {
        let home = TestHome::new();
        // The rest is sent once the question is up, so it arrives while it waits.
        let release = std::sync::Arc::new(tokio::sync::Notify::new());
        let server =
            Server::start([Reply::text(["Start of the answer %{echo hi} ", AFTER])
                .hold_after(1, release.clone())]);
        let bin = env!("CARGO_BIN_EXE_skillpipe");
        let argv = [
            bin,
            "chat",
            "--base-url",
            &server.url,
            "--model",
            "m",
            "--allow",
            "echo",
        ];
        let mut env = env(&home);
        env.push(("NO_COLOR", "1".into()));
        let Some(t) = Tmux::start_sized(&argv, &env, home.path(), (60, 30)) else {
            return;
        };
        t.wait_for("/help for commands");
        t.keys("go");
        t.enter();
        t.wait_for("Enter = no");
        if resize {
            t.resize((34, 30));
        }
        release.notify_one();
        // Keys typed sooner after the question is drawn are taken as typed ahead, not as the
        // answer.
        std::thread::sleep(skillpipe::confirm::GUARD + Duration::from_millis(100));
        t.keys("y");
        let shown = t.wait_for("wraps END");
        let width = if resize { 34 } else { 60 };
        let rows: Vec<&str> = shown.lines().map(str::trim_end).collect();
        let yes = rows
            .iter()
            .position(|r| r.ends_with("yes"))
            .unwrap_or_else(|| panic!("no answer to the prompt:\n{shown}"));
        let first = rows
            .iter()
            .position(|r| r.starts_with("then the rest"))
            .unwrap_or_else(|| panic!("the text does not start a row:\n{shown}"));
        assert!(yes < first, "the text came before the answer:\n{shown}");
        let last = first
            + rows[first..]
                .iter()
                .position(|r| r.ends_with("END"))
                .unwrap();
        if let Err(e) = wrapped(&rows[first..=last], AFTER, width) {
            panic!("{e} (resize: {resize}):\n{shown}");
        }
        assert!(shown.contains("Start of the answer"), "{shown}");
    }
}

/// The screen laid out again after a resize keeps the notes printed before the prompt (here:
/// which model the endpoint serves) and, with stderr away from the screen, still lays out
/// what is on it.
#[test]
fn a_redraw_keeps_notes_and_works_with_stderr_elsewhere() {
    for stderr_away in [false, true] {
        let home = TestHome::new();
        let server = Server::start([Reply::chunked(&format!("{OWLS}\n\nEND ONE"), 9)]);
        server.set_models(&["only-model"]);
        let bin = env!("CARGO_BIN_EXE_skillpipe");
        let cmd = format!(
            "{bin} chat --base-url {}{}",
            server.url,
            if stderr_away { " 2>/dev/null" } else { "" }
        );
        let Some(t) = Tmux::start_sized(&["sh", "-c", &cmd], &env(&home), home.path(), (80, 30))
        else {
            return;
        };
        t.wait_for("only-model>");
        t.keys("owls");
        t.enter();
        t.wait_for("END ONE");
        t.resize((40, 30));
        let shown = t.wait_until("the answer laid out at 40 columns", |s| owls_wrapped(s, 40));
        // The welcome line and the note go to stderr.
        if stderr_away {
            assert!(!shown.contains("skillpipe 0.1.0"), "{shown}");
        } else {
            assert!(shown.contains("skillpipe 0.1.0"), "{shown}");
            assert!(
                shown.contains("using only-model"),
                "the note was lost:\n{shown}"
            );
        }
    }
}

/// One-shot chat on a pty (its pid in `home/pid`), the model answering `answer` and then going
/// quiet, `program` allowed; returns (with its server) once an audit line of `phase` is written.
fn quiet_chat_on_pty(home: &TestHome, answer: &str, program: &str, phase: &str) -> (Pty, Server) {
    let server = Server::start([Reply::text([answer]).stall_after(1)]);
    let script = format!(
        "{} chat --base-url {} --model m --allow {program} -y --sandbox best-effort hi & echo $! > pid; wait $!",
        env!("CARGO_BIN_EXE_skillpipe"),
        server.url
    );
    let p = on_pty(home, "sh", &["-c", &script]);
    let started = std::time::Instant::now();
    while !home.audit_all().iter().any(|r| r["phase"] == phase) {
        assert!(started.elapsed() < Duration::from_secs(10), "no {phase}");
        std::thread::sleep(Duration::from_millis(20));
    }
    (p, server)
}

/// One-shot chat on a terminal, stopped by SIGTERM while a side effect runs and the model's line
/// is open: the side effect's report still comes out, on a line of its own, before the exit.
#[test]
fn a_signal_reports_the_side_effect_it_stopped_on_a_terminal() {
    let home = TestHome::new();
    let (mut p, _server) = quiet_chat_on_pty(&home, "Wait.%{sleep 30}", "sleep", "started");
    term_the_pid_in(home.path());
    p.expect("stopped by SIGTERM");
    assert_eq!(p.wait_exit().code(), Some(143));
    let text = p.text();
    assert!(
        text.contains("Wait.\nskillpipe: failed: %{sleep 30}"),
        "{text}"
    );
    assert_eq!(home.audit_all().last().unwrap()["phase"], "completed");
}

/// The same for a side effect that ended before the signal, its report held for the model's
/// open line: the stop writes it before it says so.
#[test]
fn a_signal_writes_the_reports_held_for_an_open_line() {
    let home = TestHome::new();
    let (mut p, _server) = quiet_chat_on_pty(&home, "Start %{false} more", "false", "completed");
    p.expect("Start more");
    std::thread::sleep(Duration::from_millis(300));
    term_the_pid_in(home.path());
    p.expect("stopped by SIGTERM");
    assert_eq!(p.wait_exit().code(), Some(143));
    let text = p.text();
    assert!(
        text.contains("Start more\nskillpipe: failed: %{false}: exit 1\nskillpipe: stopped by"),
        "{text}"
    );
}

/// A signal while one-shot chat's prompt waits for its key stops skillpipe (exit 128 + the
/// signal), as it does the filter: the prompt does not hold the runtime the handler runs on.
#[test]
fn a_signal_at_the_prompt_stops_one_shot_chat() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Now %{echo one} done."])]);
    let script = format!(
        "{} chat --base-url {} --model m --allow echo hi & echo $! > pid; wait $!",
        env!("CARGO_BIN_EXE_skillpipe"),
        server.url
    );
    let mut p = on_pty(&home, "sh", &["-c", &script]);
    p.expect("(Enter = no)");
    term_the_pid_in(home.path());
    p.expect("stopped by SIGTERM");
    assert_eq!(p.wait_exit().code(), Some(143));
    assert!(
        home.audit().iter().all(|r| r["decision"] != "ran"),
        "{:?}",
        home.audit()
    );
}

/// Sends SIGTERM to the process whose id the test's shell wrote to `dir/pid`.
fn term_the_pid_in(dir: &std::path::Path) {
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let killed = Command::new("kill")
        .args(["-TERM", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
}
