//! `skillpipe agents list|show` against real folders: agent files in a temp project, an XDG config
//! dir and r9s's layout under a temp HOME; skills in temp folders passed with --skills-dir.

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A temp project (cwd), config home and HOME, so the search path sees only what a test writes.
struct World {
    _root: TempDir,
    cwd: PathBuf,
    config: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let config = root.path().join("config");
        let home = root.path().join("home");
        for d in [&cwd, &config, &home] {
            fs::create_dir_all(d).unwrap();
        }
        // The project is trusted (`skillpipe trust`), so its ./agents are on the search path;
        // `untrusted` tests take the trust away.
        let canonical = fs::canonicalize(&cwd).unwrap();
        write(
            &config.join("skillpipe/trusted-dirs"),
            &format!("{}\n", canonical.display()),
        );
        World {
            cwd,
            config,
            home,
            _root: root,
        }
    }

    /// Takes back the trust `new` gave the project.
    fn untrust(&self) {
        fs::remove_file(self.config.join("skillpipe/trusted-dirs")).unwrap();
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.cwd.join(rel);
        write(&path, text);
        path
    }

    fn cmd(&self) -> Command {
        let mut c = common::spawn::skillpipe_cmd();
        c.current_dir(&self.cwd)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("HOME", &self.home)
            .env_remove("R9S_SKILLS_DIR")
            .env_remove("NO_COLOR");
        c
    }

    fn agents(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        self.cmd().arg("agents").args(args).assert()
    }

    /// An r9s agent folder under `~/.r9s/agents/NAME`.
    fn r9s_agent(&self, name: &str, version_toml: &str) {
        let dir = self.home.join(".r9s/agents").join(name);
        write(
            &dir.join("agent.toml"),
            &format!(
                "id = \"agt_123\"\nname = \"{name}\"\ndescription = \"From r9s\"\ncurrent_version = \"1.0.1\"\ncreated_at = \"2025-01-01T00:00:00+00:00\"\nupdated_at = \"2025-01-02T00:00:00+00:00\"\n"
            ),
        );
        write(&dir.join("versions/1.0.0.toml"), "model = \"old\"\n");
        write(&dir.join("versions/1.0.1.toml"), version_toml);
    }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A skills folder with `say` (side effect) and `lookup` (capture) skills.
fn skills_dir(root: &Path) -> PathBuf {
    let dir = root.join("myskills");
    write(
        &dir.join("say/SKILL.md"),
        "---\nname: say\ndescription: Speak text aloud.\nmetadata:\n  version: \"1.0\"\n---\n# Say\n\nSpeak short phrases only.\n",
    );
    write(
        &dir.join("say/scripts/say.sh"),
        "#!/bin/sh\n# Speak TEXT aloud.\n\necho \"$1\"\n",
    );
    write(
        &dir.join("lookup/SKILL.md"),
        "---\nname: lookup\ndescription: Look up a word.\n---\nPrints a definition.\n",
    );
    write(
        &dir.join("lookup/scripts/lookup.py"),
        "\"\"\"Print the definition of WORD.\"\"\"\nprint('x')\n",
    );
    write(&dir.join("lookup/scripts/data.txt"), "not a script\n");
    dir
}

const TUTOR: &str = r#"name = "tutor"
description = "A tutor"
model = "ollama:qwen2.5:0.5b"
skills = ["say"]
instructions = "You teach {{lang}}."

[params]
temperature = 0.3
max_tokens = 128
"#;

