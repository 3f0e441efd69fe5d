//! The interactive REPL end to end: the built binary on a pseudo-terminal, against the in-test
//! model server.

use crate::common;
use crate::common::pty;

use common::{Reply, Server, TestHome};
use pty::Pty;
use serde_json::Value;
use std::process::Command;

/// `skillpipe chat` on a terminal, with a clean environment rooted in `home`.
fn repl_cmd(home: &TestHome, server: &Server, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("TERM", "xterm-256color")
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .current_dir(home.path())
        .args(["chat", "--base-url", &server.url, "--model", "test-model"])
        .args(extra);
    c
}

fn start(home: &TestHome, server: &Server, extra: &[&str]) -> Pty {
    let mut p = Pty::spawn(repl_cmd(home, server, extra));
    // The end of the welcome line ("… · /help for commands", wrapped at words).
    p.expect("commands");
    p.prompt();
    p
}

/// The messages of request `i` after the system prompt, if there is one.
fn conversation(server: &Server, i: usize) -> Vec<(String, String)> {
    let mut m = messages(server, i);
    if m.first().is_some_and(|(role, _)| role == "system") {
        m.remove(0);
    }
    m
}

/// The messages of request `i`, as (role, content) pairs.
fn messages(server: &Server, i: usize) -> Vec<(String, String)> {
    server.requests()[i]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or("").to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn pair(role: &str, content: &str) -> (String, String) {
    (role.to_string(), content.to_string())
}

#[test]
fn answers_stream_tokens_show_and_ctrl_d_exits() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Hel", "lo ", "there"]).usage(12, 3)]);
    let mut p = start(&home, &server, &[]);

    // Ctrl-C at the prompt drops the line and keeps the REPL.
    p.send(b"never sent\x03");
    p.expect("Ctrl-D or /exit leaves");
    p.prompt();

    p.send(b"hi\r");
    p.expect("Hello there");
    p.expect("\u{21b3} 12 prompt + 3 completion tokens");
    p.prompt();

    p.send(b"/copy\r");
    p.expect("clipboard");
    p.prompt();
    let osc52 = "\x1b]52;c;SGVsbG8gdGhlcmU=\x07"; // base64("Hello there")
    assert!(
        String::from_utf8_lossy(&p.raw()).contains(osc52),
        "no OSC 52 sequence for the last answer"
    );

    p.send(b"\x04");
    assert_eq!(p.wait_exit().code(), Some(0));

    let m = messages(&server, 0);
    assert_eq!(m.last().unwrap(), &pair("user", "hi"));
    assert_eq!(server.requests().len(), 1);
    let history = std::fs::read_to_string(home.path().join("state/skillpipe/history")).unwrap();
    assert!(history.lines().any(|l| l == "hi"), "{history}");
    assert!(history.lines().any(|l| l == "/copy"), "{history}");
    assert!(!history.contains("never sent"), "{history}");
    // Colour on a terminal: the token line is dim.
    assert!(String::from_utf8_lossy(&p.raw()).contains("\x1b[2m"));
}

/// A capture on the line after a sentence: the status line comes right under the prompt's
/// answer (no blank line from the newline the renderer held back after the sentence).
#[test]
fn a_capture_after_a_line_leaves_no_blank_line() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["Let me check:\n", "!{echo 42}"]),
        Reply::text(["It is 42."]),
    ]);
    let mut cmd = repl_cmd(&home, &server, &["--allow", "echo"]);
    cmd.env("NO_COLOR", "1");
    let mut p = Pty::spawn(cmd);
    p.expect("commands");
    p.prompt();
    p.send(b"q\r");
    p.expect("(Enter = no)");
    std::thread::sleep(skillpipe::confirm::GUARD + std::time::Duration::from_millis(150));
    p.send(b"y");
    p.expect("It is 42.");
    p.prompt();
    let shown = p.text();
    assert!(shown.contains("yes\n· ran !{echo 42}"), "{shown}");

    // A side effect's prompt after the answer's last line: no blank line after its status.
    server.push(Reply::text(["Sure:\n%{echo hi}", "Done."]));
    p.send(b"again\r");
    p.expect("(Enter = no)");
    std::thread::sleep(skillpipe::confirm::GUARD + std::time::Duration::from_millis(150));
    p.send(b"y");
    p.expect("· ran %{echo hi}");
    p.prompt();
    let shown = p.text();
    assert!(!shown.contains("· ran %{echo hi}\n\n"), "{shown}");
    assert!(!shown.contains("yes\n\n"), "{shown}");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

#[test]
fn capture_asks_for_confirmation_and_runs_after_y() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["The answer is !{echo 42}", " and more"]),
        Reply::text([" forty-two."]),
    ]);
    let mut cmd = repl_cmd(&home, &server, &["--allow", "echo"]);
    cmd.env("NO_COLOR", "1");
    let mut p = Pty::spawn(cmd);
    p.expect("commands");
    p.prompt();

    p.send(b"what is it?\r");
    p.expect("The answer is");
    p.expect("run `echo 42`?");
    p.expect("(Enter = no)");
    // Keys count only after the guard interval.
    std::thread::sleep(skillpipe::confirm::GUARD + std::time::Duration::from_millis(150));
    p.send(b"y");
    p.expect("ran !{echo 42}");
    p.expect("forty-two.");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    assert_eq!(server.requests().len(), 2);
    let m = messages(&server, 1);
    let n = m.len();
    assert_eq!(m[n - 2], pair("assistant", "The answer is !{echo 42}"));
    assert_eq!(m[n - 1].1, "Output: 42 — continue your answer.");
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "ran");
    // NO_COLOR: no SGR styling from skillpipe (dim status lines, the green prompt).
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(!raw.contains("\x1b[2m"), "dim styling despite NO_COLOR");
    assert!(
        !raw.contains("\x1b[38;5;"),
        "coloured prompt despite NO_COLOR"
    );
}

