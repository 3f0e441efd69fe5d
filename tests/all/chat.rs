//! `skillpipe chat` one-shot mode end to end: the built binary against the in-test model server.

use crate::common;

use common::{Reply, Server, TestHome};
use serde_json::{Value, json};

fn chat(home: &TestHome, server: &Server) -> assert_cmd::Command {
    let mut c = home.cmd();
    c.args(["chat", "--base-url", &server.url, "--model", "test-model"]);
    c
}

/// The messages of request `i`.
fn messages(server: &Server, i: usize) -> Vec<Value> {
    server.requests()[i]["messages"].as_array().unwrap().clone()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn side_effect_split_across_events_runs_and_is_stripped() {
    let home = TestHome::new();
    let server = Server::start([Reply::chunked("Hello %{echo side} world", 1)]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello  world\n");
    let audit = home.audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "ran");
    assert_eq!(audit[0]["argv"], serde_json::json!(["echo", "side"]));
    assert_eq!(audit[0]["kind"], "side_effect");
    // The system prompt explains the directives; the user prompt is last.
    let m = messages(&server, 0);
    assert_eq!(m[0]["role"], "system");
    assert!(m[0]["content"].as_str().unwrap().contains("!{"));
    assert_eq!(m.last().unwrap()["content"], "hi");
}

#[test]
fn a_line_that_held_only_directives_is_not_shown_but_kept_in_history() {
    let home = TestHome::new();
    let answer = "The word is *gato*.\n  %{echo a} %{echo b}\nIt means cat.\n\nSay %{echo c} it.\n";
    let server = Server::start([Reply::chunked(answer, 2)]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "a word"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // No empty line where the side effects stood; the model's own blank line and the spaces
    // around a directive inside a sentence stay.
    assert_eq!(
        stdout(&out),
        "The word is *gato*.\nIt means cat.\n\nSay  it.\n"
    );
    assert_eq!(home.audit().len(), 3);
    // `filter` keeps every byte that was not a directive (the control: the line is there).
    let o = home
        .cmd()
        .args(["filter", "--allow", "echo", "-y"])
        .write_stdin(answer)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "The word is *gato*.\n   \nIt means cat.\n\nSay  it.\n"
    );
}

#[test]
fn capture_round_trip_sends_the_result_and_shows_the_continuation() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::chunked("The answer is !{echo 42} and more text", 3),
        Reply::text([" — forty-two."]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "what is it?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The answer is — forty-two.\n");
    assert_eq!(server.requests().len(), 2);
    let m = messages(&server, 1);
    let n = m.len();
    assert_eq!(m[n - 2]["role"], "assistant");
    assert_eq!(m[n - 2]["content"], "The answer is !{echo 42}");
    assert_eq!(m[n - 1]["role"], "user");
    // The result does not start with (or repeat) the directive, and asks to go on.
    assert_eq!(m[n - 1]["content"], "Output: 42 — continue your answer.");
}

#[test]
fn failed_capture_gives_the_model_the_stderr_tail() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["Listing: !{ls /no-such-dir-for-skillpipe}"]),
        Reply::text([" it is missing."]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow", "ls", "-y", "list it"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = messages(&server, 1);
    let result = m.last().unwrap()["content"].as_str().unwrap();
    assert!(result.starts_with("Failed (exit 2). Error: "), "{result}");
    assert!(result.contains("No such file or directory"), "{result}");
    assert!(result.contains("— continue your answer."), "{result}");
}

/// Paths of the user's machine that the model did not write (the skill folder a refusal names)
/// do not reach it; a path it wrote itself is quoted back as it wrote it (cut, it would read as
/// another file).
#[test]
fn refusal_reasons_sent_to_the_model_hold_no_absolute_paths() {
    let home = TestHome::new();
    home.write(
        "skills/calc/SKILL.md",
        "---\nname: calc\ndescription: arithmetic\n---\nCalc.\n",
    );
    let secret = home.path().join("private/dir/tool");
    let server = Server::start([
        Reply::text(["Read: !{skill calc ../../x}"]),
        Reply::text([format!("Run: !{{{}}}", secret.display())]),
        Reply::text(["Could not."]),
    ]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills", "--allow", "echo", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let home_dir = home.path().display().to_string();
    let m = messages(&server, 1);
    let result = m.last().unwrap()["content"].as_str().unwrap();
    assert!(result.contains("outside the skill folder calc"), "{result}");
    assert!(!result.contains(&home_dir), "{result}");
    let m = messages(&server, 2);
    let result = m.last().unwrap()["content"].as_str().unwrap();
    assert!(result.starts_with("Not run: "), "{result}");
    assert!(result.contains(&secret.display().to_string()), "{result}");
    // The audit log keeps the full command.
    assert!(
        home.audit()
            .iter()
            .any(|r| r["argv"][0].as_str().unwrap().contains(&home_dir)),
        "{:?}",
        home.audit()
    );
}

#[test]
fn empty_continuation_shows_the_result() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["!{echo 42}"]), Reply::text([""])]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "what is it?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "42\n");
    assert_eq!(server.requests().len(), 2);
}

/// A skill's text goes to the model, not on screen: read and followed by nothing, one line says
/// so (the SKILL.md had been shown as the whole answer).
#[test]
fn a_skill_read_with_nothing_after_it_is_not_shown_as_the_answer() {
    let home = TestHome::new();
    home.write(
        "skills/guide/SKILL.md",
        "---\nname: guide\ndescription: A long guide.\n---\nSECRET-LOOKING GUIDE TEXT\n",
    );
    let server = Server::start([Reply::text(["!{skill guide}"]), Reply::text([""])]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills", "make a pdf as the guide says"])
        .output()
        .unwrap();
    // No answer: a one-shot run fails, so a script does not take the empty output for one.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).trim().is_empty(), "{:?}", stdout(&out));
    assert!(
        stderr(&out)
            .contains("skillpipe: the model read the `guide` skill and wrote nothing after it\n"),
        "{}",
        stderr(&out)
    );
    // The model did get the text (the control: the skill was read).
    let m = messages(&server, 1);
    assert!(
        m.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("SECRET-LOOKING GUIDE TEXT"),
        "{m:?}"
    );
}

/// A read of a skill that is not there was never read: the notice says why nothing came back,
/// not that the model read it (measured: a 0.5B model asked for `!{skill spreadsheet}` twice).
#[test]
fn a_read_of_a_missing_skill_is_not_told_as_read() {
    let home = TestHome::new();
    home.write(
        "skills/guide/SKILL.md",
        "---\nname: guide\ndescription: A long guide.\n---\nGuide text.\n",
    );
    let server = Server::start([Reply::text(["!{skill sheets}"]), Reply::text([""])]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills", "make a spreadsheet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("read the `sheets` skill"), "{err}");
    assert!(
        err.contains("no answer: not run, no loaded skill is named `sheets`"),
        "{err}"
    );
}

/// The reviewer's case (issue #13): with a real collection and no skill named, the few-shot's
/// worked load is of the first catalog skill; the model writing that very load for the skill's
/// natural request (which does not name it), or for a bare "yes" to its "Shall I load it?",
/// reads the skill. A read runs no process.
#[test]
fn the_first_catalog_skill_loads_for_a_request_that_does_not_name_it() {
    let home = TestHome::new();
    home.write(
        "skills/gh-address-comments/SKILL.md",
        "---\nname: gh-address-comments\ndescription: Help address review or issue comments on \
         the open GitHub PR for the current branch.\n---\nADDRESS-COMMENTS-STEPS\n",
    );
    home.write(
        "skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Read and fill PDF files.\n---\nPDF-STEPS\n",
    );
    for (i, request) in [
        "Please handle the reviewer feedback on my pull request",
        "yes",
    ]
    .into_iter()
    .enumerate()
    {
        let server = Server::start([
            Reply::text(["!{skill gh-address-comments}"]),
            Reply::text(["Here is my plan."]),
        ]);
        let out = chat(&home, &server)
            .args(["--coach", "small-model"])
            .args(["--skills-dir", "skills", request])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "Here is my plan.\n", "{request}");
        // The control: the directive is the worked example's, word for word.
        let few_shot = serde_json::to_string(&messages(&server, 0)[1..]).unwrap();
        assert!(
            few_shot.contains("\"content\":\"!{skill gh-address-comments}\""),
            "{few_shot}"
        );
        let audit = home.audit();
        assert_eq!(audit.len(), i + 1, "{audit:?}");
        assert_eq!(audit[i]["decision"], "ran", "{request}: {audit:?}");
        assert_eq!(
            audit[i]["argv"],
            serde_json::json!(["skill", "gh-address-comments"])
        );
        let told = messages(&server, 1).last().unwrap()["content"].clone();
        assert!(
            told.as_str().unwrap().contains("ADDRESS-COMMENTS-STEPS"),
            "{told}"
        );
    }
}