#[test]
fn list_json_covers_every_search_dir_and_layout() {
    let w = World::new();
    w.write("agents/tutor.toml", TUTOR);
    write(
        &w.config.join("skillpipe/agents/helper.toml"),
        "description = \"From config\"\nskills = [\"lookup\"]\n",
    );
    // Same name as the user's agent: the project's copy is hidden, with a warning naming both.
    w.write("agents/helper.toml", "name = \"helper\"\n");
    w.r9s_agent("support", "model = \"gpt-5-mini\"\nstatus = \"draft\"\n");
    let out = w.agents(&["list", "--json"]).success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    // The user's own folders first, the (trusted) project's last.
    assert_eq!(names, vec!["helper", "support", "tutor"]);
    assert_eq!(v[2]["source"], "agents/tutor.toml");
    assert_eq!(v[2]["model"], "ollama:qwen2.5:0.5b");
    assert_eq!(v[2]["skills"], serde_json::json!(["say"]));
    assert_eq!(v[2]["variables"], serde_json::json!(["lang"]));
    assert_eq!(v[2]["format"], "skillpipe");
    assert_eq!(v[0]["description"], "From config");
    assert_eq!(v[1]["format"], "r9s");
    assert_eq!(v[1]["model"], "gpt-5-mini");
    assert!(
        v[1]["source"]
            .as_str()
            .unwrap()
            .ends_with(".r9s/agents/support/versions/1.0.1.toml")
    );
    let user_helper = w.config.join("skillpipe/agents/helper.toml");
    assert!(
        stderr.contains(&format!(
            "agents/helper.toml: agent `helper` is hidden by {}",
            user_helper.display()
        )),
        "{stderr}"
    );
}

#[test]
fn list_table_and_broken_file_warning() {
    let w = World::new();
    w.write("agents/tutor.toml", TUTOR);
    w.write("agents/broken.toml", "name = \"broken\"\nmodle = \"x\"\n");
    w.write("agents/notes.txt", "ignored");
    w.agents(&["list"])
        .success()
        .stdout(predicate::str::starts_with("NAME"))
        .stdout(predicate::str::contains(
            "tutor  say     agents/tutor.toml  A tutor",
        ))
        .stdout(predicate::str::contains("broken").not())
        .stderr(predicate::str::contains(
            "warning: agents/broken.toml:2: unknown key `modle`",
        ));
}

#[test]
fn list_with_no_agents_says_where_it_looked() {
    let w = World::new();
    w.agents(&["list"])
        .success()
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "no agents found (searched {}, ",
            w.config.join("skillpipe/agents").display()
        )))
        .stderr(predicate::str::contains(", agents)"));
    w.agents(&["list", "--json"]).success().stdout("[]\n");
}

#[test]
fn show_prints_config_and_exact_system_prompt() {
    let w = World::new();
    w.write(
        "agents/tutor.toml",
        &format!(
            "{TUTOR}\n[script_policy]\nallow_scripts = true\ntimeout_seconds = 5\n\
             allow_env_vars = [\"PATH\"]\n"
        ),
    );
    let skills = skills_dir(&w.cwd);
    let out = w
        .agents(&[
            "show",
            "tutor",
            "--var",
            "lang=Spanish",
            "--skills-dir",
            skills.to_str().unwrap(),
        ])
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for needle in [
        "name:          tutor\n",
        "source:        agents/tutor.toml\n",
        "model:         ollama:qwen2.5:0.5b\n",
        "skills:        say\n",
        "variables:     lang=Spanish\n",
        "params:        {\"max_tokens\":128,\"temperature\":0.3}\n",
        // A project's agent may narrow the policy, not raise it (DESIGN §5a).
        "  allow_scripts = false    # default; agents/tutor.toml (may only narrow) asked to raise it (ignored; grant with --allow-scripts)\n",
        "  timeout_seconds = 5    # agents/tutor.toml (may only narrow)\n",
        // Written as r9s spells it, the key still came from the file.
        "  env_passthrough = [\"PATH\"]    # agents/tutor.toml (may only narrow)\n",
        "  confirm = \"ask\"    # default\n",
        "tool_calls:    false\n",
        "coach:         off\n",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    let (_, prompt) = stdout.split_once(" bytes) ---\n").expect("prompt marker");
    let expected = skillpipe::agents::system_prompt(
        "You teach Spanish.",
        &[skillpipe::agents::SkillPrompt {
            name: "say".into(),
            description: "Speak text aloud.".into(),
            body: "# Say\n\nSpeak short phrases only.\n".into(),
            scripts: vec![("scripts/say.sh".into(), "Speak TEXT aloud.".into())],
            catalog_only: false,
            has_files: false,
        }],
    );
    assert_eq!(prompt, expected);
    // Fixed parts first (guide, skills), the instructions with their variable values last.
    assert!(prompt.starts_with("# Running scripts\n"));
    let skills = prompt.find("\n# Skills\n").expect("a skills section");
    assert!(prompt[skills..].contains("\n## say\nSpeak text aloud.\n"));
    assert!(prompt.contains("| scripts/say.sh | Speak TEXT aloud. |"));
    assert!(prompt.contains("`%{…}` to run it only for its effect"));
    assert!(prompt.contains("To show a directive without running it, put it in backticks"));
    assert!(prompt.ends_with("\nYou teach Spanish.\n"));
    assert!(!prompt.contains("Result of"));
    assert!(stdout.contains(&format!(
        "--- system prompt (~{} tokens, {} bytes) ---",
        prompt.len().div_ceil(4),
        prompt.len()
    )));
}

#[test]
fn skills_dir_flag_works_before_the_subcommand_too() {
    let w = World::new();
    w.write(
        "agents/reader.toml",
        "skills = [\"lookup\"]\ninstructions = 'Read.'\n",
    );
    let skills = skills_dir(&w.cwd);
    w.agents(&["--skills-dir", skills.to_str().unwrap(), "show", "reader"])
        .success()
        .stdout(predicate::str::contains(
            "| scripts/lookup.py | Print the definition of WORD. |",
        ))
        .stdout(predicate::str::contains("data.txt").not());
}

#[test]
fn show_without_skills_is_guide_and_instructions() {
    let w = World::new();
    let path = w.write("elsewhere/plain.toml", "instructions = 'Be brief.'\n");
    let out = w.agents(&["show", path.to_str().unwrap()]).success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("name:          plain\n"), "{stdout}");
    assert!(
        stdout.contains("  allow_scripts = false    # default\n"),
        "{stdout}"
    );
    let (_, prompt) = stdout.split_once(" bytes) ---\n").unwrap();
    assert_eq!(prompt, skillpipe::agents::system_prompt("Be brief.", &[]));
}