#[test]
fn ctrl_c_mid_stream_cancels_and_keeps_the_partial_answer() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["partial ", "answer", " never shown"]).stall_after(2),
        Reply::text(["second answer"]),
    ]);
    let mut p = start(&home, &server, &[]);

    p.send(b"first\r");
    p.expect("partial answer");
    p.send(b"\x03");
    p.expect("cancelled");
    p.prompt();

    p.send(b"again\r");
    p.expect("second answer");
    p.prompt();
    p.send(b"\x04");
    assert_eq!(
        p.wait_exit().code(),
        Some(0),
        "Ctrl-C must not end the program"
    );

    let m = conversation(&server, 1);
    assert_eq!(
        m[..],
        [
            pair("user", "first"),
            pair("assistant", "partial answer"),
            pair("user", "again")
        ]
    );
    assert!(!p.text().contains("never shown"));
}

/// Ctrl-C at the confirmation prompt cancels the turn as Ctrl-C mid-stream does: no "not run"
/// line is shown as the answer or kept in the history, the session file or the next request.
#[test]
fn ctrl_c_at_the_confirmation_prompt_cancels_the_turn() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["Let me look: !{echo 42}"]),
        Reply::text(["next answer"]),
    ]);
    let mut p = start(&home, &server, &["--allow", "echo"]);
    p.send(b"first\r");
    p.expect("(Enter = no)");
    std::thread::sleep(skillpipe::confirm::GUARD + std::time::Duration::from_millis(150));
    p.send(b"\x03");
    p.expect("interrupted");
    p.expect("cancelled");
    p.prompt();
    p.send(b"/save s\r");
    p.expect("chat --resume");
    p.prompt();
    p.send(b"again\r");
    p.expect("next answer");
    p.prompt();
    p.send(b"\x04");
    assert_eq!(
        p.wait_exit().code(),
        Some(0),
        "Ctrl-C must not end the REPL"
    );

    let m = messages(&server, 1);
    assert_eq!(
        m[1..],
        [
            pair("user", "first"),
            pair("assistant", "Let me look: !{echo 42}"),
            pair("user", "again")
        ]
    );
    let shown = p.text();
    assert!(!shown.to_lowercase().contains("not run"), "{shown}");
    let file = home.path().join("state/skillpipe/sessions/s.json");
    let saved = std::fs::read_to_string(file).unwrap();
    assert!(!saved.to_lowercase().contains("not run"), "{saved}");
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "declined");
    assert_eq!(
        audit[0]["reason"],
        "interrupted by SIGINT (Ctrl-C at the prompt): not run"
    );
}

#[test]
fn spinner_shows_until_the_first_token_and_ctrl_c_cancels_the_wait() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["never"]).stall_after(0), Reply::text(["fine"])]);
    let mut p = start(&home, &server, &[]);

    p.send(b"hello\r");
    p.expect("thinking");
    p.send(b"\x03");
    p.expect("cancelled");
    p.prompt();
    p.send(b"next\r");
    p.expect("fine");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    // Nothing arrived, so nothing of the first answer is kept.
    let m = conversation(&server, 1);
    assert_eq!(m[..], [pair("user", "hello"), pair("user", "next")]);
}

/// A skill named with --skill is in the prompt in full, and /skills says so.
#[test]
fn skills_named_with_skill_are_shown_in_full() {
    let home = TestHome::new();
    for name in ["greet", "calc"] {
        home.write(
            &format!("config/skillpipe/skills/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody.\n"),
        );
    }
    let server = Server::start([]);
    let mut p = start(&home, &server, &["--skill", "greet"]);
    p.send(b"/skills\r");
    let listing = p.expect("greet [in full] — The greet skill");
    assert!(!listing.contains("calc ["), "{listing}");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// `/skills` lists a skill's tools (a tool folder, a script with a schema) with their typed
/// flags; `/info` names the writable grants and the environment passed to scripts.
#[test]
fn skills_lists_tools_and_info_names_writes_and_env() {
    let home = TestHome::new();
    let dir = "config/skillpipe/skills/stats";
    home.write(
        &format!("{dir}/SKILL.md"),
        "---\nname: stats\ndescription: Statistics\n---\nBody.\n",
    );
    home.write(
        &format!("{dir}/tools/summarize/tool.yaml"),
        "id: summarize\nscript: run.py\n",
    );
    home.write(&format!("{dir}/tools/summarize/run.py"), "print(1)\n");
    home.write(
        &format!("{dir}/tools/summarize/description.md"),
        "Summarize a column.\n",
    );
    home.write(
        &format!("{dir}/tools/summarize/schema.json"),
        r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#,
    );
    home.write(
        &format!("{dir}/scripts/hist.py"),
        "\"\"\"Histogram of a column.\"\"\"\n",
    );
    home.write(
        &format!("{dir}/scripts/hist.schema.json"),
        r#"{"type":"object","properties":{"bins":{"type":"integer"}}}"#,
    );
    home.write(&format!("{dir}/top.sh"), "# At the root.\necho top\n");
    let out = home.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let server = Server::start([]);
    let mut p = start(&home, &server, &["--writable", out.to_str().unwrap()]);
    p.send(b"/skills\r");
    p.expect("!{stats:summarize --path TEXT} — Summarize a column.");
    p.expect("scripts/hist.py");
    p.expect("JSON on stdin: [--bins INTEGER]");
    // A script at the skill root, by the name a directive resolves.
    p.expect("stats:top.sh");
    p.prompt();
    p.send(b"/info\r");
    p.expect("writable   $TMPDIR, ");
    p.expect("/out");
    p.expect("env        PATH, HOME, LANG, TERM passed to scripts");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

#[test]
fn slash_commands_help_skills_model_and_unknown() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Greets people\n---\nSay hello.\n",
    );
    home.write(
        "config/skillpipe/skills/greet/scripts/hello.sh",
        "#!/bin/bash\n# Say hello to someone.\n\necho hello \"$1\"\n",
    );
    let server = Server::start([Reply::text(["from the other model"])]);
    let mut p = start(&home, &server, &[]);

    p.send(b"/help\r");
    p.expect("Alt-Enter, Ctrl-J");
    p.prompt();
    p.send(b"/hlep\r");
    p.expect("unknown command /hlep");
    p.expect("did you mean /help?");
    p.prompt();
    p.send(b"/skills\r");
    // No agent and no --skill: every skill is only in the catalog (progressive disclosure).
    p.expect("[catalog]  only name, description and script paths");
    p.expect("greet [catalog] — Greets people");
    p.expect("scripts/hello.sh");
    p.expect("Say hello to someone.");
    p.expect("start with --allow-scripts");
    p.prompt();
    p.send(b"/model\r");
    p.expect("model: openai:test-model");
    p.prompt();
    p.send(b"/model other-model\r");
    p.expect("model: openai:other-model");
    p.prompt();
    assert!(
        server.requests().is_empty(),
        "commands must not reach the model"
    );

    p.send(b"go\r");
    p.expect("from the other model");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    assert_eq!(server.requests()[0]["model"], "other-model");
}

