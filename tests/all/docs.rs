//! What a newcomer reads and types: every README command that needs no network or key, run as
//! written from a copy of a fresh clone; the generated completions and manual page; grouped
//! `--help`; and the first-run behaviour (`doctor` on a fresh install, one line per skill in
//! `skills list`, the trust hint in `run --json`).
//!
//! README convention: a ```` ```sh ```` block is run by [`readme_commands_work_from_a_fresh_clone`]
//! (offline, no key); a ```` ```bash ```` block needs a network, a model, a key or another tool
//! and is shown only. In a `sh` block `cargo run --locked --` is the built binary and other
//! `cargo` lines (the build and the test run themselves) are left out.

use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_skillpipe");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh clone's files that the README's commands use, copied into `dir/clone`, and a home
/// of its own beside it; nothing of the developer's config, keys or skills.
struct Fresh {
    dir: tempfile::TempDir,
}

impl Fresh {
    fn new() -> Fresh {
        let dir = tempfile::tempdir().unwrap();
        let clone = dir.path().join("clone");
        std::fs::create_dir_all(&clone).unwrap();
        for part in ["skills", "agents", "examples", "README.md"] {
            let ok = Command::new("cp")
                .arg("-r")
                .arg(repo().join(part))
                .arg(&clone)
                .status()
                .unwrap();
            assert!(ok.success(), "copying {part}");
        }
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Fresh { dir }
    }