#[test]
fn blocked_capture_tells_the_model_it_was_not_run() {
    let home = TestHome::new();
    let canary = home.path().join("canary");
    let body = format!("!{{touch {}}}", canary.display());
    let server = Server::start([
        Reply::text(["Doing it: ", &body]),
        Reply::text(["OK, I could not."]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!canary.exists(), "a blocked capture ran");
    assert_eq!(stdout(&out), "Doing it: OK, I could not.\n");
    let m = messages(&server, 1);
    let result = m.last().unwrap()["content"].as_str().unwrap();
    assert!(result.starts_with("Not run: "), "{result}");
    assert!(result.contains("not in allowed_commands"), "{result}");
    // The flag that would allow it is the user's to pass: the user is told it, the model not.
    assert!(!result.contains("--"), "{result}");
    assert!(stderr(&out).contains("blocked"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--allow"), "{}", stderr(&out));
    assert_eq!(home.audit()[0]["decision"], "denied");
}

#[test]
fn side_effects_run_in_order() {
    let home = TestHome::new();
    let log = home.path().join("order.log");
    let skill = home.write(
        "skills/order/SKILL.md",
        "---\nname: order\ndescription: appends a line\n---\nAppend.\n",
    );
    let _ = skill;
    home.write(
        "skills/order/scripts/append.sh",
        "#!/bin/bash\n# Append one line to a file.\nsleep 0.0$((RANDOM % 3))\necho \"$2\" >> \"$1\"\n",
    );
    let log_s = log.display().to_string();
    let text: String = (1..=5)
        .map(|i| format!("{i} %{{scripts/append.sh {log_s} {i}}} "))
        .collect();
    let server = Server::start([Reply::chunked(&text, 7)]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills"])
        .args(["--allow-scripts", "--allow-filesystem", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "1  2  3  4  5  \n");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "1\n2\n3\n4\n5\n");
}

#[test]
fn unauthorized_names_the_problem() {
    let home = TestHome::new();
    let server = Server::start([Reply::status(401, r#"{"error":{"message":"bad key"}}"#)]);
    let out = chat(&home, &server).arg("hi").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("authentication failed (401)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn rate_limit_is_retried() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::status(429, "slow down").header("Retry-After", "0"),
        Reply::text(["fine ", "now"]),
    ]);
    let out = chat(&home, &server).arg("hi").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "fine now\n");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_error_fails_with_exit_1() {
    let home = TestHome::new();
    let server =
        Server::start((0..3).map(|_| Reply::status(500, "boom").header("Retry-After", "0")));
    let out = chat(&home, &server).arg("hi").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("500"), "{}", stderr(&out));
}

#[test]
fn cut_stream_keeps_the_text_and_says_so() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["partial ", "answer ", "lost"]).cut_after(2)]);
    let out = chat(&home, &server).arg("hi").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "partial answer \n");
    assert!(stderr(&out).contains("cut"), "{}", stderr(&out));
}

/// A tool call whose follow-up says nothing still ends with its result, as a capture does.
#[test]
fn a_tool_result_is_shown_when_the_model_then_says_nothing() {
    let home = TestHome::new();
    calc_skill(&home);
    let server = Server::start([
        Reply::text([""]).tool_call("call_1", "calc__calc", [r#"{"args":["6","7"]}"#]),
        Reply::text([""]),
    ]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "42");
    assert!(
        stderr(&out).contains("the command's output is shown"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tool_call_round_trip() {
    let home = TestHome::new();
    home.write(
        "skills/calc/SKILL.md",
        "---\nname: calc\ndescription: arithmetic\n---\nCalc.\n",
    );
    home.write(
        "skills/calc/scripts/calc.py",
        "# Evaluate a product of two numbers.\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
    );
    let server = Server::start([
        Reply::text(["Let me compute."]).tool_call(
            "call_1",
            "calc__calc",
            [r#"{"args":"#, r#"["6","7"]}"#],
        ),
        Reply::text(["It is 42."]),
    ]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Let me compute.It is 42.\n");
    let first = &server.requests()[0];
    let tools = first["tools"].as_array().expect("tools offered");
    assert!(
        tools.iter().any(|t| t["function"]["name"] == "calc__calc"),
        "{tools:?}"
    );
    let m = messages(&server, 1);
    let tool_msg = m.last().unwrap();
    assert_eq!(tool_msg["role"], "tool");
    assert_eq!(tool_msg["tool_call_id"], "call_1");
    let content: Value = serde_json::from_str(tool_msg["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["stdout"], "42\n");
    assert_eq!(content["exit_code"], 0);
    assert!(content.get("script_path").is_none(), "{content}");
    assert_eq!(home.audit()[0]["kind"], "tool");
    // Local servers call tools only when asked to choose.
    assert_eq!(first["tool_choice"], "auto");
}

/// The calc skill of the tool tests, in `skills/`.
fn calc_skill(home: &TestHome) {
    home.write(
        "skills/calc/SKILL.md",
        "---\nname: calc\ndescription: arithmetic\n---\nCalc.\n",
    );
    home.write(
        "skills/calc/scripts/calc.py",
        "# Multiply two numbers.\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
    );
}

#[test]
fn a_tagged_tool_call_written_as_text_never_reaches_the_output() {
    let home = TestHome::new();
    calc_skill(&home);
    // Tagged as a Qwen or Hermes template writes it, cut into pieces as a server streams it.
    let server = Server::start([
        Reply::text([
            "<tool",
            "_call>\n{\"name\": \"calc__calc\", ",
            "\"arguments\": {\"args\": [\"6\", \"7\"]}}\n</tool_call>",
        ]),
        Reply::text(["Six times seven ", "is 42."]),
    ]);
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Six times seven is 42.\n");
    let err = stderr(&out);
    assert_eq!(
        err.matches("no tool call came back where the model tried one")
            .count(),
        1,
        "{err}"
    );
    assert!(!err.contains("tool_call>"), "{err}");
    assert_eq!(server.requests().len(), 2);
}

/// An answer that shows a JSON call of some other function (explaining what a tool call looks
/// like) is an answer: shown whole, not asked again, tools kept.
#[test]
fn a_json_example_of_another_function_is_an_answer() {
    let home = TestHome::new();
    calc_skill(&home);
    let answer = "Here is an example:\n\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n\nThe server sends that back.";
    let server = Server::start([Reply::text([answer])]);
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills"])
        .args([
            "--tools",
            "--allow-scripts",
            "-y",
            "What does a tool call look like?",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{answer}\n"));
    assert!(
        !stderr(&out).contains("no tool call came back"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_tagged_tool_call_after_some_text_is_not_shown() {
    let home = TestHome::new();
    calc_skill(&home);
    let server = Server::start([
        Reply::text([
            "I will compute it.\n<",
            "tool_call>\n{\"name\": \"calc__calc\", \"arguments\": {\"args\": [\"6\", \"7\"]}}",
            "\n</tool_call>",
        ]),
        Reply::text(["It is 42."]),
    ]);
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // What came before the call had shown; the call did not.
    assert_eq!(stdout(&out), "I will compute it.\nIt is 42.\n");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_bare_json_tool_call_after_some_text_is_not_shown() {
    let home = TestHome::new();
    calc_skill(&home);
    let server = Server::start([
        Reply::text([
            "Let me compute it. {",
            "\"name\": \"calc__calc\", \"arguments\": {\"args\": [\"6\", \"7\"]}}",
        ]),
        Reply::text(["It is 42."]),
    ]);
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Let me compute it. \nIt is 42.\n");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_answer_that_only_starts_like_a_tool_call_is_shown_whole() {
    let home = TestHome::new();
    calc_skill(&home);
    // Held while it may be a call, shown (every byte) once it is clearly not one.
    let server = Server::start([Reply::text([
        "{\"a\"",
        ": 1} is JSON; ",
        "<t",
        "able> is a tag.",
    ])]);
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "show JSON"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"a\": 1} is JSON; <table> is a tag.\n");
    assert_eq!(server.requests().len(), 1, "no second request");
}

#[test]
fn tool_call_written_as_text_falls_back_to_directives_once() {
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
        Reply::text([r#"{"name": "calc__calc", "arguments": {"args": ["6", "7"]}}"#]),
        Reply::text(["It is !{scripts/calc.py 6 7}"]),
        Reply::text([" indeed."]),
    ]);
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("no tool call came back where the model tried one")
            .count(),
        1,
        "{err}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].get("tools").is_some());
    assert!(requests[1].get("tools").is_none(), "{:?}", requests[1]);
    assert!(requests[1].get("tool_choice").is_none());
    // The text-only call is not kept as an answer: the question is asked again.
    let m = messages(&server, 1);
    assert_eq!(m.last().unwrap()["content"], "6 times 7?");
    // The rejected text never reached the output.
    assert_eq!(stdout(&out), "It is indeed.\n");
    assert_eq!(home.audit()[0]["argv"][0], "scripts/calc.py");
    let m = messages(&server, 2);
    assert_eq!(
        m.last().unwrap()["content"],
        "Output: 42 — continue your answer."
    );
}

#[test]
fn captures_per_turn_are_bounded() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["A !{echo 1}"]),
        Reply::text([" B !{echo 2} C"]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "--max-captures", "1", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(stdout(&out), "A B  C\n");
    assert!(
        stderr(&out).contains("max_captures_per_turn"),
        "{}",
        stderr(&out)
    );
}

/// Side effects count toward a per-answer bound too (default: 8, `--max-side-effects N`):
/// past it each is refused, its audit line naming the bound. Control: with the bound raised,
/// the same answer runs every one.
#[test]
fn side_effects_per_turn_are_bounded() {
    let answer: String = (0..12).map(|n| format!("%{{echo s{n}}} ")).collect();
    let ran = |home: &TestHome| {
        home.audit()
            .iter()
            .filter(|r| r["decision"] == "ran")
            .count()
    };
    let limited = |home: &TestHome| -> Vec<serde_json::Value> {
        home.audit()
            .into_iter()
            .filter(|r| r["limit"] == "max_side_effects_per_turn")
            .collect()
    };
    for (flag, runs) in [(None, 8), (Some("3"), 3), (Some("20"), 12)] {
        let home = TestHome::new();
        let server = Server::start([Reply::text([answer.as_str()])]);
        let mut c = chat(&home, &server);
        c.args(["--allow", "echo", "-y"]);
        if let Some(n) = flag {
            c.args(["--max-side-effects", n]);
        }
        let out = c.arg("go").output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(ran(&home), runs, "{flag:?}: {:?}", home.audit());
        let refused = limited(&home);
        assert_eq!(refused.len(), 12 - runs, "{flag:?}: {refused:?}");
        assert!(
            refused.iter().all(|r| r["decision"] == "denied"),
            "{refused:?}"
        );
    }
}

/// The same command written with other spacing or quoting is the same command.
#[test]
fn a_capture_respelled_is_still_a_repeat() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["a !{echo \"x y\"}"]),
        Reply::text(["b !{ echo  'x y' }"]),
        Reply::text(["c !{echo x\\ y}"]),
        Reply::text(["done"]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(home.audit().len(), 1, "ran once: {:?}", home.audit());
    assert!(stderr(&out).contains("not run again"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopped: the model wrote"),
        "{}",
        stderr(&out)
    );
}

/// A side effect between two same captures may change what the second would answer: it runs
/// again (program order), where without one it would not.
#[test]
fn a_capture_after_a_side_effect_runs_again() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["First !{cat note}"]),
        Reply::text(["I see. %{touch note} now !{cat note}"]),
        Reply::text(["Done."]),
    ]);
    let work = home.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let out = chat(&home, &server)
        .current_dir(&work)
        .args([
            "--allow",
            "cat",
            "--allow",
            "touch",
            "-y",
            "--writable",
            ".",
        ])
        .args(["--sandbox", "best-effort", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("not run again"), "{}", stderr(&out));
    let cats = home
        .audit()
        .iter()
        .filter(|r| r["argv"][0] == "cat")
        .count();
    assert_eq!(cats, 2, "{:?}", home.audit());
}

#[test]
fn repeated_capture_reuses_the_result_then_stops_with_it_shown() {
    let home = TestHome::new();
    let server = Server::start((0..5).map(|_| Reply::text(["again !{echo same}"])));
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 3);
    // Run once; the repeat is answered from the first run and the model is told so.
    assert_eq!(home.audit().len(), 1, "{:?}", home.audit());
    let m = messages(&server, 2);
    let told = m.last().unwrap()["content"].as_str().unwrap();
    assert!(told.contains("not run again"), "{told}");
    assert!(told.contains("Output: same"), "{told}");
    let err = stderr(&out);
    assert!(err.contains("not run again: !{echo same}"), "{err}");
    assert!(
        err.contains("stopped: the model wrote !{echo same} again"),
        "{err}"
    );
    // The turn does not end without the result, and the user is told whose words those are.
    assert_eq!(stdout(&out), "again again again same\n");
    assert!(
        err.contains("the command's output is shown as the answer"),
        "{err}"
    );
}

/// The loop guard's notices quote the model's directive: a terminal escape in it (here one that
/// would set the window title) reaches stderr escaped, on one line, never as the control.
#[test]
fn a_notice_quoting_a_hostile_directive_is_shown_escaped() {
    let home = TestHome::new();
    let hostile = "x !{echo \x1b]2;pwned\x07}";
    let server = Server::start((0..5).map(|_| Reply::text([hostile])));
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Positive control: the escape did come from the model (the history sends it back as is).
    let m = messages(&server, 1);
    let again = m.iter().rev().find(|m| m["role"] == "assistant").unwrap();
    assert!(
        again["content"].as_str().unwrap().contains('\x1b'),
        "{again}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("skillpipe: not run again: !{echo ␛]2;pwned␇} (same as"),
        "{err}"
    );
    assert!(
        err.contains("skillpipe: stopped: the model wrote !{echo ␛]2;pwned␇} again"),
        "{err}"
    );
    assert!(!err.contains(['\x1b', '\x07']), "{err:?}");
}
#[test]
fn a_bare_repeated_capture_never_ends_the_turn_empty() {
    let home = TestHome::new();
    let server = Server::start((0..5).map(|_| Reply::text(["!{echo 391}"])));
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "391\n");
    assert_eq!(home.audit().len(), 1);
}

#[test]
fn prompt_from_piped_stdin() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["piped answer"])]);
    let out = chat(&home, &server)
        .write_stdin("question from a pipe\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "piped answer\n");
    assert_eq!(
        messages(&server, 0).last().unwrap()["content"],
        "question from a pipe\n"
    );
}

#[test]
fn replay_runs_the_shipped_agent_offline() {
    let home = TestHome::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let out = home
        .cmd()
        .current_dir(root)
        .args([
            // README's form: the shipped agent and skills named explicitly (a clean checkout
            // is not a trusted directory).
            "chat",
            "--agent",
            "agents/researcher.toml",
            "--skills-dir",
            "skills",
            "--model",
            "replay:agents/transcripts/researcher.jsonl",
            "--allow-scripts",
            "-y",
            "What does ephemeral mean?",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("!{"), "{text}");
    assert!(
        home.audit().iter().all(|r| r["decision"] == "ran"),
        "{:?}",
        home.audit()
    );
}

/// An agent from outside the user's own config folders (`--agent PATH`) sets only sampling and
/// length parameters: `n` and `store` are ignored with a notice naming them, `temperature` and
/// `max_tokens` are sent. Control: the same file in the user's agents folder sends all four.
#[test]
fn a_foreign_agent_sets_only_sampling_and_length_parameters() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["one"]), Reply::text(["two"])]);
    let text = "name = \"greedy\"\ninstructions = \"Be brief.\"\n[params]\n\
                temperature = 0.3\nmax_tokens = 50\nn = 64\nstore = true\n";
    home.write("project/greedy.toml", text);
    home.write("config/skillpipe/agents/greedy.toml", text);
    let chat = |agent: &str| {
        home.cmd()
            .args(["chat", "--base-url", &server.url, "--model", "m"])
            .args(["--agent", agent, "hi"])
            .output()
            .unwrap()
    };
    let out = chat("project/greedy.toml");
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &server.recorded()[0].body;
    assert_eq!(
        (body["temperature"].clone(), body["max_tokens"].clone()),
        (json!(0.3), json!(50))
    );
    assert!(
        body.get("n").is_none() && body.get("store").is_none(),
        "{body}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("params.n") && err.contains("params.store"),
        "{err}"
    );
    // Control: the user's own agent is the user's word.
    let out = chat("greedy");
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &server.recorded()[1].body;
    assert_eq!(
        (body["n"].clone(), body["store"].clone()),
        (json!(64), json!(true))
    );
}

#[test]
fn anthropic_provider_from_the_command_line() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Bonjour", " !"])]);
    // The key goes to this (local) server because the user's config names it.
    home.write(
        "config/skillpipe/config.toml",
        "[providers.anthropic]\napi_key_env = \"ANTHROPIC_API_KEY\"\n",
    );
    let out = home
        .cmd()
        .env("ANTHROPIC_API_KEY", "ak-test")
        .args([
            "chat",
            "--model",
            "anthropic:claude-test",
            "--base-url",
            &server.base,
            "--allow",
            "echo",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Bonjour !\n");
    let rec = &server.recorded()[0];
    assert_eq!(rec.path, "/v1/messages");
    assert_eq!(rec.headers["x-api-key"], "ak-test");
    assert_eq!(rec.body["model"], "claude-test");
    assert_eq!(rec.body["stream"], true);
    // The system prompt goes in Anthropic's own field, not as a message.
    assert!(rec.body["system"].as_str().unwrap().contains("!{"));
    assert_eq!(rec.body["messages"][0]["role"], "user");
}

#[test]
fn no_stream_asks_for_the_whole_answer() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["It is !{echo 42}"]),
        Reply::text([" forty-two."]),
    ]);
    let out = chat(&home, &server)
        .args(["--no-stream", "--allow", "echo", "-y", "what?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It is forty-two.\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(|r| r["stream"] == false), "{reqs:?}");
}

#[test]
fn r9s_variables_choose_endpoint_key_and_model() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["from r9s"])]);
    let out = home
        .cmd()
        .env("R9S_BASE_URL", &server.url)
        .env("R9S_API_KEY", "r9s-key")
        .env("R9S_MODEL", "r9s-model")
        .env("OPENAI_API_KEY", "must-not-be-sent")
        .args(["chat", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "from r9s\n");
    let rec = &server.recorded()[0];
    assert_eq!(rec.path, "/v1/chat/completions");
    // The test server is on this machine: the ambient key stays home (see the next test).
    assert!(!rec.headers.contains_key("authorization"), "{rec:?}");
    assert_eq!(rec.body["model"], "r9s-model");
}