#[test]
fn multi_line_entries_ctrl_j_alt_enter_backslash_and_paste() {
    let home = TestHome::new();
    let server = Server::start((0..4).map(|i| Reply::text([format!("ok{i}")])));
    let mut p = start(&home, &server, &[]);
    let entries: [&[u8]; 4] = [
        b"one\ntwo\r",                        // Ctrl-J
        b"three\x1b\rfour\r",                 // Alt-Enter
        b"five \\\rsix\r",                    // trailing backslash
        b"\x1b[200~pasted\nblock\x1b[201~\r", // bracketed paste
    ];
    for (i, e) in entries.iter().enumerate() {
        p.send(e);
        p.expect(&format!("ok{i}"));
        p.prompt();
    }
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let sent: Vec<String> = (0..4)
        .map(|i| messages(&server, i).last().unwrap().1.clone())
        .collect();
    assert_eq!(
        sent,
        ["one\ntwo", "three\nfour", "five \nsix", "pasted\nblock"]
    );
}

#[test]
fn save_then_resume_by_name_and_from_the_list() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Hello there"])]);
    let mut p = start(&home, &server, &[]);
    p.send(b"hi\r");
    p.expect("Hello there");
    p.prompt();
    p.send(b"/save work\r");
    p.expect("skillpipe chat --resume work");
    p.prompt();
    // A name with a space is quoted in the hint, so the hint works as typed.
    p.send(b"/save my notes\r");
    p.expect("--resume 'my");
    p.prompt();
    // One starting with `-` goes after `=`, or the hint would read as a flag.
    p.send(b"/save -dash\r");
    p.expect("--resume=-dash");
    p.prompt();
    // A file elsewhere: by its absolute path, with what it will not bring back.
    p.send(b"/save ./mine.json\r");
    p.expect("(outside your sessions");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    // Only `work` stays, for the list below.
    std::fs::remove_file(home.path().join("state/skillpipe/sessions/my notes.json")).unwrap();
    std::fs::remove_file(home.path().join("state/skillpipe/sessions/-dash.json")).unwrap();
    let file = home.path().join("state/skillpipe/sessions/work.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["model"], "openai:test-model");
    assert_eq!(saved["history"].as_array().unwrap().len(), 2);
    assert_eq!(saved["transcript"][1]["text"], "Hello there");

    // By name: the transcript is shown and the history goes to the model.
    let server = Server::start([Reply::text(["welcome back"])]);
    let mut p = Pty::spawn(repl_cmd(&home, &server, &["--resume", "work"]));
    p.expect("Hello there");
    p.expect("resumed");
    p.prompt();
    p.send(b"more\r");
    p.expect("welcome back");
    p.prompt();
    p.send(b"\x04");
    assert_eq!(p.wait_exit().code(), Some(0));
    let m = conversation(&server, 0);
    assert_eq!(
        m[..],
        [
            pair("user", "hi"),
            pair("assistant", "Hello there"),
            pair("user", "more")
        ]
    );

    // From the list.
    let server = Server::start([]);
    let mut p = Pty::spawn(repl_cmd(&home, &server, &["--resume"]));
    p.expect("1. work");
    p.expect("resume which?");
    p.send(b"1\r");
    p.expect("resumed");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// A session goes on with the endpoint and model it was saved with: `chat --resume` alone
/// (no OpenAI key on this machine) talks to the server the session was held with.
#[test]
fn resume_brings_back_the_endpoint_and_model() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Hello there"]), Reply::text(["again"])]);
    let mut p = start(&home, &server, &[]);
    p.send(b"hi\r");
    p.expect("Hello there");
    p.prompt();
    p.send(b"/save here\r");
    p.expect("chat --resume");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let saved = home.path().join("state/skillpipe/sessions/here.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    assert_eq!(saved["base_url"], server.url.as_str());

    for args in [&["chat", "--resume", "here"][..], &["chat", "--resume"][..]] {
        // The same environment, without --base-url and --model.
        let c = repl_cmd(&home, &server, &[]);
        let mut bare = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
        bare.env_clear()
            .envs(c.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(home.path())
            .args(args);
        let mut p = Pty::spawn(bare);
        if args.len() == 2 {
            p.expect("resume which?");
            p.send(b"1\r");
        }
        p.expect("resumed");
        p.prompt();
        if args.len() == 3 {
            p.send(b"more\r");
            p.expect("again");
            p.prompt();
        }
        p.send(b"/exit\r");
        assert_eq!(p.wait_exit().code(), Some(0));
    }
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[1]["model"], "test-model");
}

/// A session saved under an agent resumes under it; if the agent is gone, without it.
#[test]
fn resume_brings_back_the_agent() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/agents/tutor.toml",
        "name = \"tutor\"\ndescription = \"Teaches words\"\ninstructions = \"You are a patient tutor.\"\n",
    );
    let server = Server::start(["one", "two", "three"].map(|t| Reply::text([t])));
    let mut p = start(&home, &server, &["--agent", "tutor"]);
    p.send(b"hi\r");
    p.expect("one");
    p.expect("tutor@test-model> ");
    p.send(b"/save lesson\r");
    p.expect("chat --resume");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    let mut p = start(&home, &server, &["--resume", "lesson"]);
    p.expect("resumed");
    p.expect("tutor@test-model> ");
    p.send(b"more\r");
    p.expect("two");
    p.expect("tutor@test-model> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let m = messages(&server, 1);
    assert!(m[0].1.contains("You are a patient tutor."), "{m:?}");

    std::fs::remove_file(home.path().join("config/skillpipe/agents/tutor.toml")).unwrap();
    let mut p = Pty::spawn(repl_cmd(&home, &server, &["--resume", "lesson"]));
    p.expect("the session's agent cannot be loaded");
    p.expect("resumed");
    // Typed once the prompt is there (keys typed before it may meet the terminal's switch to
    // raw mode).
    p.expect("now none");
    p.prompt();
    p.send(b"last\r");
    p.expect("three");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let m = messages(&server, 2);
    assert!(!m[0].1.contains("You are a patient tutor."), "{m:?}");
}