    fn clone(&self) -> PathBuf {
        self.dir.path().join("clone")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A command in the clean environment, run in the clone, detached from any terminal (a
    /// session of its own: a confirmation prompt cannot reach the developer's terminal).
    fn command(&self, program: &str) -> Command {
        let bin_dir = Path::new(BIN).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
        );
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", path)
            .env("HOME", self.home())
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .current_dir(self.clone())
            .stdin(Stdio::null());
        // SAFETY: setsid is async-signal-safe and touches no memory of this process.
        unsafe {
            c.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        c
    }

    fn skillpipe(&self, args: &[&str]) -> Output {
        self.command(BIN).args(args).output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether this machine can run the sandbox; if not, says so loudly (the README's commands that
/// run scripts are then refused, as they should be).
fn can_sandbox(fresh: &Fresh, test: &str) -> bool {
    let out = fresh.skillpipe(&["doctor"]);
    let report = text(&out.stdout);
    let yes = |label: &str| {
        report.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with(label) && l[label.len()..].trim_start().starts_with("yes")
        })
    };
    let ok = [
        "network isolation",
        "PID namespace",
        "filesystem (Landlock)",
        "private mounts",
    ]
    .iter()
    .all(|l| yes(l));
    if !ok {
        eprintln!(
            "\n!!!!! SKIPPED {test}: this machine cannot sandbox, so the commands that run scripts were NOT tested !!!!!\n{report}"
        );
    }
    ok
}

/// The README's fenced blocks whose info string is `lang`, as written.
fn blocks(readme: &str, lang: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match &mut current {
            None if line.trim_end() == format!("```{lang}") => current = Some(String::new()),
            Some(_) if line.trim_end() == "```" => found.push(current.take().unwrap()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    found
}

/// A `sh` block as the test runs it: `cargo run --locked --` is the built binary; the other
/// `cargo` lines are the build and the test run, which is this.
fn runnable(block: &str) -> String {
    block
        .lines()
        .filter(|l| !l.trim_start().starts_with("cargo ") || l.contains("cargo run --locked --"))
        .map(|l| l.replace("cargo run --locked --", "skillpipe"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn readme_commands_work_from_a_fresh_clone() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    // CI runs exactly the README's test command.
    assert!(
        blocks(&readme, "sh")
            .iter()
            .any(|b| b.lines().any(|l| l.trim() == "cargo test --locked")),
        "the README's set-up block must keep `cargo test --locked`"
    );
    assert!(readme.contains("cargo install --locked --path ."));
    let fresh = Fresh::new();
    if !can_sandbox(&fresh, "readme_commands_work_from_a_fresh_clone") {
        return;
    }
    let sh = blocks(&readme, "sh");
    assert!(sh.len() >= 4, "README's runnable blocks: {}", sh.len());
    let mut all_out = String::new();
    for block in &sh {
        all_out.push_str(&run_block(&fresh, "README.md", block));
    }
    // What the README says they show: the recorded answer with its captures filled in, a
    // skill's scripts, a result as JSON.
    for want in [
        "A year has 8760 hours",
        "scripts/lookup.py",
        "1024",
        "\"success\": true",
    ] {
        assert!(
            all_out.contains(want),
            "{want:?} missing from the README's output:\n{all_out}"
        );
    }
}

/// A `sh` block, run as written in the fresh clone with `sh -e`; its stdout.
fn run_block(fresh: &Fresh, page: &str, block: &str) -> String {
    let script = runnable(block);
    let out = fresh
        .command("sh")
        .args(["-e", "-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{page}: block failed ({:?}):\n{script}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The `sh` blocks of docs/ follow the README's convention and run the same way.
#[test]
fn docs_commands_work_from_a_fresh_clone() {
    let fresh = Fresh::new();
    if !can_sandbox(&fresh, "docs_commands_work_from_a_fresh_clone") {
        return;
    }
    let mut ran = 0;
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let page = std::fs::read_to_string(&path).unwrap();
        for block in blocks(&page, "sh") {
            run_block(&fresh, &path.display().to_string(), &block);
            ran += 1;
        }
    }
    assert!(ran >= 4, "docs/ has {ran} runnable blocks");
}

/// The README's `bash` blocks are the ones that need a model, a key, a network or another
/// tool; every other command block is run. A block with no language would be neither.
#[test]
fn readme_code_blocks_say_whether_they_run() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let bare = readme.lines().filter(|l| l.trim_end() == "```").count();
    let opened = ["sh", "bash", "text", "toml", "json"]
        .iter()
        .map(|lang| blocks(&readme, lang).len())
        .sum::<usize>();
    // Each block has one bare closing fence; a bare opening fence would add one more.
    assert_eq!(bare, opened, "every README code block names its language");
    assert!(
        readme.len() <= 12 * 1024,
        "README is {} bytes",
        readme.len()
    );
}

#[test]
fn completions_are_generated_for_each_shell() {
    let fresh = Fresh::new();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = fresh.skillpipe(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for want in ["skillpipe", "allow-scripts", "skills-dir"] {
            assert!(script.contains(want), "{shell}: {want} missing");
        }
    }
    // Control: a shell it does not know is a usage error.
    let out = fresh.skillpipe(&["completions", "cmd"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_manual_page_is_generated_from_the_flags() {
    let fresh = Fresh::new();
    let out = fresh.skillpipe(&["man"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(page.contains(".TH skillpipe 1"), "{page}");
    assert!(page.contains("filter") && page.contains("chat"), "{page}");
    let dir = fresh.dir.path().join("man1");
    let out = fresh.skillpipe(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for page in [
        "skillpipe.1",
        "skillpipe-chat.1",
        "skillpipe-filter.1",
        "skillpipe-run.1",
    ] {
        let body = std::fs::read_to_string(dir.join(page)).unwrap_or_default();
        assert!(body.contains(".TH"), "{page} not written");
    }
    let chat = std::fs::read_to_string(dir.join("skillpipe-chat.1")).unwrap();
    assert!(
        chat.contains("allow\\-scripts"),
        "chat's page lists its flags"
    );
}

#[test]
fn help_is_grouped_under_headings_with_examples() {
    let fresh = Fresh::new();
    for (command, headings) in [
        (
            "chat",
            &["Model:", "Skills:", "Policy:", "Sandbox:", "Output:"][..],
        ),
        ("filter", &["Skills:", "Policy:", "Sandbox:", "Output:"][..]),
        ("mcp", &["Skills:", "Policy:", "Sandbox:"][..]),
        ("run", &["Skills:", "Policy:", "Sandbox:", "Output:"][..]),
        ("doctor", &["Model:", "Skills:"][..]),
    ] {
        let out = fresh.skillpipe(&[command, "--help"]);
        assert!(out.status.success());
        let help = text(&out.stdout);
        let mut at = 0;
        for h in headings {
            let found = help.lines().position(|l| l == *h);
            let Some(i) = found else {
                panic!("{command} --help has no {h}\n{help}")
            };
            assert!(i >= at, "{command}: {h} out of order\n{help}");
            at = i;
        }
    }
    for command in ["chat", "filter", "run", "mcp"] {
        let help = text(&fresh.skillpipe(&[command, "--help"]).stdout);
        assert!(help.contains("\nExamples:\n"), "{command}\n{help}");
    }
    // One flag group: the policy flags are spelled alike in every command that takes them.
    let flags = |c: &str| {
        text(&fresh.skillpipe(&[c, "--help"]).stdout)
            .lines()
            .filter_map(|l| {
                l.trim_start()
                    .strip_prefix("--")
                    .or_else(|| l.trim_start().strip_prefix("-y, --"))
            })
            .map(|l| l.split([' ', '<']).next().unwrap().to_string())
            .collect::<std::collections::BTreeSet<_>>()
    };
    let filter = flags("filter");
    for c in ["chat", "mcp"] {
        let other = flags(c);
        for f in [
            "allow-scripts",
            "agent",
            "skill",
            "writable",
            "allow-read",
            "max-cpu",
        ] {
            assert!(filter.contains(f) && other.contains(f), "{c}: --{f}");
        }
    }
}

/// A fresh install: no config, no key. Everything in the set-up works offline, so doctor
/// passes and warns about the key; `--online` would need it and fails.
#[test]
fn doctor_passes_on_a_fresh_install() {
    let fresh = Fresh::new();
    let out = fresh.skillpipe(&["doctor"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("warning: no API key"), "{err}");
    // A broken config still fails it, naming file and line.
    let config = fresh.home().join(".config/skillpipe/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "modle = \"x\"\n").unwrap();
    let out = fresh.skillpipe(&["doctor"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("config.toml:1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn skills_list_is_one_line_per_skill() {
    let fresh = Fresh::new();
    let out = fresh.skillpipe(&["skills", "list", "--skills-dir", "skills"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let shipped = std::fs::read_dir(fresh.clone().join("skills"))
        .unwrap()
        .count();
    assert_eq!(listing.lines().count(), 1 + shipped, "{listing}");
    assert!(
        !listing.contains(fresh.clone().to_str().unwrap()),
        "{listing}"
    );
    let out = fresh.skillpipe(&["skills", "list", "--long", "--skills-dir", "skills"]);
    let listing = text(&out.stdout);
    assert_eq!(listing.lines().count(), 1 + shipped, "{listing}");
    let calc = listing.lines().find(|l| l.starts_with("calc ")).unwrap();
    assert!(calc.contains("/clone/skills/calc"), "{listing}");
}

/// The trust hint of the text form is in `run --json` too, typed; trusting the clone (the
/// README's way) makes the same command run.
#[test]
fn run_json_refusal_carries_the_trust_hint() {
    let fresh = Fresh::new();
    let args = [
        "run",
        "calc",
        "calc",
        "--allow-scripts",
        "-y",
        "--",
        "1 + 1",
    ];
    let text_form = fresh.skillpipe(&args);
    assert_eq!(text_form.status.code(), Some(2));
    let said = text(&text_form.stderr);
    assert!(said.contains("skillpipe trust"), "{said}");
    let mut json_args = args.to_vec();
    json_args.insert(3, "--json");
    let out = fresh.skillpipe(&json_args);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["success"], false);
    assert_eq!(v["hint_kind"], "untrusted_project", "{v}");
    let hint = v["hint"].as_str().unwrap();
    assert!(
        said.contains(hint),
        "the text form says the same: {hint}\n{said}"
    );
    // Control: trusted, the same command runs (where the machine can sandbox).
    let trusted = fresh.skillpipe(&["trust"]);
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    if !can_sandbox(
        &fresh,
        "run_json_refusal_carries_the_trust_hint (its control)",
    ) {
        return;
    }
    let out = fresh.skillpipe(&json_args);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["stdout"].as_str().unwrap().trim(), "2");
}

/// The README's and the docs' relative links lead to files that exist, and DESIGN.md stays a
/// list of rules within its budget.
#[test]
fn documentation_links_resolve_and_design_stays_short() {
    let mut pages = vec![repo().join("README.md"), repo().join("DESIGN.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')').unwrap_or(0)];
            let target = target.split('#').next().unwrap();
            if target.is_empty() || target.contains("://") {
                continue;
            }
            let resolved = page.parent().unwrap().join(target);
            assert!(
                resolved.exists(),
                "{}: link to {target} leads nowhere",
                page.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 11, "only {checked} links checked");
    let design = std::fs::read_to_string(repo().join("DESIGN.md")).unwrap();
    assert!(
        design.len() <= 35 * 1024,
        "DESIGN.md is {} bytes",
        design.len()
    );
}
