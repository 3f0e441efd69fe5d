//! Skills at real scale (issue 12), end to end with the built binary and fixture skills of the
//! shapes real collections have: many installed skills, a 70 KB SKILL.md body, package-style
//! Python scripts, one script path shared by several skills, scripts that take paths relative
//! to where the user works. Every fixture is written here.

use crate::common;

use common::{Reply, Server, TestHome};
use serde_json::Value;
use std::path::Path;

/// Above this the system prompt with 30 installed skills and no agent fails the target.
const TARGET_PROMPT_BYTES: usize = 12 * 1024;

fn chat(home: &TestHome, server: &Server) -> assert_cmd::Command {
    let mut c = home.cmd();
    c.args(["chat", "--base-url", &server.url, "--model", "test-model"]);
    c
}

fn messages(server: &Server, i: usize) -> Vec<Value> {
    server.requests()[i]["messages"].as_array().unwrap().clone()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A skill folder under `root` with a SKILL.md and the given files.
fn skill(root: &Path, name: &str, description: &str, body: &str, files: &[(&str, &str)]) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}"),
    )
    .unwrap();
    for (rel, content) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

/// A body of about `bytes` bytes of generated instructions.
fn long_body(bytes: usize) -> String {
    let mut out = String::from("# Big skill\n\nSTART-OF-BIG-BODY\n");
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "Step {i}: check the input, then write the result to the output file.\n"
        ));
        i += 1;
    }
    out.push_str("END-OF-BIG-BODY\n");
    out
}

/// 30 installed skills in `~/.claude/skills` (one with a 70 KB body, some with scripts and
/// descriptions near the spec's limit), as a user with real collections has them.
fn install_thirty(home: &TestHome) -> std::path::PathBuf {
    let root = home.path().join(".claude/skills");
    for i in 0..29 {
        let description = format!(
            "Handles task family {i} - reading, converting and summarising documents of kind {i}. \
             Use it when the user asks about kind {i} files, their layout or their contents. {}",
            "More detail on when it applies. ".repeat(i % 4)
        );
        let scripts: Vec<(String, String)> = (0..(i % 5))
            .map(|k| {
                (
                    format!("scripts/tool_{k}.py"),
                    format!("\"\"\"Tool {k} of kind {i}.\"\"\"\nimport sys\nprint(sys.argv)\n"),
                )
            })
            .collect();
        let files: Vec<(&str, &str)> = scripts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        skill(
            &root,
            &format!("kind-{i:02}"),
            &description,
            &format!("# Kind {i}\n\n{}", "Detailed guidance line.\n".repeat(200)),
            &files,
        );
    }
    skill(
        &root,
        "big",
        "A skill with a very long body.",
        &long_body(70 * 1024),
        &[("references/extra.md", "EXTRA-REFERENCE-TEXT\n")],
    );
    root
}

#[test]
fn thirty_installed_skills_without_an_agent_stay_under_budget() {
    let home = TestHome::new();
    install_thirty(&home);
    let server = Server::start([Reply::text(["ok"])]);
    // Scripts allowed: the prompt tells how to run them (and lists their paths).
    let out = chat(&home, &server)
        .args(["--allow-scripts", "-v", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let system = messages(&server, 0)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.len() <= TARGET_PROMPT_BYTES,
        "system prompt is {} bytes",
        system.len()
    );
    assert!(
        system.contains("- big: A skill with a very long body.\n"),
        "{system}"
    );
    assert!(system.contains("!{skill NAME}"), "{system}");
    assert!(!system.contains("START-OF-BIG-BODY"));
    assert!(!system.contains("Detailed guidance line."));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "skillpipe: system prompt: {} bytes, ~{} tokens (skills: 0 in full, 30 in the catalog)",
            system.len(),
            system.len().div_ceil(4)
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("over the budget"), "{stderr}");
}

#[test]
fn verbose_counts_the_tool_schemas_sent_with_tools() {
    let home = TestHome::new();
    install_thirty(&home);
    let server = Server::start([Reply::text(["ok"])]);
    let out = chat(&home, &server)
        .args(["-v", "--tools", "--allow-scripts", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools = server.requests()[0]["tools"].clone();
    let n = tools.as_array().unwrap().len();
    let bytes = tools.to_string().len();
    // Every skill's tools would take each request over the budget: only `load_skill` goes
    // at first (no skill is named in full), and the user is told.
    assert_eq!(n, 1, "{tools}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--tools: 1 of ")
            && stderr.contains(
                " tools are offered at first (only load_skill: no skill is named in full)"
            ),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "; tool schemas: {n} tool, {bytes} bytes, ~{} tokens; each request starts with ",
            bytes.div_ceil(4)
        )),
        "{stderr}"
    );
}