/// `skillpipe chat` on a terminal in `dir`, with a clean environment rooted in `home` and no
/// model server (a replay model, say).
fn bare_repl_cmd(home: &TestHome, dir: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillpipe"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("TERM", "xterm-256color")
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .current_dir(dir)
        .arg("chat")
        .args(args);
    c
}

/// A trusted project's agent named by name is saved by its path: the session resumes with it
/// from another folder (where `researcher` names nothing), and the agent, a project's file,
/// still grants nothing there.
#[test]
fn resume_elsewhere_brings_back_a_project_agent_named_by_name() {
    let home = TestHome::new();
    let project = path_project(&home);
    home.write(
        "project/agents/researcher.toml",
        "name = \"researcher\"\ndescription = \"Finds things\"\ninstructions = \"You research carefully.\"\n",
    );
    let trusted = home
        .cmd()
        .current_dir(&project)
        .arg("trust")
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{trusted:?}");
    let started = ["--agent", "researcher", "--model", "replay:answers.jsonl"];
    let mut p = Pty::spawn(bare_repl_cmd(&home, &project, &started));
    p.expect("commands");
    p.expect("researcher@replay> ");
    p.send(b"hi\r");
    p.expect("Replayed answer.");
    p.expect("researcher@replay> ");
    p.send(b"/save rs2\r");
    p.expect("skillpipe chat --resume rs2");
    p.expect("researcher@replay> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    let out = home
        .cmd()
        .args(["chat", "--resume", "rs2", "--print-request", "x"])
        .output()
        .unwrap();
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("cannot be loaded"), "{err}");
    assert!(stdout.contains("You research carefully."), "{stdout}");
    let saved =
        std::fs::read_to_string(home.path().join("state/skillpipe/sessions/rs2.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let agent = saved["reload"]["agent"].as_str().unwrap();
    assert!(
        agent.starts_with('/') && agent.ends_with("project/agents/researcher.toml"),
        "{agent}"
    );
}

/// A project with an agent, a skill folder and a replay file, all named by relative paths.
fn path_project(home: &TestHome) -> std::path::PathBuf {
    home.write(
        "project/agents/tutor.toml",
        // It asks for the network, which a file outside the user's config may not grant: a
        // notice each time it is loaded.
        "name = \"tutor\"\ndescription = \"Teaches words\"\nskills = [\"hello\"]\ninstructions = \"You are a patient tutor.\"\n[script_policy]\nallow_network = true\n",
    );
    home.write(
        "project/myskills/hello/SKILL.md",
        "---\nname: hello\ndescription: Greets the user by name.\n---\nRun `%{scripts/hi.sh NAME}`.\n",
    );
    home.write("project/myskills/hello/scripts/hi.sh", "echo hi\n");
    home.write("project/answers.jsonl", "\"Replayed answer.\"\n");
    home.path().join("project")
}

/// A session started with an agent and a skill folder given by path and a replay model by a
/// relative file resumes from another folder with all three (the policy flags are not kept:
/// the REPL says to pass them again). Piped input continues it once, and stdout gets only the
/// new answer.
#[test]
fn resume_elsewhere_brings_back_an_agent_skills_and_a_replay_given_by_path() {
    let home = TestHome::new();
    let project = path_project(&home);
    let started = [
        "--agent",
        "agents/tutor.toml",
        "--skills-dir",
        "myskills",
        "--model",
        "replay:answers.jsonl",
        "--allow-scripts",
        "-y",
    ];
    let mut p = Pty::spawn(bare_repl_cmd(&home, &project, &started));
    p.expect("commands");
    p.expect("tutor@replay> ");
    p.send(b"hi\r");
    p.expect("Replayed answer.");
    p.expect("tutor@replay> ");
    p.send(b"/save s\r");
    p.expect("skillpipe chat --resume s");
    p.expect("tutor@replay> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    let mut p = Pty::spawn(bare_repl_cmd(&home, home.path(), &["--resume", "s"]));
    p.expect("resumed");
    p.expect("pass --allow-scripts");
    p.expect("tutor@replay> ");
    p.send(b"/skills\r");
    p.expect("hello [in full]");
    p.expect("scripts/hi.sh");
    p.expect("tutor@replay> ");
    p.send(b"more\r");
    p.expect("Replayed answer.");
    p.expect("tutor@replay> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    assert!(!shown.contains("cannot be loaded"), "{shown}");

    let out = home
        .cmd()
        .args(["chat", "--resume", "s"])
        .write_stdin("again")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Replayed answer.\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tutor.toml: not in your own"),
        "agent not loaded: {err}"
    );

    // A session file that came with a project is not the user's own: the agent file, skill
    // folders and endpoint it names are not used (fail closed: the user's key would go to its
    // server); with a model the user names, the conversation still goes on.
    let shared = project.join("shared.json");
    std::fs::copy(home.path().join("state/skillpipe/sessions/s.json"), &shared).unwrap();
    let replay = format!("replay:{}", project.join("answers.jsonl").display());
    let out = home
        .cmd()
        .args([
            "chat",
            "--resume",
            shared.to_str().unwrap(),
            "--model",
            &replay,
        ])
        .arg("again")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not one of your saved sessions"), "{err}");
    assert!(
        !err.contains("tutor.toml: not in your own"),
        "agent loaded: {err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Replayed answer.\n");
    // Without one, the file's endpoint is not taken.
    let out = home
        .cmd()
        .env_remove("OPENAI_API_KEY")
        .args(["chat", "--resume", shared.to_str().unwrap(), "again"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("model endpoint it names are not used"),
        "{err}"
    );
    assert_ne!(String::from_utf8_lossy(&out.stdout), "Replayed answer.\n");
}

#[test]
fn resume_errors_are_usage_errors() {
    let home = TestHome::new();
    let server = Server::start([]);
    let out = home
        .cmd()
        .args([
            "chat",
            "--base-url",
            &server.url,
            "--model",
            "m",
            "--resume",
            "nope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no saved session `nope`"), "{err}");

    let out = home
        .cmd()
        .args([
            "chat",
            "--base-url",
            &server.url,
            "--model",
            "m",
            "hello",
            "--resume",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no saved session `x`"), "{err}");
    // The picker needs a terminal: with a PROMPT the session must be named.
    let out = home
        .cmd()
        .args([
            "chat",
            "--model",
            "replay:x.jsonl",
            "--resume",
            "--",
            "hello",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("name the session: --resume NAME"), "{err}");
    assert!(server.requests().is_empty());
}

/// Processes whose command line is exactly `argv`.
fn processes_running(argv: &[&str]) -> usize {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.flatten()
                .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
                .count()
        })
        .unwrap_or(0)
}

/// Ctrl-C while a directive runs: the run is killed (its whole tree), audited as cancelled and
/// its $TMPDIR removed, and the REPL goes on.
#[test]
fn ctrl_c_stops_a_running_script() {
    let home = TestHome::new();
    // A duration no other run of this test on the machine uses (its processes are counted).
    let secs = format!("29.{:06}", std::process::id());
    let waiting = format!("Waiting: !{{sleep {secs}}}");
    let server = Server::start([Reply::text([waiting.as_str()]), Reply::text(["still here"])]);
    let tmp = home.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut c = repl_cmd(&home, &server, &["--allow", "sleep", "-y"]);
    c.env("TMPDIR", &tmp);
    let mut p = Pty::spawn(c);
    p.expect("commands");
    p.prompt();
    p.send(b"wait\r");
    p.expect(&format!("running sleep {secs}"));
    // The control: the run and its $TMPDIR exist while it runs.
    let argv = ["sleep", secs.as_str()];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while processes_running(&argv) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(processes_running(&argv), 1, "the script is not running");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        1,
        "no per-run TMPDIR"
    );
    p.send(b"\x03");
    // Well before the 30 s the script would take (every wait here is bounded by pty::TIMEOUT).
    p.expect("cancelled");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while processes_running(&argv) > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(processes_running(&argv), 0, "the script outlived Ctrl-C");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(
        left.is_empty(),
        "the run's TMPDIR was left behind: {left:?}"
    );
    p.prompt();
    p.send(b"on\r");
    p.expect("still here");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let m = messages(&server, 1);
    assert_eq!(
        m[1..],
        [
            pair("user", "wait"),
            pair("assistant", &waiting),
            pair("user", "on")
        ]
    );
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "ran");
    assert_eq!(audit[0]["reason"], "cancelled");
    assert_eq!(audit[0]["phase"], "completed");
    // And the line before it, written before the spawn.
    let all = home.audit_all();
    assert!(
        all.iter().any(|r| r["phase"] == "started"),
        "no `started` line: {all:?}"
    );
}

/// Ctrl-C while a side effect runs (the turn waits for it at its end): the side-effect worker
/// stops, so the run is killed and audited as cancelled, and the REPL goes on.
#[test]
fn ctrl_c_stops_a_running_side_effect() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["Working %{sleep 29.523} on it."]),
        Reply::text(["still here"]),
    ]);
    let mut p = start(&home, &server, &["--allow", "sleep", "-y"]);
    p.send(b"work\r");
    p.expect("on it.");
    let argv = ["sleep", "29.523"];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while processes_running(&argv) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        processes_running(&argv),
        1,
        "the side effect is not running"
    );
    p.send(b"\x03");
    p.expect("cancelled");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while processes_running(&argv) > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        processes_running(&argv),
        0,
        "the side effect outlived Ctrl-C"
    );
    p.prompt();
    p.send(b"on\r");
    p.expect("still here");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["reason"], "cancelled");
}