/// An ambient key (`$OPENAI_API_KEY`, set for the hosted service) is not sent to a server on
/// this machine that `--base-url` names; `doctor` says so. Control: where the user's config
/// names the variable (`api_key_env`), the same key is sent there.
#[test]
fn an_ambient_key_is_not_sent_to_a_local_server() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["one"]), Reply::text(["two"])]);
    let chat = |home: &TestHome| {
        home.cmd()
            .env("OPENAI_API_KEY", "sk-ambient")
            .args(["chat", "--base-url", &server.url, "--model", "m", "hi"])
            .output()
            .unwrap()
    };
    let out = chat(&home);
    assert!(out.status.success(), "{}", stderr(&out));
    let rec = &server.recorded()[0];
    assert!(!rec.headers.contains_key("authorization"), "{rec:?}");
    let doctor = home
        .cmd()
        .env("OPENAI_API_KEY", "sk-ambient")
        .args(["doctor", "--base-url", &server.url, "--model", "m"])
        .output()
        .unwrap();
    let text = stdout(&doctor);
    assert!(
        text.contains("$OPENAI_API_KEY is set but not sent"),
        "{text}"
    );
    assert!(!text.contains("sk-ambient"), "{text}");
    // A local server that wants a key says so; the advice is to name one, not to set the
    // variable that is set already.
    let refusing = Server::start([Reply::status(401, "{\"error\": {\"message\": \"key?\"}}")]);
    let out = home
        .cmd()
        .env("OPENAI_API_KEY", "sk-ambient")
        .args(["chat", "--base-url", &refusing.url, "--model", "m", "hi"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(err.contains("api_key_env"), "{err}");
    assert!(!err.contains("set $OPENAI_API_KEY"), "{err}");
    // Control: named in the user's config, it is sent.
    home.write(
        "config/skillpipe/config.toml",
        "[providers.openai]\napi_key_env = \"OPENAI_API_KEY\"\n",
    );
    let out = chat(&home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.recorded()[1].headers["authorization"],
        "Bearer sk-ambient"
    );
}

#[test]
fn config_file_providers_are_used() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["from config"]), Reply::text(["flag wins"])]);
    home.write(
        "config/skillpipe/config.toml",
        &format!(
            "default_provider = \"local\"\n\n[providers.local]\nbase_url = \"{}\"\n\
             api_key_env = \"LOCAL_KEY\"\nmodel = \"cfg-model\"\nparams = {{ temperature = 0.5 }}\n",
            server.url
        ),
    );
    let out = home
        .cmd()
        .env("LOCAL_KEY", "local-key")
        .args(["chat", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "from config\n");
    let rec = &server.recorded()[0];
    assert_eq!(rec.headers["authorization"], "Bearer local-key");
    assert_eq!(rec.body["model"], "cfg-model");
    assert_eq!(rec.body["temperature"], 0.5);
    // A flag beats the config file.
    let out = home
        .cmd()
        .env("LOCAL_KEY", "local-key")
        .args(["chat", "--model", "local:other", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.recorded()[1].body["model"], "other");
}

#[test]
fn config_file_error_is_a_usage_error_naming_file_and_line() {
    let home = TestHome::new();
    let path = home.write(
        "config/skillpipe/config.toml",
        "[providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\nbogus = 1\n",
    );
    let out = home.cmd().args(["chat", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:3", path.display())) && err.contains("bogus"),
        "{err}"
    );
}

#[test]
fn tool_call_arguments_with_control_characters_are_refused() {
    let home = TestHome::new();
    let canary = home.path().join("canary");
    home.write(
        "skills/mark/SKILL.md",
        "---\nname: mark\ndescription: marks\n---\nMark.\n",
    );
    home.write(
        "skills/mark/scripts/mark.sh",
        &format!("touch {}\n", canary.display()),
    );
    // An escape sequence could redraw the confirmation prompt; a bidi override reorder it.
    let server = Server::start([
        Reply::text(["One."]).tool_call("c1", "mark__mark", [r#"{"args":["ok\u001b[2Kx"]}"#]),
        Reply::text(["Two."]).tool_call("c2", "mark__mark", [r#"{"args":["a\u202eb"]}"#]),
        Reply::text(["Done."]),
    ]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills"])
        .args(["--tools", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!canary.exists(), "a tool call with a control character ran");
    for i in [1, 2] {
        let m = messages(&server, i);
        let content = m.last().unwrap()["content"].as_str().unwrap().to_string();
        assert!(content.contains("not run: control character"), "{content}");
    }
    let audit = home.audit();
    assert_eq!(audit.len(), 2);
    assert!(
        audit.iter().all(|r| r["decision"] == "invalid"),
        "{audit:?}"
    );
}

#[test]
fn zero_max_captures_is_a_usage_error() {
    let home = TestHome::new();
    let server = Server::start([]);
    let out = chat(&home, &server)
        .args(["--max-captures", "0", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--max-captures"), "{}", stderr(&out));
    assert!(server.requests().is_empty());
}

#[test]
fn unreachable_endpoint_fails_cleanly() {
    let home = TestHome::new();
    // A port nothing listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = home
        .cmd()
        .args(["chat", "--base-url", &url, "--model", "m", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("cannot reach the model endpoint"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn skill_examples_go_first_as_a_fixed_few_shot_exchange() {
    let home = TestHome::new();
    home.write(
        "skills/calc/SKILL.md",
        "---\nname: calc\ndescription: arithmetic\n---\n# calc\n\nMultiplies.\n\n## Example\n\nUser: What is 8 times 9?\nYou: !{scripts/calc.py 8 9}\nOutput: 72\nYou: 8 times 9 is 72.\n",
    );
    home.write(
        "skills/calc/scripts/calc.py",
        "# Multiply two numbers.\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
    );
    let server = Server::start([
        Reply::text(["!{scripts/calc.py 6 7}"]),
        Reply::text(["6 times 7 is 42."]),
    ]);
    // Named with --skill: its body (and example) is shown in full, not as a catalog entry.
    let out = chat(&home, &server)
        .args(["--coach", "small-model"])
        .args(["--skills-dir", "skills", "--skill", "calc"])
        .args(["--allow-scripts", "-y", "6 times 7?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "6 times 7 is 42.\n");
    let first = messages(&server, 0);
    let roles: Vec<&str> = first.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
    let system = first[0]["content"].as_str().unwrap();
    assert!(
        !system.contains("What is 8 times 9?"),
        "the example is not repeated"
    );
    // A message answered in words, the skill's example, a question answered in words, then a
    // question about the syntax answered in backticks.
    assert_eq!(first[1]["content"], "Thanks, that is all I needed.");
    let shots = &first[3..];
    assert_eq!(shots[0]["content"], "What is 8 times 9?");
    // Opened by the skill's name, which the model chooses by.
    assert_eq!(shots[1]["content"], "Using calc: !{scripts/calc.py 8 9}");
    assert_eq!(shots[2]["content"], "Output: 72 — continue your answer.");
    assert_eq!(shots[3]["content"], "8 times 9 is 72.");
    assert_eq!(shots[4]["content"], "And how many hours are in a day?");
    assert_eq!(shots[5]["content"], "A day has 24 hours.");
    assert!(
        shots[7]["content"]
            .as_str()
            .unwrap()
            .contains("`!{scripts/calc.py 8 9}`")
    );
    assert_eq!(shots[8]["content"], "6 times 7?");
    // The continuation repeats the same prefix (the server's prompt cache keeps it) plus two messages.
    let second = messages(&server, 1);
    assert_eq!(second[..first.len()], first[..]);
    assert_eq!(second.len(), first.len() + 2);
    assert_eq!(
        second.last().unwrap()["content"],
        "Output: 42 — continue your answer."
    );
}

#[test]
fn answers_on_a_pipe_are_the_raw_markdown() {
    let home = TestHome::new();
    let answer = "# Title\n\nSome **bold** text.\n\n> quoted\n\n```sh\necho hi\n```\n";
    let server = Server::start([Reply::text([answer])]);
    let out = chat(&home, &server).arg("hi").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), answer);
}

#[test]
fn a_base_url_without_a_model_uses_the_servers_only_model() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["hello"])]);
    server.set_models(&["qwen2.5:0.5b"]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("using qwen2.5:0.5b, the only model"),
        "{}",
        stderr(&out)
    );
    let rec = server.recorded();
    assert_eq!(rec[0].path, "/v1/models");
    assert_eq!(rec[1].body["model"], "qwen2.5:0.5b");
}

/// A provider from the config with no model is asked for its models, like a bare --base-url;
/// Ollama's default model is used only when the server has it.
#[test]
fn a_configured_server_without_a_model_is_asked_for_its_models() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["hello"])]);
    server.set_models(&["served-one"]);
    home.write(
        "config/skillpipe/config.toml",
        &format!(
            "default_provider = \"local\"\n\n[providers.local]\nbase_url = \"{}\"\n",
            server.url
        ),
    );
    let out = home.cmd().args(["chat", "hi"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.recorded()[1].body["model"], "served-one");

    let server = Server::start([Reply::text(["hello"])]);
    server.set_models(&["llama3.2", "qwen2.5"]);
    home.write(
        "config/skillpipe/config.toml",
        &format!(
            "default_provider = \"ollama\"\n\n[providers.ollama]\nbase_url = \"{}\"\n",
            server.url
        ),
    );
    let out = home.cmd().args(["chat", "hi"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rec = server.recorded();
    assert_eq!(rec[0].path, "/v1/models");
    assert_eq!(rec[1].body["model"], "llama3.2");
}

#[test]
fn a_base_url_without_a_model_stops_with_the_servers_list() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["never"])]);
    server.set_models(&["llama3.2", "qwen2.5"]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("serves 2 models; choose one with --model: llama3.2, qwen2.5"),
        "{err}"
    );
    // No chat request was sent, least of all with a hosted model's name.
    assert!(
        server
            .recorded()
            .iter()
            .all(|r| r.path.ends_with("/models"))
    );

    // A server without a list: stop too, and say what to do.
    let bare = Server::start([Reply::text(["never"])]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &bare.url, "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("pass --model NAME"),
        "{}",
        stderr(&out)
    );
    assert_eq!(bare.remaining(), 1);

    // A server that wants a key: the key is the fix (its variable named), not a model name.
    let locked = Server::start([Reply::text(["never"])]);
    locked.set_models_status(401);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &locked.url, "hi"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("answered 401") && err.contains("no API key was sent; set $OPENAI_API_KEY"),
        "{err}"
    );
    assert!(!err.contains("pass --model"), "{err}");
    let out = home
        .cmd()
        .args(["doctor", "--online", "--base-url", &locked.url])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("no API key was sent; set $OPENAI_API_KEY"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn doctor_fails_on_a_broken_config_naming_file_and_line() {
    let home = TestHome::new();
    let config = home.write(
        "config/skillpipe/config.toml",
        "model = \"m\"\n\n[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodle = \"x\"\n",
    );
    let out = home.cmd().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}:5: unknown key `modle` in [providers.local] (expected one of",
            config.display()
        )),
        "{err}"
    );

    // The same config, fixed: doctor passes and shows the resolved settings (never the key).
    home.write(
        "config/skillpipe/config.toml",
        "default_provider = \"local\"\n\n[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\napi_key_env = \"LOCAL_KEY\"\n",
    );
    let out = home
        .cmd()
        .env("LOCAL_KEY", "sk-secret")
        .arg("doctor")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("provider               local"), "{text}");
    assert!(
        text.contains("endpoint               http://127.0.0.1:1/v1"),
        "{text}"
    );
    assert!(text.contains("model                  m"), "{text}");
    assert!(
        text.contains("API key                $LOCAL_KEY (set)"),
        "{text}"
    );
    assert!(!text.contains("sk-secret"));
}

/// A remote endpoint without its key is a warning on a fresh install (nothing in the set-up
/// needs it), and fails `doctor --online`, which would have to reach it, as chat would refuse.
#[test]
fn doctor_warns_without_the_key_a_remote_endpoint_needs_and_fails_online() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/config.toml",
        "default_provider = \"remote\"\n\n[providers.remote]\nbase_url = \"https://models.example/v1\"\nmodel = \"m\"\napi_key_env = \"REMOTE_KEY\"\n",
    );
    let out = home
        .cmd()
        .env_remove("REMOTE_KEY")
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("warning: no API key for remote"),
        "{}",
        stderr(&out)
    );
    // With --online the endpoint is not asked without its key, and doctor fails.
    let out = home
        .cmd()
        .env_remove("REMOTE_KEY")
        .args(["doctor", "--online"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("not asked: its API key is not set"),
        "{}",
        stdout(&out)
    );
    let refused = home
        .cmd()
        .env_remove("REMOTE_KEY")
        .args(["chat", "hi"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "chat refuses the same");
    let out = home
        .cmd()
        .env("REMOTE_KEY", "k")
        .arg("doctor")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A replay file chat could not read or parse fails doctor as it fails chat.
#[test]
fn doctor_fails_on_a_replay_file_chat_would_refuse() {
    let home = TestHome::new();
    let missing = home.path().join("nope.jsonl");
    let broken = home.write("broken.jsonl", "not json\n");
    let good = home.write("good.jsonl", "{\"content\": \"hi\"}\n");
    for (file, want) in [(&missing, "cannot read it"), (&broken, "line 1")] {
        let model = format!("replay:{}", file.display());
        let out = home
            .cmd()
            .args(["doctor", "--online", "--model", &model])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
    }
    // Control: a good one passes.
    let model = format!("replay:{}", good.display());
    let out = home
        .cmd()
        .args(["doctor", "--online", "--model", &model])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn doctor_fails_on_a_broken_agent() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/agents/bad.toml",
        "name = \"bad\"\nmodle = \"x\"\n",
    );
    let out = home.cmd().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("agents/bad.toml:2"),
        "{}",
        stdout(&out)
    );
}