#[test]
fn a_named_skill_keeps_its_body_and_a_big_one_warns() {
    let home = TestHome::new();
    install_thirty(&home);
    let server = Server::start([Reply::text(["ok"])]);
    let out = chat(&home, &server)
        .args(["--skill", "big", "-v", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let system = messages(&server, 0)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("START-OF-BIG-BODY") && system.contains("END-OF-BIG-BODY"));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("(skills: 1 in full, 0 in the catalog)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: the system prompt is") && stderr.contains("over the budget"),
        "{stderr}"
    );
    // The advice fits: one skill named in full, none in the catalog.
    assert!(
        stderr.contains("skill `big` is sent in full (")
            && stderr.contains("left unnamed, it is a one-line catalog entry")
            && !stderr.contains("the others stay in the catalog"),
        "{stderr}"
    );
}

/// 30 spec-valid skills with descriptions near the 1024-character limit and six scripts each
/// (script names shared, so every path is qualified): the catalog keeps its own budget.
#[test]
fn thirty_skills_at_the_spec_limits_stay_under_budget() {
    let home = TestHome::new();
    let root = home.path().join(".claude/skills");
    let description = "Handles a family of document tasks - reading, converting, checking and \
                       summarising files of this kind, with care for layout and content. "
        .repeat(8)[..1020]
        .trim()
        .to_string();
    let names = [
        "extract_text",
        "convert_format",
        "check_layout",
        "summarise_doc",
        "validate_input",
        "render_output",
    ];
    let scripts: Vec<(String, String)> = names
        .iter()
        .map(|n| {
            (
                format!("scripts/{n}.py"),
                format!("\"\"\"{n} does things.\"\"\"\nimport sys\nprint(sys.argv)\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = scripts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    for i in 0..30 {
        skill(
            &root,
            &format!("skill-number-{i:02}"),
            &description,
            "# Body\nUse the scripts.\n",
            &files,
        );
    }
    let server = Server::start([Reply::text(["ok"])]);
    // Scripts allowed: the prompt tells how to run them (and lists their paths).
    let out = chat(&home, &server)
        .args(["--allow-scripts", "-v", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let system = messages(&server, 0)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.len() <= TARGET_PROMPT_BYTES,
        "system prompt is {} bytes",
        system.len()
    );
    for i in 0..30 {
        assert!(
            system.contains(&format!("- skill-number-{i:02}: Handles a family")),
            "{system}"
        );
    }
    assert!(
        system.contains("skill-number-00/scripts/"),
        "script paths are still listed: {system}"
    );
}

#[test]
fn skill_capture_loads_a_body_without_allow_scripts_and_is_audited() {
    let home = TestHome::new();
    install_thirty(&home);
    let server = Server::start([
        Reply::text(["Loading. !{skill big}"]),
        Reply::text(["Reading. !{skill big references/extra.md}"]),
        Reply::text(["Trying. !{skill big ../kind-01/SKILL.md}"]),
        Reply::text(["Done."]),
    ]);
    let out = chat(&home, &server).arg("use big").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Loading. Reading. Trying. Done.\n");

    let body = messages(&server, 1).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(body.starts_with("Output:\n"), "{body}");
    assert!(body.contains("START-OF-BIG-BODY"), "{body}");
    // Longer than a capture: its first page, which names the next (nothing cut from a middle).
    assert!(
        body.contains("[page 1 of ") && body.contains("!{skill big SKILL.md 2} reads the next]"),
        "{body}"
    );
    assert!(!body.contains("bytes left out"), "{body}");
    assert!(body.len() < 20 * 1024, "{}", body.len());

    let file = messages(&server, 2).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(file.starts_with("Output: EXTRA-REFERENCE-TEXT "), "{file}");

    let outside = messages(&server, 3).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(outside.contains("Not run: "), "{outside}");
    assert!(outside.contains("outside the skill folder"), "{outside}");
    assert!(!outside.contains("Kind 1"), "{outside}");

    let audit = home.audit();
    let decisions: Vec<(&str, &str)> = audit
        .iter()
        .map(|r| (r["decision"].as_str().unwrap(), r["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        decisions,
        [
            ("ran", "capture"),
            ("ran", "capture"),
            ("invalid", "capture")
        ]
    );
    assert_eq!(audit[0]["skill"], "big");
    assert_eq!(audit[0]["argv"], serde_json::json!(["skill", "big"]));
}

#[test]
fn load_skill_tool_returns_the_body() {
    let home = TestHome::new();
    install_thirty(&home);
    let server = Server::start([
        Reply::text(Vec::<String>::new()).tool_call("c1", "load_skill", [r#"{"name":"big"}"#]),
        Reply::text(Vec::<String>::new()).tool_call("c2", "load_skill", [r#"{"name":"kind-03"}"#]),
        Reply::text(["Loaded."]),
    ]);
    let out = chat(&home, &server)
        .args(["--tools", "use big"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools = server.requests()[0]["tools"].as_array().unwrap().clone();
    assert!(
        tools.iter().any(|t| t["function"]["name"] == "load_skill"),
        "{tools:?}"
    );
    // The loaded skill's tools go with the next request; no other catalog skill's do.
    let names = |i: usize| -> Vec<String> {
        server.requests()[i]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(0), ["load_skill"]);
    assert_eq!(names(1), ["load_skill"], "big has no tools");
    let second = names(2);
    assert!(
        second.iter().any(|n| n.starts_with("kind-03")),
        "{second:?}"
    );
    assert!(
        !second.iter().any(|n| n.starts_with("kind-04")),
        "{second:?}"
    );
    let m = messages(&server, 1);
    let tool = &m[m.len() - 1];
    assert_eq!(tool["role"], "tool");
    let result: Value = serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["success"], true);
    assert!(
        result["stdout"]
            .as_str()
            .unwrap()
            .starts_with("# Big skill\n\nSTART-OF-BIG-BODY\n")
    );
}

/// The catalog tells the model to write `!{skill NAME}`: loaded that way, as with `load_skill`,
/// the skill's tools go with the following requests; a failed load adds none.
#[test]
fn a_skill_loaded_by_its_directive_offers_its_tools() {
    let home = TestHome::new();
    install_thirty(&home);
    let server = Server::start([
        Reply::text(["!{skill kind-99}"]),
        Reply::text(["!{skill kind-03}"]),
        Reply::text(["Loaded."]),
    ]);
    let out = chat(&home, &server)
        .args(["--tools", "use kind-03"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names = |i: usize| -> Vec<String> {
        server.requests()[i]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(0), ["load_skill"]);
    assert_eq!(names(1), ["load_skill"], "no such skill: nothing joins");
    let third = names(2);
    assert!(third.iter().any(|n| n.starts_with("kind-03")), "{third:?}");
    assert!(!third.iter().any(|n| n.starts_with("kind-04")), "{third:?}");
}

/// Package-style Python (`from scripts.util import …`, `python -m scripts.x`), a path shared by
/// two skills, and a script that reports where it runs.
fn package_skills(home: &TestHome) {
    let root = home.path().join("skills");
    let util = "\"\"\"Shared helpers.\"\"\"\n\ndef shout(s):\n    return s.upper()\n";
    let report = "\"\"\"Report on a file given relative to the caller.\"\"\"\nimport os\nimport sys\n\
                  from scripts.util import shout\n\n\
                  if __name__ == \"__main__\":\n    \
                  print(shout(sys.argv[1]), os.getcwd() == os.environ[\"SKILLPIPE_CALLER_DIR\"])\n    \
                  print(open(sys.argv[1]).read().strip())\n";
    let unpack = |who: &str| {
        format!(
            "\"\"\"Unpack for {who}.\"\"\"\nimport sys\nif __name__ == \"__main__\":\n    print(\"{who}\", sys.argv[1:])\n"
        )
    };
    let (unpack_a, unpack_b) = (unpack("alpha"), unpack("beta"));
    skill(
        &root,
        "alpha",
        "Alpha documents.",
        "Run python3 scripts/report.py FILE.\n",
        &[
            ("scripts/__init__.py", ""),
            ("scripts/util.py", util),
            ("scripts/report.py", report),
            ("scripts/office/unpack.py", &unpack_a),
        ],
    );
    skill(
        &root,
        "beta",
        "Beta documents.",
        "Body.\n",
        &[("scripts/office/unpack.py", &unpack_b)],
    );
    home.write("work/input.txt", "caller's file\n");
}

fn filter(home: &TestHome, input: &str, extra: &[&str]) -> std::process::Output {
    home.cmd()
        .current_dir(home.path().join("work"))
        .args(["filter", "--skills-dir"])
        .arg(home.path().join("skills"))
        .args(["--allow-scripts", "-y"])
        .args(extra)
        .write_stdin(input)
        .output()
        .unwrap()
}

#[test]
fn interpreter_in_front_of_a_skill_script_runs_that_script() {
    let home = TestHome::new();
    package_skills(&home);
    // Relative-path argument: the caller's file, with workdir = caller.
    let out = filter(
        &home,
        "[!{python3 scripts/report.py input.txt}]",
        &["--workdir", "caller"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[INPUT.TXT True\ncaller's file]");
    let audit = home.audit();
    assert_eq!(audit[0]["decision"], "ran");
    assert_eq!(audit[0]["skill"], "alpha");

    // The same as a module, from the skill root on PYTHONPATH, cwd the skill (the default):
    // the relative path then means the skill's folder, and the script can tell.
    // The relative path then means the skill's folder: the script says where it runs, and
    // fails to open the file.
    let out = filter(&home, "[!{python -m scripts.report input.txt}]", &[]);
    assert_eq!(text(&out.stdout), "[INPUT.TXT False]");
    assert!(
        text(&out.stderr).contains("failed: !{python -m scripts.report input.txt}: exit 1"),
        "{}",
        text(&out.stderr)
    );
    let caller = home.path().join("work").canonicalize().unwrap();
    let abs = caller.join("input.txt");
    // An absolute path to the user's file is out of the run's view (a model's argument grants
    // nothing); granted with --allow-read, it is read (the control).
    let directive = format!("[!{{python -m scripts.report {}}}]", abs.display());
    let out = filter(&home, &directive, &[]);
    assert!(!out.status.success() || !text(&out.stdout).contains("caller's file"));
    assert!(
        text(&out.stderr).contains("--allow-read"),
        "{}",
        text(&out.stderr)
    );
    let grant = format!("--allow-read={}", abs.display());
    let out = filter(&home, &directive, &[&grant]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.starts_with("[") && shown.contains(" False\ncaller's file]"),
        "{shown}"
    );

    // Interpreter options that take no code keep it that script (not a python call).
    let out = filter(
        &home,
        "[!{python3 -u -B scripts/report.py input.txt}]",
        &["--workdir", "caller"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[INPUT.TXT True\ncaller's file]");
    assert_eq!(home.audit().last().unwrap()["skill"], "alpha");
    // One that runs code (`-c`) leaves it a python call, which the policy does not allow.
    let out = filter(
        &home,
        "[!{python3 -c 'print(1)' scripts/report.py}]",
        &["--workdir", "caller"],
    );
    assert_eq!(text(&out.stdout), "[]");
    assert!(
        text(&out.stderr).contains("not in allowed_commands"),
        "{}",
        text(&out.stderr)
    );

    // A module run where the user works imports the skill's package, never a same-named one
    // in the user's folder (Python puts the cwd first on sys.path for `-m`).
    home.write("work/scripts/__init__.py", "");
    home.write("work/scripts/report.py", "print('HIJACK')\n");
    home.write("work/scripts/util.py", "print('HIJACK')\n");
    let out = filter(
        &home,
        "[!{python -m scripts.report input.txt}]",
        &["--workdir", "caller"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[INPUT.TXT True\ncaller's file]");
    // A plain script path: its own folder is sys.path[0], the user's folder is not searched.
    let out = filter(
        &home,
        "[!{python3 scripts/report.py input.txt}]",
        &["--workdir", "caller"],
    );
    assert_eq!(text(&out.stdout), "[INPUT.TXT True\ncaller's file]");
    // A Python before 3.11 refuses -P (whatever it prints): asked first, it runs nothing of
    // the skill, and the refusal says why.
    let old = home.write(
        "oldbin/python3",
        "#!/bin/sh\nfor a; do [ \"$a\" = -P ] && { echo 'no such flag' >&2; exit 2; }; done\n\
         echo OLD-PYTHON-RAN\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        old.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = home
        .cmd()
        .current_dir(home.path().join("work"))
        .env("PATH", &path)
        .args(["filter", "--skills-dir"])
        .arg(home.path().join("skills"))
        .args(["--allow-scripts", "-y", "--workdir", "caller"])
        .write_stdin("[!{python -m scripts.report input.txt}]")
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "[]");
    assert!(
        text(&out.stderr).contains("with workdir = caller needs Python 3.11 or later"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(home.audit().last().unwrap()["decision"], "denied");
    // Positive control: the same old Python runs a module in the skill's folder (no -P needed).
    let out = home
        .cmd()
        .current_dir(home.path().join("work"))
        .env("PATH", &path)
        .args(["filter", "--skills-dir"])
        .arg(home.path().join("skills"))
        .args(["--allow-scripts", "-y"])
        .write_stdin("[!{python -m scripts.report input.txt}]")
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        "[OLD-PYTHON-RAN]",
        "{}",
        text(&out.stderr)
    );
    // Control: a module of a Python that takes -P, exiting 2 itself, is reported as it ran.
    home.write("skills/alpha/scripts/two.py", "import sys\nsys.exit(2)\n");
    let out = filter(
        &home,
        "[!{python -m scripts.two}]",
        &["--workdir", "caller"],
    );
    let last = home.audit().last().unwrap().clone();
    assert_eq!(
        (last["decision"].as_str(), last["exit_code"].as_i64()),
        (Some("ran"), Some(2)),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(home.path().join("work/scripts")).unwrap();

    // Without --allow-scripts nothing runs, python or not.
    let out = home
        .cmd()
        .current_dir(home.path().join("work"))
        .args(["filter", "--skills-dir"])
        .arg(home.path().join("skills"))
        .write_stdin("!{python3 scripts/report.py input.txt}")
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains("scripts are not allowed"));
}

#[test]
fn ambiguous_short_path_answers_with_the_qualified_candidates() {
    let home = TestHome::new();
    package_skills(&home);
    let server = Server::start([
        Reply::text(["!{python3 scripts/office/unpack.py a.docx}"]),
        Reply::text(["!{python3 beta/scripts/office/unpack.py a.docx}"]),
        Reply::text(["done"]),
    ]);
    let out = chat(&home, &server)
        .current_dir(home.path().join("work"))
        .arg("--skills-dir")
        .arg(home.path().join("skills"))
        .args(["--allow-scripts", "-y", "unpack"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = messages(&server, 1).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        first.contains(
            "`scripts/office/unpack.py` is in several skills; write one of alpha/scripts/office/unpack.py, \
             beta/scripts/office/unpack.py"
        ),
        "{first}"
    );
    // The model is asked to correct itself, not to give up on the script.
    assert!(
        first.ends_with("Write it again with that fixed, or answer without it."),
        "{first}"
    );
    let second = messages(&server, 2).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(second.contains("beta ['a.docx']"), "{second}");
}

#[test]
fn helpers_and_package_markers_are_not_offered_as_scripts() {
    let home = TestHome::new();
    package_skills(&home);
    let out = home
        .cmd()
        .args(["skills", "show", "alpha", "--skills-dir"])
        .arg(home.path().join("skills"))
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert!(shown.contains("scripts/report.py"), "{shown}");
    assert!(shown.contains("scripts/office/unpack.py"), "{shown}");
    assert!(
        !shown.contains("__init__") && !shown.contains("util.py"),
        "{shown}"
    );
}

/// `%{write-note}` then `!{read-note}`: the capture must see the note. The writer takes a
/// moment, so a capture that does not wait for it reads nothing.
fn note_skill(home: &TestHome) -> String {
    skill(
        &home.path().join(".agents/skills"),
        "notes",
        "Notes.",
        "Body.\n",
        &[
            (
                "scripts/write-note.sh",
                "# Write a note, slowly.\nsleep 0.3\nprintf '%s' \"$2\" > \"$1\"\n",
            ),
            ("scripts/read-note.sh", "# Read the note.\ncat \"$1\"\n"),
        ],
    );
    home.path().join("note.txt").display().to_string()
}

#[test]
fn filter_capture_waits_for_earlier_side_effects() {
    let home = TestHome::new();
    let note = note_skill(&home);
    let input =
        format!("%{{scripts/write-note.sh {note} hello}}read: !{{scripts/read-note.sh {note}}}.");
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "--allow-filesystem", "-y"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "read: hello.");
}

#[test]
fn chat_capture_waits_for_earlier_side_effects() {
    let home = TestHome::new();
    let note = note_skill(&home);
    let server = Server::start([
        Reply::text([
            format!("Noting. %{{scripts/write-note.sh {note} hello}}"),
            format!(" Reading: !{{scripts/read-note.sh {note}}}"),
        ]),
        Reply::text(["Done."]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow-scripts", "--allow-filesystem", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = messages(&server, 1).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.starts_with("Output: hello "), "{result}");
}

#[test]
fn failed_capture_gives_the_model_the_stderr_tail() {
    let home = TestHome::new();
    skill(
        &home.path().join(".agents/skills"),
        "picky",
        "Fails loudly.",
        "Body.\n",
        &[(
            "scripts/check.sh",
            "# Check input.\nfor i in $(seq 1 400); do echo \"noise line $i\" >&2; done\necho 'error: expected a PDF, got input.txt' >&2\nexit 3\n",
        )],
    );
    let server = Server::start([
        Reply::text(["!{scripts/check.sh input.txt}"]),
        Reply::text(["I see."]),
    ]);
    let out = chat(&home, &server)
        .args(["--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = messages(&server, 1).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.starts_with("Failed (exit 3)."), "{result}");
    assert!(
        result.contains("Error:") && result.contains("error: expected a PDF, got input.txt"),
        "{result}"
    );
    assert!(!result.contains("noise line 1\n"), "{result}");
}

#[test]
fn codex_skills_are_found_and_skipped_skills_say_why() {
    let home = TestHome::new();
    skill(
        &home.path().join(".codex/skills"),
        "from-codex",
        "Codex skill.",
        "Body.\n",
        &[],
    );
    skill(
        &home.path().join(".codex/skills/.system"),
        "codex-shipped",
        "A skill Codex ships itself.",
        "Body.\n",
        &[],
    );
    skill(
        &home.path().join("codex-home/skills"),
        "from-codex-home",
        "Codex home skill.",
        "Body.\n",
        &[],
    );
    home.write(
        ".claude/skills/broken/SKILL.md",
        "---\nname: broken\ndescription: [unclosed\n---\nBody\n",
    );
    let out = home
        .cmd()
        .env("CODEX_HOME", home.path().join("codex-home"))
        .args(["skills", "list"])
        .output()
        .unwrap();
    let listed = text(&out.stdout);
    assert!(
        listed.contains("from-codex ")
            && listed.contains("from-codex-home")
            && listed.contains("codex-shipped"),
        "{listed}"
    );

    let out = home
        .cmd()
        .args(["skills", "show", "broken"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let why = text(&out.stderr);
    assert!(
        why.contains("skill `broken` was found but not loaded: ")
            && why.contains(".claude/skills/broken/SKILL.md:3: "),
        "{why}"
    );
    // Codex's own shipped copy of a skill the user installed yields to it quietly on every
    // run; `skills list` still says so.
    skill(
        &home.path().join(".claude/skills"),
        "creator",
        "Installed.",
        "Body.\n",
        &[],
    );
    skill(
        &home.path().join(".codex/skills/.system"),
        "creator",
        "Shipped.",
        "Body.\n",
        &[],
    );
    let out = home
        .cmd()
        .args(["filter", "--skill", "creator"])
        .write_stdin("x")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("duplicate skill"),
        "{}",
        text(&out.stderr)
    );
    let out = home.cmd().args(["skills", "list"]).output().unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("duplicate skill `creator` ignored") && all.contains(".system/creator"),
        "{all}"
    );
    // Named to be used (`--skill`, or an agent's list), the error is that reason alone: the
    // list of skills there are (a hundred, with real collections installed) buried it.
    let out = home
        .cmd()
        .args(["filter", "--skill", "broken"])
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let why = text(&out.stderr);
    assert!(
        why.starts_with("skillpipe: skill `broken` was found but not loaded: ")
            && why.contains(".claude/skills/broken/SKILL.md:3: ")
            && !why.contains("available:"),
        "{why}"
    );
}

#[test]
fn agent_by_path_finds_the_skills_beside_it_from_elsewhere() {
    let home = TestHome::new();
    skill(
        &home.path().join("proj/skills"),
        "local-one",
        "Local.",
        "LOCAL-BODY\n",
        &[],
    );
    let agent = home.write(
        "proj/agents/helper.toml",
        "skills = [\"local-one\"]\ninstructions = 'Help.'\n",
    );
    std::fs::create_dir_all(home.path().join("elsewhere")).unwrap();
    let out = home
        .cmd()
        .current_dir(home.path().join("elsewhere"))
        .args(["agents", "show"])
        .arg(&agent)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("LOCAL-BODY"));

    // An agent that names no skills sees every loaded one in the catalog, as in chat; coached,
    // its worked exchanges are shown too.
    let plain = home.write(
        "proj/agents/plain.toml",
        "instructions = 'Help.'\ncoach = 'small-model'\n",
    );
    let out = home
        .cmd()
        .current_dir(home.path().join("elsewhere"))
        .args(["agents", "show"])
        .arg(&plain)
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert!(shown.contains("- local-one: Local.\n"), "{shown}");
    // The body is not in the system prompt; the few-shot's worked load quotes its opening.
    let (prompt, few_shot) = shown
        .split_once("--- few-shot")
        .expect("a few-shot section");
    assert!(!prompt.contains("LOCAL-BODY"), "{shown}");
    assert!(
        few_shot.contains("!{skill local-one}") && few_shot.contains("Output: LOCAL-BODY"),
        "{shown}"
    );
}

#[test]
fn r9s_agent_as_r9s_writes_it() {
    let home = TestHome::new();
    skill(
        &home.path().join(".r9s/skills"),
        "notes",
        "Notes.",
        "NOTES-BODY\n",
        &[],
    );
    home.write(
        ".r9s/agents/helper/agent.toml",
        "name = \"helper\"\ncurrent_version = \"1.0.0\"\n",
    );
    home.write(
        ".r9s/agents/helper/versions/1.0.0.toml",
        "provider = \"None\"\nskills = [\"notes\", \"github:acme/skills/pdf\"]\n\
         instructions = 'Help.'\n[script_policy]\nallow_env_vars = [\"PATH\"]\n",
    );
    let server = Server::start([Reply::text(["ok"])]);
    let out = chat(&home, &server)
        .args(["--agent", "helper", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("skill `github:acme/skills/pdf` is a remote reference"),
        "{}",
        text(&out.stderr)
    );
    let system = messages(&server, 0)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("NOTES-BODY"), "{system}");
}

/// `!{skill NAME}` returns the body and then every script of the skill in the form a directive
/// writes it (the catalog lists six and "and N more"); `!{skill NAME FILE}` finds a file named
/// in another letter case when it is the only one, and never reads a hidden file.
#[test]
fn a_loaded_body_lists_every_script_and_hidden_files_stay_hidden() {
    let home = TestHome::new();
    let root = home.path().join("skills");
    let scripts: Vec<(String, String)> = (0..9)
        .map(|i| {
            (
                format!("scripts/step_{i}.sh"),
                format!("#!/bin/sh\n# Step {i} of nine.\necho {i}\n"),
            )
        })
        .collect();
    let mut files: Vec<(&str, &str)> = scripts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    files.push(("forms.md", "# Forms\n"));
    files.push((".env", "TOKEN=secret\n"));
    skill(
        &root,
        "many",
        "Nine steps.",
        "Run the steps in order.\n",
        &files,
    );
    home.write("work/.keep", "");
    // Scripts allowed (none runs here): a body read lists them.
    let read = |body: &str| {
        home.cmd()
            .current_dir(home.path().join("work"))
            .args(["filter", "--allow-scripts", "--skills-dir"])
            .arg(&root)
            .write_stdin(body)
            .output()
            .unwrap()
    };
    let out = read("!{skill many}");
    let shown = text(&out.stdout);
    assert!(shown.starts_with("Run the steps in order."), "{shown}");
    for i in 0..9 {
        assert!(
            shown.contains(&format!("| scripts/step_{i}.sh | Step {i} of nine. |")),
            "{shown}"
        );
    }
    let out = read("!{skill many FORMS.md}");
    assert_eq!(text(&out.stdout), "# Forms");
    for hidden in [".env", "./.env"] {
        let out = read(&format!("!{{skill many {hidden}}}"));
        assert_eq!(text(&out.stdout), "", "{hidden}");
        assert!(
            text(&out.stderr).contains("a hidden file"),
            "{}",
            text(&out.stderr)
        );
    }
}

/// A SKILL.md longer than a capture comes in pages that each fit, cut at line ends, each naming
/// the next: read in turn they are the whole body, and nothing is dropped from its middle.
#[test]
fn a_long_skill_is_read_in_pages() {
    let home = TestHome::new();
    let body: String = (1..=3000)
        .map(|i| format!("line {i} of the body\n"))
        .collect();
    skill(
        &home.path().join("config/skillpipe/skills"),
        "big",
        "A long skill.",
        &body,
        &[],
    );
    let read = |directive: &str| {
        let out = home
            .cmd()
            .args(["filter"])
            .write_stdin(directive)
            .output()
            .unwrap();
        (text(&out.stdout), text(&out.stderr))
    };
    let (first, _) = read("!{skill big}");
    assert!(first.len() <= 16 * 1024, "{}", first.len());
    let count: usize = first
        .split("[page 1 of ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no page note: {}", &first[first.len() - 200..]));
    assert!(
        first.contains("!{skill big SKILL.md 2} reads the next]"),
        "{first}"
    );
    let mut all = first.split("\n[page 1 of").next().unwrap().to_string();
    for n in 2..=count {
        let (part, err) = read(&format!("!{{skill big SKILL.md {n}}}"));
        assert!(err.is_empty() || !err.contains("invalid"), "{err}");
        all.push_str(part.split("\n[page ").next().unwrap());
    }
    assert!(all.contains("line 1 of the body\n") && all.contains("line 3000 of the body"));
    assert!(!all.contains("bytes left out"), "nothing dropped");
    assert_eq!(all.matches(" of the body").count(), 3000, "each line once");
    let (_, err) = read(&format!("!{{skill big SKILL.md {}}}", count + 1));
    assert!(err.contains(&format!("the file has {count}")), "{err}");
}

/// A saved conversation in which the model loaded a skill with `load_skill` offers that
/// skill's tools again when resumed, as the live conversation did.
#[test]
fn a_resumed_conversation_keeps_the_tools_of_skills_it_loaded() {
    let home = TestHome::new();
    install_thirty(&home);
    let session = serde_json::json!({
        "skillpipe_session": 1,
        "saved_at": "2026-01-01T00:00:00.000Z",
        "model": "openai:test-model",
        "agent": null,
        "history": [
            {"role": "user", "content": "use kind 3"},
            {"role": "assistant", "content": {"content": "", "tool_calls": [
                {"id": "c1", "name": "load_skill", "arguments": "{\"name\":\"kind-03\"}"},
                {"id": "c2", "name": "load_skill", "arguments": "{\"name\":\"kind-04\"}"}
            ]}},
            {"role": "tool", "content": {"call_id": "c1", "content": "{\"success\":true}"}},
            {"role": "tool", "content": {"call_id": "c2", "content": "{\"success\":false}", "is_error": true}},
            {"role": "assistant", "content": {"content": "Loaded."}}
        ],
        "transcript": [
            {"role": "user", "text": "use kind 3"},
            {"role": "assistant", "text": "Loaded."}
        ]
    });
    home.write(
        "state/skillpipe/sessions/s1.json",
        &serde_json::to_string_pretty(&session).unwrap(),
    );
    let server = Server::start([Reply::text(["ok"])]);
    let out = chat(&home, &server)
        .args(["--tools", "--resume", "s1", "more"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names: Vec<String> = server.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("kind-03")), "{names:?}");
    // A load that failed brought no tools, and no other catalog skill's come along.
    assert!(!names.iter().any(|n| n.starts_with("kind-04")), "{names:?}");
    assert!(names.contains(&"load_skill".to_string()), "{names:?}");
}

/// `!{skill NAME FILE}` with FILE an absolute path inside that skill's folder (as a model
/// copies it from a listing) reads that file; one in another skill's folder stays refused.
#[test]
fn an_absolute_path_inside_the_skill_is_read() {
    let home = TestHome::new();
    let root = install_thirty(&home);
    let inside = root.join("big/references/extra.md");
    let other = root.join("kind-01/SKILL.md");
    let out = home
        .cmd()
        .arg("filter")
        .write_stdin(format!(
            "!{{skill big {}}}\n!{{skill big {}}}\n",
            inside.display(),
            other.display()
        ))
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        "EXTRA-REFERENCE-TEXT\n\n",
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("outside the skill folder"),
        "{}",
        text(&out.stderr)
    );
}