#[test]
fn agent_switch_keeps_the_conversation_and_clear_forgets_it() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/agents/tutor.toml",
        "name = \"tutor\"\ndescription = \"Teaches words\"\ninstructions = \"You are a patient tutor.\"\n\n[params]\ntemperature = 0.3\n",
    );
    let server = Server::start(["one", "two", "three"].map(|t| Reply::text([t])));
    let mut p = start(&home, &server, &[]);
    p.send(b"hi\r");
    p.expect("one");
    p.prompt();
    p.send(b"/agent\r");
    p.expect("agent: none");
    p.expect("tutor");
    p.expect("Teaches words");
    p.prompt();
    p.send(b"/agent tutor\r");
    p.expect("agent: tutor");
    p.expect("tutor@test-model> ");
    p.send(b"again\r");
    p.expect("two");
    p.expect("tutor@test-model> ");
    p.send(b"/clear\r");
    p.expect("conversation cleared");
    p.expect("tutor@test-model> ");
    p.send(b"fresh\r");
    p.expect("three");
    p.expect("tutor@test-model> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));

    let m = messages(&server, 1);
    assert_eq!(m[0].0, "system");
    assert!(m[0].1.contains("You are a patient tutor."), "{}", m[0].1);
    assert_eq!(
        m[1..],
        [
            pair("user", "hi"),
            pair("assistant", "one"),
            pair("user", "again")
        ]
    );
    assert_eq!(server.requests()[1]["temperature"], 0.3);
    let m = messages(&server, 2);
    assert_eq!(m.len(), 2);
    assert_eq!(m[1], pair("user", "fresh"));
}

#[test]
fn a_captures_status_line_shows_where_it_ran() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["The answer is !{echo 42}"]),
        Reply::text([" forty-two.\nSecond line."]),
    ]);
    let mut p = start(&home, &server, &["--allow", "echo", "-y"]);
    p.send(b"what is it?\r");
    // The row ends at the capture, its status line follows, and the text goes on from a fresh
    // row: never a status line inside a sentence where the continuation wrapped.
    p.expect("The answer is");
    let between = p.expect("· ran !{echo 42}\n");
    assert!(!between.contains("forty-two"), "{between:?}");
    p.expect("forty-two.\n");
    p.expect("Second line.");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// A side effect's status line waits for the end of the paragraph being written, not for a