#[test]
fn instructions_table_form_with_defaults_and_vars() {
    let w = World::new();
    w.write(
        "agents/t.toml",
        "[instructions]\nvalue = '''\nTeach {{lang}} at level {{level}}.'''\nvariables = { lang = \"Spanish\", level = \"A1\" }\n",
    );
    w.agents(&["show", "t"])
        .success()
        .stdout(predicate::str::contains("Teach Spanish at level A1."));
    w.agents(&["show", "t", "--var", "level=B2", "--var", "lang=German"])
        .success()
        .stdout(predicate::str::contains("Teach German at level B2."))
        .stdout(predicate::str::contains(
            "variables:     lang=German, level=B2",
        ));
}

#[test]
fn unused_var_is_a_warning() {
    let w = World::new();
    w.write("agents/t.toml", "instructions = 'Hi.'\n");
    w.agents(&["show", "t", "--var", "mood=happy"])
        .success()
        .stderr(predicate::str::contains(
            "warning: --var mood: agent `t` has no variable `mood`",
        ));
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let w = World::new();
    w.write(
        "agents/x.toml",
        "name = \"x\"\ndescription = \"d\"\n\n# a comment\n\n\nmodle = \"gpt\"\n",
    );
    w.agents(&["show", "x"])
        .code(2)
        .stderr(predicate::str::contains(
            "skillpipe: agents/x.toml:7: unknown key `modle` (expected one of name, description, model, provider, skills, instructions, params, script_policy, tool_calls, coach)",
        ));
}

#[test]
fn bad_type_names_key_and_line() {
    let w = World::new();
    w.write("agents/x.toml", "name = \"x\"\nskills = \"say\"\n");
    w.agents(&["show", "x"])
        .code(2)
        .stderr(predicate::str::contains(
            "agents/x.toml:2: key `skills`: invalid type: string \"say\", expected an array",
        ));
    w.write(
        "agents/y.toml",
        "[params]\ntemperature = 0.1\n[script_policy]\nallow_scripts = \"yes\"\n",
    );
    w.agents(&["show", "y"]).code(2).stderr(predicate::str::contains(
        "agents/y.toml:4: key `script_policy.allow_scripts`: invalid type: string \"yes\", expected a boolean",
    ));
}