/// `doctor --help` says what it checks: the config and the model, not only the sandbox.
#[test]
fn doctor_help_names_the_config_and_model_checks() {
    let home = TestHome::new();
    let out = home.cmd().args(["doctor", "--help"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "config.toml",
        "model",
        "--online",
        "API-key variable",
        "enforce",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
}

#[test]
fn doctor_online_lists_the_endpoints_models() {
    let home = TestHome::new();
    let server = Server::start([]);
    server.set_models(&["m1", "m2"]);
    let out = home
        .cmd()
        .args([
            "doctor",
            "--online",
            "--base-url",
            &server.url,
            "--model",
            "m2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "online                 {}/models answers: 2 models",
            server.url
        )),
        "{text}"
    );
    assert!(text.contains("  m1\n"), "{text}");
    // A model named that the endpoint does not serve fails as the endpoint not answering does.
    let out = home
        .cmd()
        .args([
            "doctor",
            "--online",
            "--base-url",
            &server.url,
            "--model",
            "m3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("ERROR ") && stderr(&out).contains("does not serve model m3"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // A name without a tag is the `:latest` one the endpoint lists (Ollama's names).
    server.set_models(&["qwen2.5:latest", "m2"]);
    let out = home
        .cmd()
        .args(["doctor", "--online", "--base-url", &server.url])
        .args(["--model", "qwen2.5"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    server.set_models(&["m1", "m2"]);

    // No model named: doctor fails where chat would stop (two models, none chosen)…
    let out = home
        .cmd()
        .args(["doctor", "--online", "--base-url", &server.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("serves 2 models; choose one with --model: m1, m2"),
        "{}",
        stdout(&out)
    );
    // …and, the control, says which model chat would use when there is one.
    let one = Server::start([]);
    one.set_models(&["solo"]);
    let out = home
        .cmd()
        .args(["doctor", "--online", "--base-url", &one.url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("chat would use solo"),
        "{}",
        stdout(&out)
    );
    // A broken agent file elsewhere fails doctor but the endpoint is still checked.
    home.write("config/skillpipe/agents/typo.toml", "modle = \"y\"\n");
    let out = home
        .cmd()
        .args(["doctor", "--online", "--base-url", &one.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("answers: 1 model"),
        "{}",
        stdout(&out)
    );
    std::fs::remove_file(home.path().join("config/skillpipe/agents/typo.toml")).unwrap();

    // A replay file has nothing to reach: not a failure.
    let replay = home.write("r.jsonl", "{\"content\": \"x\"}\n");
    let out = home
        .cmd()
        .args(["doctor", "--online", "--model"])
        .arg(format!("replay:{}", replay.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("nothing to reach"),
        "{}",
        stdout(&out)
    );

    let down = Server::start([]);
    let out = home
        .cmd()
        .args([
            "doctor",
            "--online",
            "--base-url",
            &down.url,
            "--model",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("online                 FAILED"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_failed_side_effect_says_why_and_show_side_effects_works_in_chat() {
    let home = TestHome::new();
    let server = Server::start([Reply::text([
        "Done.%{ls /no-such-dir-for-skillpipe}%{printf 'side output \\033[2J'}",
    ])]);
    let out = chat(&home, &server)
        .args([
            "--allow",
            "ls",
            "--allow",
            "printf",
            "-y",
            "--sandbox",
            "best-effort",
        ])
        .args(["--show-side-effects", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\n");
    let err = stderr(&out);
    assert!(
        // One wording for both modes (DESIGN §2): `exit N`, then the last line of stderr.
        err.contains("failed: %{ls /no-such-dir-for-skillpipe}: exit 2: ls: cannot access"),
        "{err}"
    );
    // The side effect's output: stderr is a pipe here, so byte-exact as in `filter` (a
    // terminal gets it made inert; the pty tests see that).
    assert!(err.contains("side output \u{1b}[2J"), "{err}");
}

/// Every way a turn could show nothing gets one line saying what happened. An endpoint that
/// sent nothing at all fails the one-shot run (exit 1): a script reading stdout must not take
/// the empty answer for one; a turn that did something (a side effect, a refused capture) is
/// no failure.
#[test]
fn a_turn_that_shows_nothing_says_so() {
    // (model replies, the notice on stderr, exit code); stdout, a pipe here, stays what the
    // model wrote.
    let cases: [(Vec<Reply>, &str, i32); 5] = [
        (
            vec![Reply::text([""])],
            "skillpipe: the model wrote no text\n",
            1,
        ),
        (
            vec![Reply::text(["  \n"])],
            "skillpipe: the model wrote no text\n",
            1,
        ),
        (
            vec![Reply::text(["%{echo hi}"])],
            "skillpipe: the model wrote no text\n",
            0,
        ),
        (
            vec![Reply::text(["!{false}"]), Reply::text(["  "])],
            // The spaces after the capture were all its line held: not shown.
            "skillpipe: no answer: the command failed, exit 1\n",
            0,
        ),
        (
            vec![Reply::text(["!{touch x}"]), Reply::text([""])],
            "skillpipe: no answer: not run, `touch x` is not in allowed_commands",
            0,
        ),
    ];
    for (replies, want, code) in cases {
        let home = TestHome::new();
        let server = Server::start(replies);
        let out = chat(&home, &server)
            .args(["--allow", "echo", "--allow", "false", "-y", "go"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{want}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(want), "{err}");
        assert!(stdout(&out).trim().is_empty(), "{:?}", stdout(&out));
    }
}

#[test]
fn request_fields_from_the_command_line_win_over_the_agents() {
    let home = TestHome::new();
    let agent = home.path().join("a.toml");
    std::fs::write(
        &agent,
        "name = \"a\"\ninstructions = \"Hi.\"\n[params]\ntemperature = 0.9\ntop_p = 0.1\n",
    )
    .unwrap();
    let server = Server::start([Reply::text(["ok"]), Reply::text(["ok"])]);
    let out = chat(&home, &server)
        .arg("--agent")
        .arg(&agent)
        .args(["--temperature", "0", "--max-tokens", "50"])
        .args([
            "--param",
            "top_p=0.5",
            "--param",
            "stop=[\"x\"]",
            "--param",
            "user=bob",
        ])
        .arg("hi")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let req = &server.requests()[0];
    assert_eq!(req["temperature"], 0.0);
    assert_eq!(req["max_tokens"], 50);
    assert_eq!(req["top_p"], 0.5);
    assert_eq!(req["stop"], serde_json::json!(["x"]));
    assert_eq!(req["user"], "bob");
    // The control: without the flags, the agent's own values are sent.
    let out = chat(&home, &server)
        .arg("--agent")
        .arg(&agent)
        .arg("hi")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let req = &server.requests()[1];
    assert_eq!(req["temperature"], 0.9);
    assert_eq!(req["top_p"], 0.1);
    assert!(req.get("max_tokens").is_none(), "{req}");
    // A malformed one names the flag and the form.
    let out = chat(&home, &server)
        .args(["--param", "top_p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--param top_p: expected KEY=VALUE"),
        "{}",
        stderr(&out)
    );
}

/// `skillpipe chat PROMPT | head -1`: once the reader of stdout has gone, the turn stops (while
/// the model still streams) and skillpipe exits 0 without a "Broken pipe" error.
#[test]
fn a_reader_that_goes_ends_the_answer_quietly() {
    use std::io::BufRead;
    let home = TestHome::new();
    // The model sends two lines and then goes silent: only the reader's going can end this.
    let server = Server::start([Reply::text(["first line\n", "second line\n"]).stall_after(2)]);
    let mut child = common::spawn::skillpipe()
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .current_dir(home.path())
        .args(["chat", "--base-url", &server.url, "--model", "m", "hi"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "first line\n");
    // The reader is gone (dropped with the BufReader).
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("skillpipe went on after its reader had gone");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn a_chat_that_can_run_nothing_is_not_taught_directives() {
    let home = TestHome::new();
    let server = Server::start((0..3).map(|_| Reply::text(["Hello."])));
    let system_of = |i: usize| {
        let m = messages(&server, i);
        (m[0]["role"] == "system").then(|| m[0]["content"].as_str().unwrap().to_string())
    };
    // Scripts not allowed; allowed but no skill to run: a plain chat, no system prompt.
    for flags in [&[][..], &["--allow-scripts"][..]] {
        let out = chat(&home, &server).args(flags).arg("hi").output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(system_of(0), None, "{:?}", messages(&server, 0));
    assert_eq!(system_of(1), None, "{:?}", messages(&server, 1));
    assert_eq!(messages(&server, 1).len(), 1, "no few-shot either");
    // The control: a command allowed, the guide is there.
    let out = chat(&home, &server)
        .args(["--allow", "echo", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(system_of(2).is_some_and(|s| s.contains("!{")));
}

#[test]
fn a_provider_name_one_letter_off_is_an_error_not_a_model_name() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .args(["chat", "--model", "anthropc:claude-x", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "unknown provider `anthropc` (from --model); known providers: openai, anthropic"
        ),
        "{}",
        stderr(&out)
    );
    // The control: an Ollama-style model name with a colon is a model, sent as written.
    let server = Server::start([Reply::text(["ok"])]);
    let out = home
        .cmd()
        .args([
            "chat",
            "--base-url",
            &server.url,
            "--model",
            "llama3:8b",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests()[0]["model"], "llama3:8b");
}

#[test]
fn an_answer_cut_short_says_so() {
    let home = TestHome::new();
    let server = Server::start([
        Reply::text(["The first half"]).finish_reason("length"),
        Reply::text(["Half an ans"]).no_finish(),
        Reply::text(["A whole answer."]),
    ]);
    let run = |prompt: &str| chat(&home, &server).arg(prompt).output().unwrap();
    let out = run("one");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The first half\n");
    assert!(
        stderr(&out).contains("the answer was cut at the token limit (--max-tokens N"),
        "{}",
        stderr(&out)
    );
    let out = run("two");
    assert_eq!(stdout(&out), "Half an ans\n");
    assert!(
        stderr(&out).contains("ended the answer without saying it was complete"),
        "{}",
        stderr(&out)
    );
    // The control: a finished answer gets neither.
    let out = run("three");
    assert_eq!(stdout(&out), "A whole answer.\n");
    assert!(!stderr(&out).contains("cut"), "{}", stderr(&out));
}

/// `--print-request` shows what would be sent (the system prompt and the prompt, as JSON) and
/// sends nothing.
#[test]
fn print_request_shows_the_request_and_sends_nothing() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["never asked"])]);
    let out = chat(&home, &server)
        .args([
            "--skills-dir",
            concat!(env!("CARGO_MANIFEST_DIR"), "/skills"),
        ])
        .args([
            "--skill",
            "calc",
            "--allow-scripts",
            "--print-request",
            "what is 2+2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("# Running scripts"),
        "{body}"
    );
    assert_eq!(messages.last().unwrap()["content"], "what is 2+2");
    assert_eq!(body["model"], "test-model");
    assert!(server.requests().is_empty(), "nothing was sent");

    // Nothing is asked of the endpoint either: no model list, no API key, no prompt needed.
    server.set_models(&["a", "b"]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "--print-request"])
        .write_stdin("")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(body["messages"].as_array().unwrap().is_empty(), "{body}");
    // The model chat would take from that list is not known here: none is printed, and the
    // note says why (never the hosted default, which that server does not serve).
    assert_eq!(body["model"], serde_json::Value::Null, "{body}");
    assert!(
        stderr(&out).contains("\"model\" is null here; --model NAME prints it"),
        "{}",
        stderr(&out)
    );
    let hosted = home
        .cmd()
        .args(["chat", "--model", "openai:gpt-x", "--print-request", "hi"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(hosted.status.success(), "{}", stderr(&hosted));
    // (`recorded` holds every request, the model list's `GET …/models` too.)
    assert!(
        server.recorded().is_empty(),
        "nothing sent, not even for the model list"
    );
}

/// A signal during a capture stops the chat: the run is killed and no further request goes to
/// the model (it would be billed, and tell the model a killed command did not run).
#[test]
fn a_signal_during_a_capture_sends_the_model_nothing_more() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["go !{sleep 30} after"]), Reply::text(["more"])]);
    let out = home.stop_once_started(
        &[
            "chat",
            "--base-url",
            &server.url,
            "--model",
            "test-model",
            "--allow",
            "sleep",
            "-y",
            "--sandbox",
            "best-effort",
            "hi",
        ],
        b"",
        "sleep",
    );
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1, "no request after the signal");
}

/// Nothing announced (no skill, nothing allowed): the answer is not scanned. Text shaped like a
/// directive (Rails i18n, an Elixir map, an exclamation) is shown and kept byte for byte, with
/// no report and no audit line, and the request teaches no directive.
#[test]
fn directive_shaped_text_is_kept_where_no_directive_was_announced() {
    let answer = "Rails: t('apples', count: 3) fills %{count}.\nElixir: %{name: \"Alice\"}\nSurprise!{wow}\n";
    let home = TestHome::new();
    let server = Server::start([Reply::chunked(answer, 3)]);
    let out = chat(&home, &server).arg("explain").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), answer);
    assert!(!stderr(&out).contains("blocked"), "{}", stderr(&out));
    assert!(home.audit().is_empty(), "{:?}", home.audit());
    let sent = serde_json::to_string(&server.requests()[0]).unwrap();
    assert_eq!(
        messages(&server, 0).len(),
        1,
        "the user's message only: {sent}"
    );
    assert!(!sent.contains("!{") && !sent.contains("%{"), "{sent}");
    // The control: with a command allowed, directives are announced and acted on.
    let home = TestHome::new();
    let server = Server::start([Reply::chunked(answer, 3), Reply::text(["."])]);
    let out = chat(&home, &server)
        .args(["--allow", "echo", "-y", "explain"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("%{count}"), "{}", stdout(&out));
    assert!(stderr(&out).contains("blocked"), "{}", stderr(&out));
}

/// Skills loaded, no script allowed: the model is told of the skills and their reads, nothing
/// else of the syntax; a script directive it writes anyway is text, while a skill read runs.
/// The control: with scripts allowed the same directive runs.
#[test]
fn with_scripts_off_only_skill_reads_are_announced() {
    let home = TestHome::new();
    home.calc_with_example("skills");
    let answer = "Sure %{scripts/calc.py 2 3} and %{say hi}.";
    let server = Server::start([
        Reply::text([answer]),
        Reply::text(["!{skill calc}"]),
        Reply::text(["It multiplies."]),
    ]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{answer}\n"));
    assert!(home.audit().is_empty(), "{:?}", home.audit());
    let m = messages(&server, 0);
    assert_eq!(m.len(), 2, "system and user only: {m:?}");
    let system = m[0]["content"].as_str().unwrap();
    assert!(system.contains("!{skill NAME}"), "{system}");
    assert!(system.contains("calc"), "{system}");
    for taught in ["# Running scripts", "8 times 9", "scripts/calc.py", "%{"] {
        assert!(!system.contains(taught), "{taught}: {system}");
    }
    // The built-in read runs (a file read, no script), without a table of scripts to run.
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills", "-y", "what does calc do?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It multiplies.\n");
    let result = messages(&server, 2).last().unwrap()["content"].clone();
    let result = result.as_str().unwrap();
    assert!(result.contains("# calc"), "{result}");
    assert!(!result.contains("| script |"), "{result}");
    assert_eq!(home.audit()[0]["decision"], "ran");

    // The control: scripts allowed, the guide is sent and the same directive runs.
    let home = TestHome::new();
    home.calc_with_example("skills");
    let server = Server::start([Reply::text([answer])]);
    let out = chat(&home, &server)
        .args(["--skills-dir", "skills", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Sure  and .\n", "{}", stderr(&out));
    let audit = home.audit();
    assert_eq!(audit[0]["decision"], "ran", "{audit:?}");
    assert_eq!(audit[1]["decision"], "denied", "{audit:?}");
    let system = messages(&server, 0)[0]["content"].clone();
    assert!(system.as_str().unwrap().contains("# Running scripts"));
}

/// Without coaching a request is the system prompt and the user's message, nothing invented;
/// `--coach small-model` (or `coach` in the config file) sends the worked exchanges.
#[test]
fn an_uncoached_request_is_the_system_prompt_and_the_users_message() {
    let home = TestHome::new();
    home.calc_with_example("skills");
    let server = Server::start((0..3).map(|_| Reply::text(["Fine."])));
    let args = [
        "--skills-dir",
        "skills",
        "--skill",
        "calc",
        "--allow-scripts",
        "-y",
    ];
    let out = chat(&home, &server).args(args).arg("hi").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = messages(&server, 0);
    let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user"], "{m:?}");
    assert_eq!(m[1]["content"], "hi");
    // The skill's own text, its example included, as its author wrote it.
    let system = m[0]["content"].as_str().unwrap();
    assert!(system.contains("# Running scripts"), "{system}");
    assert!(system.contains("What is 8 times 9?"), "{system}");
    // The control: coached, the exchanges go between the system prompt and the question.
    let out = chat(&home, &server)
        .args(args)
        .args(["--coach", "small-model", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let m = messages(&server, 1);
    assert!(m.len() > 2, "{m:?}");
    assert_eq!(m[1]["content"], "Thanks, that is all I needed.");
    // The same from the config file.
    home.write("config/skillpipe/config.toml", "coach = \"small-model\"\n");
    let out = chat(&home, &server).args(args).arg("hi").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(messages(&server, 2).len(), m.len());
    // A mode that does not exist is a usage error naming the flag's values.
    let out = chat(&home, &server)
        .args(["--coach", "qwen", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("small-model"), "{}", stderr(&out));
}

/// One-shot chat stopped by SIGTERM while a side effect runs and the model has gone quiet: the
/// side effect's end is still reported (the chat does not wait for the model's next words to
/// get it out), and skillpipe exits as stopped by the signal.
#[test]
fn a_side_effect_stopped_by_a_signal_is_reported_while_the_model_is_quiet() {
    let home = TestHome::new();
    let server = Server::start([Reply::text(["Wait.%{sleep 30}"]).stall_after(1)]);
    let url = server.url.clone();
    let args = [
        "chat",
        "--base-url",
        &url,
        "--model",
        "m",
        "--allow",
        "sleep",
        "-y",
        "--sandbox",
        "best-effort",
        "hi",
    ];
    let out = home.stop_once_started(&args, b"", "sleep");
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let last = home.audit_all().pop().unwrap();
    assert_eq!(last["phase"], "completed", "{last}");
    assert!(
        stderr(&out).contains("failed: %{sleep 30}: interrupted by SIGTERM"),
        "{}",
        stderr(&out)
    );
}