/// row the terminal is full at.
#[test]
fn a_side_effects_status_line_never_lands_at_a_wrap() {
    let home = TestHome::new();
    let mut pieces = vec!["Saying it %{echo hi} now, ".to_string()];
    pieces.extend((0..80).map(|i| format!("word{i} ")));
    pieces.push("last.\n\nEnd.".into());
    let server = Server::start([Reply::text(pieces).gap(std::time::Duration::from_millis(5))]);
    let mut p = start(&home, &server, &["--allow", "echo", "-y"]);
    p.send(b"go\r");
    let before = p.expect("last.");
    assert!(!before.contains("ran %{echo hi}"), "{before:?}");
    // Control: the paragraph wrapped (its rows after the prompt's line).
    let para = &before[before.find("Saying it").expect("the answer")..];
    assert!(para.matches('\n').count() >= 2, "{before:?}");
    p.expect("· ran %{echo hi}");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// A Markdown answer with a heading, emphasis, a quote and a fenced code block.
const MARKDOWN: &str = "# Getting started\n\nThe **quick** brown fox jumps over the lazy dog again and again until the line must wrap.\n\n> a quoted line\n\n```rust\nfn main() {}\n```\n";

#[test]
fn markdown_answers_render_with_colour_and_wrap_at_word_boundaries() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(
        MARKDOWN.split_inclusive(' ').collect::<Vec<_>>(),
    )]);
    let mut p = Pty::spawn_sized(repl_cmd(&home, &server, &[]), 60);
    p.expect("commands");
    p.prompt();
    p.send(b"show me\r");
    p.expect("Getting started\n");
    p.expect("The quick brown fox jumps over the lazy dog again and again\n");
    p.expect("until the line must wrap.\n");
    p.expect("\u{2502} a quoted line\n");
    p.expect("```rust\nfn main() {}\n```\n");
    p.prompt();
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(!p.text().contains("# Getting"), "the heading marker shows");
    assert!(!p.text().contains("**quick**"), "the emphasis markers show");
    assert!(raw.contains("\x1b[1;4;35mGetting"), "no heading style");
    assert!(raw.contains("\x1b[1mquick"), "no bold");
    // The code is highlighted: the keyword in a colour of its own.
    assert!(
        raw.contains("\x1b[38;5;") && raw.contains("mfn\x1b[0m"),
        "no highlighted code"
    );
    assert!(
        !p.text().contains("> a quoted line"),
        "a quote looks like the prompt"
    );

    // Narrower now: the next answer wraps to the new width.
    p.resize(40);
    server.push(Reply::text([
        "one two three four five six seven eight nine ten eleven twelve\n",
    ]));
    p.send(b"again\r");
    p.expect("one two three four five six seven eight\nnine ten eleven twelve\n");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

#[test]
fn no_colour_codes_in_the_answer_under_no_color() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([MARKDOWN])]);
    let mut cmd = repl_cmd(&home, &server, &[]);
    cmd.env("NO_COLOR", "1");
    let mut p = Pty::spawn_sized(cmd, 60);
    p.expect("commands");
    p.prompt();
    p.send(b"show me\r");
    p.expect("```\n");
    p.prompt();
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    let start = raw
        .find("# Getting started")
        .expect("the heading keeps its marker");
    let end = raw[start..].find("```\r\n").unwrap() + start;
    let answer = &raw[start..end];
    assert!(!answer.contains('\x1b'), "escape codes in {answer:?}");
    // Still rendered: the line wrapped at a word, the quote drawn; with no colour to show it,
    // the emphasis keeps its markers as text.
    assert!(
        answer.contains("The **quick** brown fox jumps over the lazy dog again and\r\nagain"),
        "{answer:?}"
    );
    assert!(answer.contains("│ a quoted line"), "{answer:?}");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

#[test]
fn raw_flag_shows_the_markdown_as_written() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([MARKDOWN])]);
    let mut p = start(&home, &server, &["--raw"]);
    p.send(b"show me\r");
    p.expect("# Getting started\n\nThe **quick** brown fox");
    p.expect("> a quoted line\n");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

#[test]
fn an_escape_in_a_rendered_answer_shows_visibly() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([
        "## Title \x1b]0;pwned\x07\n\ntext \x1b[2J end\n",
    ])]);
    let mut p = start(&home, &server, &[]);
    p.send(b"hi\r");
    p.expect("Title \u{241b}]0;pwned\u{2407}\n");
    p.expect("text \u{241b}[2J end");
    p.prompt();
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(
        !raw.contains("\x1b]0;pwned"),
        "the title escape reached the terminal"
    );
    assert!(
        !raw.contains("\x1b[2J"),
        "the clear-screen escape reached the terminal"
    );
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

#[test]
fn info_names_the_session_and_retry_asks_again() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["first try"]), Reply::text(["second try"])]);
    let mut p = start(&home, &server, &[]);
    p.send(b"/retry\r");
    p.expect("nothing to retry yet");
    p.prompt();
    p.send(b"the question\r");
    p.expect("first try");
    p.prompt();
    p.send(b"/info\r");
    p.expect("model      openai:test-model");
    p.expect(&format!("endpoint   {}", server.url));
    p.expect("agent      none");
    p.expect("policy     scripts off");
    p.expect("sandbox    required");
    p.expect("prompt     system ");
    p.expect("2 conversation messages; the next request ");
    p.prompt();
    p.send(b"/retry\r");
    p.expect("second try");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    // The retry sent the question again, without the first answer.
    let m = conversation(&server, 1);
    assert_eq!(m[..], [pair("user", "the question")]);
}