#[test]
fn bad_script_policy_key_has_line() {
    let w = World::new();
    w.write(
        "agents/x.toml",
        "name = \"x\"\n[script_policy]\nallow_scripts = true\ntimeout = 5\n",
    );
    w.agents(&["show", "x"]).code(2).stderr(predicate::str::contains(
        "agents/x.toml:4: unknown key `timeout` in [script_policy] (expected one of allow_scripts, allowed_commands,",
    ));
}

/// `agents show` shows the prompt with a variable that has no value left as written, and names
/// the flags; `chat`, which sends the prompt, still requires every value.
#[test]
fn missing_variable_is_named() {
    let w = World::new();
    w.write("agents/x.toml", "instructions = 'Teach {{lang}}.'\n");
    w.agents(&["show", "x"])
        .success()
        .stdout(predicate::str::contains("Teach {{lang}}."))
        .stderr(predicate::str::contains(
            "agents/x.toml: missing variable `lang`, left as written below; chat and the other \
             commands that send the prompt need --var lang=VALUE",
        ));
    w.write(
        "agents/y.toml",
        "[instructions]\nvalue = 'No placeholders.'\nvariables = [\"topic\"]\n",
    );
    w.agents(&["show", "y"])
        .success()
        .stderr(predicate::str::contains(
            "missing variable `topic`, left as written below; chat and the other commands that \
             send the prompt need --var topic=VALUE",
        ));
    // Several missing: all named at once, so one run can give every value.
    w.write(
        "agents/z.toml",
        "instructions = 'For {{user}} on {{project}}, {{user}} again.'\n",
    );
    w.agents(&["show", "z"])
        .success()
        .stdout(predicate::str::contains(
            "For {{user}} on {{project}}, {{user}} again.",
        ))
        .stderr(predicate::str::contains(
            "agents/z.toml: missing variables `user`, `project`, left as written below; chat and \
             the other commands that send the prompt need --var user=VALUE --var project=VALUE",
        ));
    w.agents(&["show", "z", "--var", "user=ann"])
        .success()
        .stdout(predicate::str::contains(
            "For ann on {{project}}, ann again.",
        ))
        .stderr(predicate::str::contains(
            "missing variable `project`, left as written below",
        ));
    // Given every value: no warning (positive control).
    w.agents(&["show", "z", "--var", "user=ann", "--var", "project=p"])
        .success()
        .stdout(predicate::str::contains("For ann on p, ann again."))
        .stderr(predicate::str::contains("missing variable").not());
    // Chat sends the prompt: a missing value is still an error.
    w.cmd()
        .args([
            "chat",
            "--agent",
            "z",
            "--var",
            "user=ann",
            "--print-request",
            "hi",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "agents/z.toml: missing variable `project`: pass --var project=VALUE",
        ));
}

/// `filter` and `mcp` never show the instructions to a model (and have no `--var`): an agent
/// whose instructions need a variable still lends them its policy and skills.
#[test]
fn filter_uses_an_agent_whose_variables_have_no_value() {
    let w = World::new();
    w.write("agents/x.toml", "instructions = 'Teach {{lang}}.'\n");
    w.cmd()
        .args(["filter", "--agent", "x", "--allow", "echo", "-y"])
        .args(["--sandbox", "best-effort"])
        .write_stdin("a !{echo hi} b")
        .assert()
        .success()
        .stdout("a hi b")
        .stderr(predicate::str::contains("missing variable").not());
    w.cmd()
        .args(["doctor", "--agent", "x"])
        .assert()
        .stdout(predicate::str::contains("missing variable").not())
        .stderr(predicate::str::contains("missing variable").not());
    // The control: chat shows the instructions, so there the variable is needed.
    w.cmd()
        .args([
            "chat",
            "--agent",
            "x",
            "--model",
            "replay:/nonexistent",
            "hi",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "missing variable `lang`: pass --var lang=VALUE",
        ));
}

#[test]
fn bad_var_flag_is_a_usage_error() {
    let w = World::new();
    w.write("agents/x.toml", "instructions = 'Teach {{lang}}.'\n");
    w.agents(&["show", "x", "--var", "lang"])
        .code(2)
        .stderr(predicate::str::contains(
            "--var `lang`: expected K=V, e.g. --var lang=Spanish",
        ));
}

