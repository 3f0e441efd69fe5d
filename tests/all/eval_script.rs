//! `scripts/eval_model.py` (issue #13's evaluation) scores from audit logs: run against the
//! in-test model server with a scripted answer per request, so it needs no real model. A case
//! that needs two directives is right only when both ran.

use crate::common;

use common::{Reply, Server, TestHome};

#[test]
fn eval_scores_directives_results_and_false_triggers() {
    let home = TestHome::new();
    let cases = home.write(
        "cases.json",
        r#"{"cases": [
  {"id": "calc", "agent": "researcher", "kind": "capture", "expect": "calc.py", "answer": "391", "prompt": "17 times 23?"},
  {"id": "copied", "agent": "researcher", "kind": "capture", "expect": "calc.py", "answer": "391", "prompt": "17 times 23, again?"},
  {"id": "chat", "agent": "researcher", "kind": "none", "prompt": "Hi"},
  {"id": "syntax", "agent": "researcher", "kind": "syntax", "prompt": "How do I compute?"},
  {"id": "misfire", "agent": "researcher", "kind": "syntax", "prompt": "Show one."},
  {"id": "silent", "agent": "researcher", "kind": "syntax", "prompt": "Explain it."},
  {"id": "mute", "agent": "researcher", "kind": "capture", "expect": "calc.py", "answer": "391", "prompt": "And 17 times 23 once more?"},
  {"id": "both", "agent": "study-buddy", "kind": "capture", "expect": "lookup.py", "arg": "candid", "also": [{"kind": "side_effect", "expect": "say.sh"}], "prompt": "What does candid mean?"},
  {"id": "half", "agent": "study-buddy", "kind": "capture", "expect": "lookup.py", "arg": "candid", "also": [{"kind": "side_effect", "expect": "say.sh"}], "prompt": "Candid?"}
]}"#,
    );
    let server = Server::start([
        Reply::text(["!{scripts/calc.py \"17 * 23\"}"]),
        Reply::text(["17 times 23 is 391."]),
        // A copied example value: the right script, the wrong expression.
        Reply::text(["!{scripts/calc.py \"287 / 3.5\"}"]),
        Reply::text(["It is 82."]),
        Reply::text(["Hello!"]),
        Reply::text(["Write `!{scripts/calc.py \"2 + 2\"}`."]),
        Reply::text(["Like this: !{scripts/calc.py \"1 + 1\"}"]),
        Reply::text([" there."]),
        // A capture that fails, then no text: skillpipe's "(no answer: …)" is no answer.
        Reply::text(["!{scripts/calc.py \"1 / 0\"}"]),
        Reply::text([""]),
        // The right capture, then nothing: skillpipe shows 391, which is not the model using it.
        Reply::text(["!{scripts/calc.py \"17 * 23\"}"]),
        Reply::text([""]),
        // Looked up, then pronounced: both directives the case needs ran.
        Reply::text(["!{scripts/lookup.py \"candid\"}"]),
        Reply::text([
            "Candid means truthful and straightforward; frank. %{scripts/say.sh \"candid\"} Tip: candid cameras.",
        ]),
        // Looked up and explained, never pronounced: the second directive is missing.
        Reply::text(["!{scripts/lookup.py \"candid\"}"]),
        Reply::text(["Candid means truthful and straightforward; frank."]),
    ]);
    let out = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/eval_model.py"
        ))
        .args(["--base-url", &server.url, "--model", "test-model"])
        .args(["--bin", env!("CARGO_BIN_EXE_skillpipe")])
        .arg("--cases")
        .arg(&cases)
        .env("HOME", home.path())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = |id: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row {id} in {stdout}"))
            .split_whitespace()
            .skip(2)
            .take(6)
            .collect::<Vec<_>>()
            .join(" ")
    };
    // right false used empty runs needs(met/needed)
    assert_eq!(row("calc"), "yes - yes no 1 1/1");
    assert_eq!(row("copied"), "no - - no 1 0/1");
    assert_eq!(row("chat"), "- no - no 0 -");
    assert_eq!(row("syntax"), "- no - no 0 -");
    assert_eq!(row("misfire"), "- yes - no 1 -");
    assert_eq!(row("silent"), "- yes - yes 1 -");
    assert_eq!(row("mute"), "yes - no no 1 1/1");
    assert_eq!(row("both"), "yes - yes no 2 2/2");
    assert_eq!(row("half"), "no - yes no 1 1/2");
    for needle in [
        "right_directive                3/5 (60%)",
        "needed_directives_right        5/7 (71%)",
        "multi_need_all_ran             1/2 (50%)",
        "false_trigger                  2/4 (50%)",
        "syntax_directives              2",
        "syntax_runs                    2",
        "false_trigger_that_ran         2/4 (50%)",
        "result_used_of_ran             3/4 (75%)",
        "results_shown_by_skillpipe     1",
        "empty_answers                  1",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
    // Every shipped agent's prompt size is read from `agents show`.
    let sizes = stdout
        .lines()
        .find(|l| l.starts_with("system_prompt_bytes"))
        .unwrap_or_default();
    assert!(
        sizes.contains("'researcher': '") && !sizes.contains('?'),
        "{sizes}"
    );
}