#[test]
fn model_names_complete_from_the_endpoint_list() {
    let home = TestHome::new();
    let server = Server::start([]);
    server.set_models(&["alpha-small", "alpha-large", "beta"]);
    let mut p = start(&home, &server, &[]);
    p.send(b"/model be\t");
    p.expect("/model beta");
    p.send(b"\r");
    p.expect("model: openai:beta");
    p.expect("beta> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// A resize redraws the typed line once, also on a terminal that re-wraps its lines, and never
/// erases the answer above it (widening once blanked its last lines). tmux is such a terminal
/// (itself on a pseudo-terminal); without it the test says so and checks nothing.
#[test]
fn a_resize_draws_the_typed_line_once_on_a_rewrapping_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed; it is the re-wrapping terminal this test needs");
        return;
    }
    let home = TestHome::new();
    let answers = home.write(
        "answers.jsonl",
        "{\"content\":\"first answer line one\\nsecond answer line two\"}\n{\"content\":\"fine\"}\n",
    );
    let socket = home.path().join("tmux.sock");
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(args)
            .output()
            .expect("run tmux")
    };
    let screen =
        || String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "sp"]).stdout).into_owned();
    let wait_for = |what: &dyn Fn(&str) -> bool| {
        let deadline = std::time::Instant::now() + pty::TIMEOUT;
        loop {
            let s = screen();
            if what(&s) {
                return s;
            }
            assert!(std::time::Instant::now() < deadline, "screen:\n{s}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let cmd = format!(
        "env -i PATH=\"$PATH\" HOME={home} TERM=tmux-256color LANG=C.UTF-8 XDG_STATE_HOME={home}/state XDG_CONFIG_HOME={home}/config {bin} chat --model replay:{answers}",
        home = home.path().display(),
        bin = env!("CARGO_BIN_EXE_skillpipe"),
        answers = answers.display()
    );
    let dir = home.path().to_str().unwrap();
    let out = tmux(&[
        "new-session",
        "-d",
        "-s",
        "sp",
        "-c",
        dir,
        "-x",
        "40",
        "-y",
        "20",
        &cmd,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // (capture-pane drops trailing spaces: the prompt shows as `replay>`)
    wait_for(&|s| s.lines().any(|l| l == "replay>"));
    // rustyline asks the terminal where the cursor is; keys typed before the answer are lost.
    std::thread::sleep(std::time::Duration::from_millis(300));
    tmux(&["send-keys", "-t", "sp", "hi", "Enter"]);
    wait_for(&|s| s.contains("second answer line two") && s.lines().any(|l| l == "replay>"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    // Three rows at 40 columns.
    let typed = "hello this is a long line that the user typed at the prompt ok and more words";
    let sent = tmux(&["send-keys", "-t", "sp", "-l", typed]);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    wait_for(&|s| s.contains("words"));
    for width in ["100", "50", "30", "60"] {
        tmux(&["resize-window", "-t", "sp", "-x", width, "-y", "20"]);
        wait_for(&|s| {
            s.lines()
                .all(|l| l.chars().count() <= width.parse().unwrap())
        });
        // Let the redraw that follows the resize arrive.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let s = screen();
        assert_eq!(
            s.matches("replay> hello").count(),
            1,
            "the typed line drawn twice at {width} columns:\n{s}"
        );
        assert_eq!(s.matches("words").count(), 1, "{s}");
        assert!(
            s.contains("first answer line one\nsecond answer line two\nreplay> hello"),
            "the answer above the prompt was erased at {width} columns:\n{s}"
        );
    }
    tmux(&["send-keys", "-t", "sp", "Enter"]);
    wait_for(&|s| s.contains("fine"));
    tmux(&["kill-server"]);
}

/// `--tools` against a model that writes its call as text: the REPL says so once and shows only
/// the answer asked for again, never the rejected `<tool_call>` text.
#[test]
fn a_tool_call_written_as_text_is_not_shown() {
    let home = TestHome::new();
    home.write(
        "skills/calc/SKILL.md",
        "---\nname: calc\ndescription: arithmetic\n---\nCalc.\n",
    );
    home.write(
        "skills/calc/scripts/calc.py",
        "# Multiply two numbers.\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
    );
    let server = Server::start([
        Reply::text([
            "<tool_call>\n{\"name\": \"calc__calc\", ",
            "\"arguments\": {\"args\": [\"6\", \"7\"]}}\n</tool_call>",
        ]),
        Reply::text(["Six times seven is 42."]),
    ]);
    let mut p = start(
        &home,
        &server,
        &[
            "--skills-dir",
            "skills",
            "--tools",
            "--allow-scripts",
            "-y",
            "--coach",
            "small-model",
        ],
    );
    p.send(b"6 times 7?\r");
    p.expect("no tool call came back where the model tried one");
    p.expect("Six times seven is 42.");
    p.prompt();
    let shown = p.text();
    assert!(!shown.contains("tool_call>"), "{shown}");
    assert!(!shown.contains("calc__calc"), "{shown}");
    assert_eq!(server.requests().len(), 2);
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// With stdout piped (`skillpipe chat | tee log`) the line editor, its prompt and escapes and
/// the REPL's own output (`/help`, a resumed transcript) stay on the terminal: the pipe gets
/// the answers only, exactly as the model wrote them.
#[test]
fn a_piped_stdout_gets_only_the_answers() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["Hello **there**"]),
        Reply::text(["Second answer"]),
    ]);
    let mut p = Pty::spawn_piped(repl_cmd(&home, &server, &[]), 80);
    p.expect("commands");
    p.expect("test-model> ");
    p.send(b"hi\r");
    p.expect("test-model> ");
    p.send(b"/help\r");
    p.expect("Alt-Enter, Ctrl-J");
    p.expect("test-model> ");
    p.send(b"/save piped\r");
    p.expect("--resume piped");
    p.expect("test-model> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let piped = String::from_utf8_lossy(&p.piped()).into_owned();
    assert_eq!(piped.trim_end(), "Hello **there**", "{piped:?}");

    // Resumed with stdout piped: the saved conversation is shown on the terminal, the pipe
    // gets the new answer only.
    let mut p = Pty::spawn_piped(repl_cmd(&home, &server, &["--resume", "piped"]), 80);
    p.expect("Hello");
    p.expect("resumed");
    p.expect("test-model> ");
    p.send(b"more\r");
    p.expect("test-model> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let piped = String::from_utf8_lossy(&p.piped()).into_owned();
    assert_eq!(piped.trim_end(), "Second answer", "{piped:?}");
}

/// Rows of what the terminal shows, none wider than `width` (so the terminal wrapped none of
/// them mid-word), or the offending ones.
fn rows_wider_than(text: &str, width: usize) -> Vec<String> {
    text.lines()
        // The line editor's own rows (it wraps the typed line itself).
        .filter(|l| !l.contains("@replay> "))
        .filter(|l| l.chars().count() > width)
        .map(str::to_string)
        .collect()
}

/// At 40 columns every line of the REPL's own — the agent's warning and the startup line,
/// `/help`, the `/skills` legend, a status line, the `/save` confirmation — is wrapped at word
/// boundaries to the width: the terminal never has to break one mid-word.
#[test]
fn the_repl_wraps_its_own_text_at_words() {
    let home = TestHome::new();
    let project = path_project(&home);
    home.write(
        "project/answers.jsonl",
        "\"Here we go. %{scripts/hi.sh someone-with-a-long-name}\"\n",
    );
    // An agent file outside the user's config that asks for more than it may: a warning.
    home.write(
        "project/agents/tutor.toml",
        "name = \"tutor\"\ndescription = \"Teaches words\"\nskills = [\"hello\"]\ninstructions = \"You are a patient tutor.\"\n[script_policy]\nallow_network = true\nenv_passthrough = [\"PATH\", \"SECRET_TOKEN\"]\n",
    );
    // A command allowed: directives are announced; the skill's script is denied.
    let args = [
        "--agent",
        "agents/tutor.toml",
        "--skills-dir",
        "myskills",
        "--model",
        "replay:answers.jsonl",
        "--allow",
        "echo",
        "--deny",
        "scripts/hi.sh *",
    ];
    let mut p = Pty::spawn_sized(bare_repl_cmd(&home, &project, &args), 40);
    p.expect("tutor@replay> ");
    p.send(b"/help\r");
    p.expect("tutor@replay> ");
    p.send(b"/skills\r");
    p.expect("tutor@replay> ");
    p.send(b"hi\r");
    p.expect("blocked");
    p.expect("tutor@replay> ");
    p.send(b"/save a-session-with-a-long-name\r");
    p.expect("chat --resume");
    p.expect("tutor@replay> ");
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    assert!(shown.contains("ignored:"), "no agent warning: {shown}");
    let wide = rows_wider_than(&shown, 40);
    assert!(
        wide.is_empty(),
        "rows wider than 40 columns: {wide:#?}\n{shown}"
    );
    // Words stay whole: the rows joined give the sentences back.
    let words: Vec<&str> = shown.split_whitespace().collect();
    let joined = words.join(" ");
    for phrase in [
        "forget the conversation so far",
        "only name, description and script paths are; the model loads the rest with !{skill NAME}",
        "blocked: %{scripts/hi.sh someone-with-a-long-name}",
        "resume with: skillpipe chat --resume a-session-with-a-long-name",
        "not in your own config folders, so it may only narrow the script policy",
    ] {
        assert!(joined.contains(phrase), "{phrase:?} broken in:\n{shown}");
    }
}

/// Without colour a side effect's output (`--show-side-effects`) and a block quote in the
/// answer look different: the quote has its bar, the output its own gutter under a status
/// line that names it.
#[test]
fn side_effect_output_is_marked_apart_from_a_quote() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([
        "> a quoted line\n\nNow: %{echo from-the-script}\n",
        "Done.",
    ])]);
    let mut cmd = repl_cmd(
        &home,
        &server,
        &["--allow", "echo", "-y", "--show-side-effects"],
    );
    cmd.env("NO_COLOR", "1");
    let mut p = Pty::spawn(cmd);
    p.expect("commands");
    p.prompt();
    p.send(b"go\r");
    p.expect("Done.");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    assert!(shown.contains("│ a quoted line"), "{shown}");
    assert!(
        shown
            .contains("· ran %{echo from-the-script} — side effect output:\n  ┆ from-the-script\n"),
        "{shown}"
    );
    assert!(!shown.contains("│ from-the-script"), "{shown}");
}

/// `/skills NAME` shows that one skill in detail (where it lives, how a directive calls its
/// scripts), and Tab completes the name from the loaded skills.
#[test]
fn skills_name_shows_one_skill_and_completes() {
    let home = TestHome::new();
    for name in ["greet", "calc"] {
        home.write(
            &format!("config/skillpipe/skills/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody.\n"),
        );
        home.write(
            &format!("config/skillpipe/skills/{name}/scripts/run.sh"),
            "#!/bin/bash\n# Does the thing.\necho x\n",
        );
    }
    let server = Server::start([]);
    let mut p = start(&home, &server, &[]);
    p.send(b"/skills gr\t");
    p.expect("/skills greet");
    p.send(b"\r");
    let shown = p.expect("test-model> ");
    assert!(
        shown.contains("greet [catalog] — The greet skill"),
        "{shown}"
    );
    assert!(shown.contains("skills/greet"), "{shown}");
    // Both skills have scripts/run.sh: the bare path would be ambiguous, so it is qualified.
    assert!(shown.contains("!{greet/scripts/run.sh ARGS}"), "{shown}");
    assert!(!shown.contains("calc"), "{shown}");
    p.send(b"/skills nope\r");
    p.expect("no active skill `nope`");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
}

/// Emphasis opened on one line and closed on the next (CommonMark allows it) is rendered on a
/// terminal, streamed a few bytes at a time, the model's line break kept.
#[test]
fn emphasis_across_a_line_break_is_rendered() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([
        "Start **bold across\nlines** and *more\nhere* ok.",
    ])
    .split_every(3)]);
    let mut p = start(&home, &server, &[]);
    p.send(b"go\r");
    p.expect("ok.");
    p.prompt();
    p.send(b"/exit\r");
    assert_eq!(p.wait_exit().code(), Some(0));
    let shown = p.text();
    assert!(
        shown.contains("Start bold across\nlines and more\nhere ok."),
        "{shown}"
    );
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(raw.contains("\x1b[1mlines\x1b[0m"), "{raw:?}");
}