#[test]
fn unknown_agent_lists_search_dirs() {
    let w = World::new();
    let out = w.agents(&["show", "nobody"]).code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("unknown agent `nobody` (searched ") && stderr.contains(", agents);"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&w.config.join("skillpipe/agents").display().to_string()),
        "{stderr}"
    );
    assert!(
        stderr.contains(&w.home.join(".r9s/agents").display().to_string()),
        "{stderr}"
    );
    w.agents(&["show", "./missing.toml"])
        .code(2)
        .stderr(predicate::str::contains(
            "./missing.toml: no such agent file or folder",
        ));
}

#[test]
fn r9s_layout_accepts_bookkeeping_keys() {
    let w = World::new();
    w.r9s_agent(
        "support",
        r#"version = "1.0.1"
content_hash = "sha256:0123456789abcdef"
parent_version = "1.0.0"
created_at = "2025-01-02T00:00:00+00:00"
created_by = "alice"
change_reason = "Improve clarity"
status = "approved"
model = "gpt-5-mini"
provider = "r9s"

[params]
temperature = 0.7

[instructions]
value = '''
You are a support agent for {{company}}.'''
variables = ["company"]

[[tools]]
type = "function"

[[files]]
path = "faq.md"
"#,
    );
    let out = w
        .agents(&["show", "support", "--var", "company=Acme Corp"])
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stdout.contains("format:        r9s\n"), "{stdout}");
    assert!(stdout.contains("description:   From r9s\n"), "{stdout}");
    assert!(stdout.contains("model:         gpt-5-mini\n"), "{stdout}");
    assert!(stdout.contains("provider:      r9s\n"), "{stdout}");
    assert!(
        stdout.contains("params:        {\"temperature\":0.7}\n"),
        "{stdout}"
    );
    assert!(stdout.contains("You are a support agent for Acme Corp."));
    assert!(
        stdout.contains("versions/1.0.1.toml"),
        "current version is used"
    );
    assert!(stderr.is_empty(), "bookkeeping keys are silent: {stderr}");
    // An explicit path to the folder works too.
    let folder = w.home.join(".r9s/agents/support");
    w.agents(&["show", folder.to_str().unwrap(), "--var", "company=X"])
        .success()
        .stdout(predicate::str::contains("support agent for X."));
}

#[test]
fn r9s_layout_with_missing_version_file() {
    let w = World::new();
    let dir = w.home.join(".r9s/agents/gone");
    write(
        &dir.join("agent.toml"),
        "name = \"gone\"\ncurrent_version = \"2.0.0\"\n",
    );
    w.agents(&["show", "gone"])
        .code(2)
        .stderr(predicate::str::contains("current_version = \"2.0.0\" but"))
        .stderr(predicate::str::contains(
            "versions/2.0.0.toml does not exist",
        ));
}

#[test]
fn own_format_rejects_r9s_bookkeeping_keys() {
    let w = World::new();
    w.write(
        "agents/x.toml",
        "name = \"x\"\ninstructions = \"Hi\"\ncontent_hash = \"sha256:1\"\n",
    );
    w.agents(&["show", "x"])
        .code(2)
        .stderr(predicate::str::contains(
            "agents/x.toml:3: unknown key `content_hash`",
        ));
}

#[test]
fn missing_skill_is_a_config_error() {
    let w = World::new();
    w.write("agents/x.toml", "skills = [\"nosuch\"]\n");
    w.agents(&["show", "x"])
        .code(2)
        .stderr(predicate::str::contains(
            "agents/x.toml: unknown skill `nosuch`; available: none",
        ));
}

/// The agents and transcripts this repository ships: every agent loads (without --var), its
/// prompt lists the scripts its transcript calls, and every transcript line is a JSON string.
#[test]
fn shipped_agents_and_transcripts() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [repo.join("agents")];
    let listing = skillpipe::agents::list_in(&dirs);
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    let names: Vec<&str> = listing.agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec!["researcher", "study-buddy", "vocab-tutor"]);
    let script_of = |skill: &str| match skill {
        "say" => "scripts/say.sh",
        "lookup" => "scripts/lookup.py",
        "calc" => "scripts/calc.py",
        "notify" => "scripts/notify.sh",
        other => panic!("unexpected skill {other}"),
    };
    let mut kinds_seen = (false, false);
    for name in names {
        let agent = skillpipe::agents::load_from(name, &[], &dirs).unwrap();
        let policy = agent
            .script_policy
            .as_ref()
            .expect("shipped agents set a policy");
        assert!(policy.allowed_commands.iter().any(|c| c == "scripts/*"));
        let scripts: Vec<&str> = agent.skills.iter().map(|s| script_of(s)).collect();
        let transcript = fs::read_to_string(repo.join(format!("agents/transcripts/{name}.jsonl")))
            .unwrap_or_else(|e| panic!("transcript for {name}: {e}"));
        let mut used = Vec::new();
        for (i, line) in transcript.lines().enumerate() {
            let answer: String = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{name}.jsonl:{}: {e}", i + 1));
            for (sigil, is_capture) in [("%{", false), ("!{", true)] {
                for part in answer.split(sigil).skip(1) {
                    let cmd = part.split_whitespace().next().unwrap();
                    assert!(scripts.contains(&cmd), "{name}: {cmd} not in {scripts:?}");
                    used.push(cmd.to_string());
                    if is_capture {
                        kinds_seen.1 = true;
                        assert!(
                            answer.trim_end().ends_with('}'),
                            "{name}.jsonl:{}: a capture ends the answer",
                            i + 1
                        );
                    } else {
                        kinds_seen.0 = true;
                    }
                }
            }
        }
        for s in &scripts {
            assert!(used.iter().any(|u| u == s), "{name} never calls {s}");
        }
    }
    assert_eq!(
        kinds_seen,
        (true, true),
        "side effects and captures both shown"
    );
}

#[test]
fn an_untrusted_projects_agents_are_not_found_and_the_error_says_why() {
    let w = World::new();
    w.write("agents/tutor.toml", TUTOR);
    w.untrust();
    let out = w.agents(&["show", "tutor"]).code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("./agents/tutor.toml is not used because this directory is not trusted"),
        "{stderr}"
    );
    assert_eq!(
        stderr
            .matches("skillpipe: ignoring ./agents here: this directory is not trusted")
            .count(),
        1,
        "{stderr}"
    );
    w.agents(&["list", "--json"]).success().stdout("[]\n");
    // Named by path it is found, and may only narrow the policy.
    let skills = skills_dir(&w.cwd);
    w.agents(&[
        "show",
        "agents/tutor.toml",
        "--var",
        "lang=x",
        "--skills-dir",
        skills.to_str().unwrap(),
    ])
    .success()
    .stdout(predicate::str::contains("# default\n"));
}

#[test]
fn show_says_the_users_own_agent_raises_the_policy() {
    let w = World::new();
    let own = w.config.join("skillpipe/agents/mine.toml");
    write(
        &own,
        "[script_policy]\nallow_scripts = true\nallow_network = true\nwritable_paths = [\"~\"]\n",
    );
    let out = w.agents(&["show", "mine"]).success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let from = format!("# {} (your config)\n", own.display());
    for key in [
        "allow_scripts = true",
        "allow_network = true",
        "writable_paths = [\"~\"]",
    ] {
        assert!(
            stdout.contains(&format!("  {key}    {from}")),
            "{key}: {stdout}"
        );
    }
    assert!(
        stdout.contains("  confirm = \"ask\"    # default\n"),
        "{stdout}"
    );
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(!stderr.contains("may only narrow"), "{stderr}");
}