/// `--base-url` (or `--model`) repeating what a session was saved with names nothing new: the
/// saved model goes on at that endpoint, even where the server serves several.
#[test]
fn resume_with_the_saved_endpoint_repeated_keeps_the_saved_model() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["again"]), Reply::text(["and again"])]);
    server.set_models(&["m1", "m2"]);
    let session = serde_json::json!({
        "skillpipe_session": 1,
        "saved_at": "2026-01-01T00:00:00.000Z",
        "model": "openai:m2",
        "base_url": server.url,
        "agent": null,
        "history": [{"role": "user", "content": "hello"}],
        "transcript": [{"role": "user", "text": "hello"}],
    });
    home.write(
        "state/skillpipe/sessions/two.json",
        &serde_json::to_string(&session).unwrap(),
    );
    for repeated in [["--base-url", &server.url], ["--model", "m2"]] {
        let out = home
            .cmd()
            .args(["chat", "--resume", "two"])
            .args(repeated)
            .write_stdin("more")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{repeated:?}: {out:?}");
    }
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r["model"].clone())
        .collect();
    assert_eq!(models, ["m2", "m2"]);
    // The control: with no saved session to go on with, that endpoint needs --model.
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "more"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("choose one with --model: m1, m2"),
        "{out:?}"
    );
}