/// An agent file in the user's config folder that another user could have changed (written by
/// others, or in a folder others may write without the sticky bit) is not the user's word: it
/// may only narrow the policy, and the notice says why and how to fix it. Once fixed (the
/// control) its grant holds.
#[test]
fn an_agent_file_others_could_change_is_not_the_users_word() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let dir = w.config.join("skillpipe/agents");
    let file = dir.join("open.toml");
    write(
        &file,
        "instructions = 'x'\n[script_policy]\nallow_network = true\n",
    );
    let mode = |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    let show = || {
        let out = w.cmd().args(["agents", "show", "open"]).output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // `chat --agent` says the same as `agents show`.
    let server = common::Server::start((0..2).map(|_| common::Reply::text(["ok"])));
    let chat = || {
        let args = ["chat", "--agent", "open", "--base-url", &server.url];
        let out = w.cmd().args(args).args(["--model", "m", "hi"]).output();
        String::from_utf8_lossy(&out.unwrap().stderr).into_owned()
    };
    for (path, m) in [(&file, 0o666), (&dir, 0o777)] {
        mode(path, m);
        let (out, err) = show();
        assert!(out.contains("allow_network = false"), "{out}");
        let why = format!(
            "{} could be changed by another user (make it yours and `chmod o-w` it), so it may only narrow the script policy; ignored: allow_network",
            path.display()
        );
        assert!(err.contains(&why), "{err}");
        let err = chat();
        assert!(err.contains(&why), "{err}");
        mode(path, if m == 0o666 { 0o644 } else { 0o755 });
    }
    // Sticky like /tmp: others may add files but not change this one.
    mode(&dir, 0o1777);
    let (out, err) = show();
    assert!(out.contains("allow_network = true"), "{out}{err}");
    mode(&dir, 0o755);
    let (out, err) = show();
    assert!(out.contains("allow_network = true"), "{out}{err}");
}

/// `agents show` refuses a policy value chat would refuse (checked as written, also in an
/// agent whose policy is then ignored), naming the file and the key.
#[test]
fn show_refuses_a_policy_chat_would_refuse() {
    let w = World::new();
    w.write(
        "agents/slow.toml",
        "name = \"slow\"\ninstructions = \"Wait.\"\n[script_policy]\ntimeout_seconds = 100000\n",
    );
    let out = w.cmd().args(["agents", "show", "slow"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("slow.toml") && err.contains("timeout_seconds must be between 1 and 600"),
        "{err}"
    );
    // doctor fails on it too.
    let out = w.cmd().arg("doctor").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("timeout_seconds must be between 1 and 600"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Control: in range, shown.
    w.write(
        "agents/slow.toml",
        "name = \"slow\"\ninstructions = \"Wait.\"\n[script_policy]\ntimeout_seconds = 600\n",
    );
    w.agents(&["show", "slow"]).success();
}

/// r9s writes `allow_env_vars` as a boolean too: the agent is accepted (`false`: scripts
/// inherit none of the user's variables); the list form still works; another value is refused
/// naming the key (the control: the key is still checked).
#[test]
fn r9s_allow_env_vars_boolean_is_accepted() {
    let w = World::new();
    for (value, ok) in [
        ("false", true),
        ("true", true),
        ("[\"PATH\"]", true),
        ("3", false),
    ] {
        w.r9s_agent(
            "support",
            &format!(
                "model = \"gpt-5-mini\"\n[script_policy]\nallow_scripts = true\n\
                 allow_env_vars = {value}\n"
            ),
        );
        let out = w
            .cmd()
            .args(["agents", "show", "support"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), ok, "{value}: {err}");
        if !ok {
            assert!(
                err.contains("allow_env_vars") || err.contains("env_passthrough"),
                "{err}"
            );
        }
    }
}

/// A skill written for claude.ai runs `bash /mnt/skills/user/NAME/…` (or `/mnt/skills/public/…`):
/// that is the skill's own folder here, as `<path-to-skill>` is. Control: a name that is no
/// loaded skill is not read as one (nothing runs).
#[test]
fn claude_ai_skill_paths_are_the_skills_own_folder() {
    let w = World::new();
    let skills = w.cwd.join("claude-skills");
    write(
        &skills.join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploys.\n---\nRun `bash /mnt/skills/user/deploy/scripts/go.sh`.\n",
    );
    write(
        &skills.join("deploy/scripts/go.sh"),
        "echo deployed \"$@\"\n",
    );
    for collection in ["user", "public"] {
        let out = w
            .cmd()
            .args(["filter", "--skills-dir"])
            .arg(&skills)
            .args(["--allow-scripts", "-y"])
            .write_stdin(format!(
                "!{{bash /mnt/skills/{collection}/deploy/scripts/go.sh now}}\n"
            ))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("deployed now"),
            "{collection}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = w
        .cmd()
        .args(["filter", "--skills-dir"])
        .arg(&skills)
        .args(["--allow-scripts", "-y"])
        .write_stdin("!{bash /mnt/skills/user/other/scripts/go.sh now}\n")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("deployed"));
}
