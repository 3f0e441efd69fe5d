//! Skills against real folders: discovery, detection, resolution safety, the `skills`
//! subcommands through the binary, and the shipped skills.

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;
use skillpipe::skills::{ResolveError, SkillSet, outputs_of};
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Write `files` (relative path, content) under `root/name`, with a SKILL.md made of `frontmatter`.
fn skill(root: &Path, name: &str, frontmatter: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\n{frontmatter}---\n\n# {name}\n\nUse it well.\n"),
    )
    .unwrap();
    for (rel, content) in files {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, content).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    }
    dir
}

fn basic(name: &str) -> String {
    format!("name: {name}\ndescription: The {name} skill.\n")
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn system_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into())
}

/// The first executable `name` in the directories of `path_var`.
fn find_on_path(name: &str, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path_var)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("skills")
}

/// The binary, isolated from the user's own skills.
fn skillpipe(home: &Path) -> Command {
    let mut cmd = common::spawn::skillpipe_cmd();
    cmd.current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("R9S_SKILLS_DIR")
        .env("NO_COLOR", "1");
    cmd
}

#[test]
fn detects_scripts_with_their_interpreters() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "tools",
        &basic("tools"),
        &[
            (
                "scripts/fetch.py",
                "import sys\nprint('no shebang, mode 644')\n",
            ),
            (
                "scripts/run.sh",
                "#!/bin/sh\n# Run the thing\n# quickly.\necho run\n",
            ),
            ("scripts/page.js", "// Render a page.\n\nconsole.log(1)\n"),
            (
                "scripts/tool",
                "#!/usr/bin/env python3\n\"\"\"Shebang only.\"\"\"\n",
            ),
            ("scripts/mismatch.py", "#!/bin/bash\necho hi\n"),
            ("scripts/sub/deep/nested.rb", "# Nested ruby.\n\nputs 1\n"),
            ("scripts/a/b/c/d/e/five.pl", "print 1\n"),
            ("scripts/a/b/c/d/e/f/six.py", "print(1)\n"),
            ("scripts/README.md", "# Not a script\n"),
            ("scripts/data.json", "{}\n"),
            ("scripts/notes.txt", "plain text\n"),
            ("scripts/.hidden.py", "print(1)\n"),
            ("references/other.py", "print(1)\n"),
        ],
    );
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    assert_eq!(set.warnings(), &[] as &[String]);
    let s = set.get("tools").unwrap();
    let found: Vec<(&str, &str, Option<&str>, &str)> = s
        .scripts()
        .iter()
        .map(|x| {
            (
                x.rel_path.as_str(),
                x.id.as_str(),
                x.interpreter.as_deref(),
                x.description.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            ("scripts/a/b/c/d/e/five.pl", "five", Some("perl"), ""),
            ("scripts/fetch.py", "fetch", Some("python3"), ""),
            ("scripts/mismatch.py", "mismatch", Some("python3"), ""),
            ("scripts/page.js", "page", Some("node"), "Render a page."),
            (
                "scripts/run.sh",
                "run",
                Some("bash"),
                "Run the thing quickly."
            ),
            (
                "scripts/sub/deep/nested.rb",
                "nested",
                Some("ruby"),
                "Nested ruby."
            ),
            ("scripts/tool", "tool", Some("python3"), "Shebang only."),
        ]
    );
    assert_eq!(s.scripts()[0].path, s.dir.join("scripts/a/b/c/d/e/five.pl"));
}

#[test]
fn resolves_every_form_and_builds_the_command() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "tools",
        "name: tools\ndescription: d\nmetadata:\n  version: \"2.1\"\n",
        &[
            ("scripts/fetch.py", "print('hi')\n"),
            ("scripts/sub/x.sh", "echo x\n"),
        ],
    );
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let dir = fs::canonicalize(tmp.path().join("tools")).unwrap();

    for written in ["scripts/fetch.py", "tools/scripts/fetch.py", "tools:fetch"] {
        let r = set
            .resolve(written)
            .unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(r.rel_path, "scripts/fetch.py");
        assert_eq!(r.path, dir.join("scripts/fetch.py"));
        assert_eq!(r.interpreter, "python3");
        assert_eq!(r.skill, "tools");
        assert_eq!(r.version, "2.1");
    }
    for written in ["scripts/fetch.py", "fetch.py", "fetch"] {
        assert_eq!(
            set.resolve_in("tools", written).unwrap().rel_path,
            "scripts/fetch.py"
        );
    }
    assert_eq!(
        set.resolve_in("tools", "sub/x.sh").unwrap().rel_path,
        "scripts/sub/x.sh"
    );
    assert_eq!(set.resolve("tools:x").unwrap().interpreter, "bash");
    assert!(set.is_script_ref("scripts/anything"));
    assert!(set.is_script_ref("tools:fetch"));
    assert!(!set.is_script_ref("other:fetch"));
    assert!(!set.is_script_ref("git"));

    let r = set.resolve("scripts/fetch.py").unwrap();
    let cmd = r
        .command(
            &strings(&["a b", "c"]),
            &strings(&["python3"]),
            &system_path(),
            Some(std::ffi::OsStr::new("/vendored:/more")),
        )
        .unwrap();
    assert!(cmd.program.is_absolute());
    assert!(cmd.program.ends_with("python3"), "{:?}", cmd.program);
    assert_eq!(
        cmd.args,
        vec![
            OsString::from(dir.join("scripts/fetch.py")),
            "a b".into(),
            "c".into()
        ]
    );
    assert_eq!(cmd.cwd, dir);
    let env: Vec<(String, String)> = cmd
        .env
        .iter()
        .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
        .collect();
    assert!(env.contains(&("SKILL_NAME".into(), "tools".into())));
    assert!(env.contains(&("SKILL_VERSION".into(), "2.1".into())));
    assert!(env.contains(&("SKILL_BASE_DIR".into(), dir.display().to_string())));
    assert!(
        env.iter()
            .any(|(k, v)| k == "SKILLPIPE_VERSION" && !v.is_empty())
    );
    // The skill folder first, the PYTHONPATH passed through after it.
    assert!(env.contains(&(
        "PYTHONPATH".into(),
        format!("{}:/vendored:/more", dir.display())
    )));
}

#[test]
fn unknown_scripts_and_skills_are_named() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "tools",
        &basic("tools"),
        &[("scripts/a.py", "")],
    );
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let e = set.resolve("scripts/nope.py").unwrap_err().to_string();
    assert!(e.contains("scripts/nope.py") && e.contains("tools"), "{e}");
    let e = set.resolve("ghost/scripts/a.py").unwrap_err().to_string();
    assert_eq!(e, "no loaded skill is named `ghost` (loaded: tools)");
    let e = set.resolve("tools:nope").unwrap_err().to_string();
    assert!(e.contains("scripts/a.py"), "{e}");
}

#[test]
fn traversal_and_absolute_paths_are_refused() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "tools",
        &basic("tools"),
        &[("scripts/a.py", "")],
    );
    fs::write(tmp.path().join("x.py"), "print('escaped')\n").unwrap();
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    for written in [
        "scripts/../../x.py",
        "tools/scripts/../../x.py",
        "scripts/../SKILL.md",
    ] {
        let e = set.resolve(written).unwrap_err();
        assert!(
            matches!(e, ResolveError::OutsideSkill { .. }),
            "{written}: {e}"
        );
        assert!(e.to_string().contains("outside the skill folder"), "{e}");
    }
    for written in ["/etc/passwd", "../x.py", "scripts/../../x.py"] {
        let e = set.resolve_in("tools", written).unwrap_err();
        assert!(
            matches!(e, ResolveError::OutsideSkill { .. }),
            "{written}: {e}"
        );
    }
    // An absolute path is a system command, never a skill script.
    assert!(!set.is_script_ref("/tmp/scripts/x.py"));
    assert!(matches!(
        set.resolve("/tmp/x.py"),
        Err(ResolveError::NotFound(_))
    ));
}

#[test]
fn symlinks_out_of_the_skill_are_refused_and_not_listed() {
    let tmp = TempDir::new().unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("evil.py"), "print('evil')\n").unwrap();
    let dir = skill(
        tmp.path().join("skills").as_path(),
        "tools",
        &basic("tools"),
        &[("scripts/ok.py", ""), ("lib/helper.py", "# Helper.\n")],
    );
    symlink(outside.join("evil.py"), dir.join("scripts/evil.py")).unwrap();
    symlink(&outside, dir.join("scripts/outdir")).unwrap();
    symlink(dir.join("lib"), dir.join("scripts/lib")).unwrap();
    symlink(dir.join("lib/helper.py"), dir.join("scripts/helper")).unwrap();
    let set = SkillSet::load(&[tmp.path().join("skills")]);
    let s = set.get("tools").unwrap();
    let listed: Vec<&str> = s.scripts().iter().map(|x| x.rel_path.as_str()).collect();
    assert_eq!(listed, vec!["scripts/lib/helper.py", "scripts/ok.py"]);

    let e = set.resolve("scripts/evil.py").unwrap_err();
    assert!(matches!(e, ResolveError::OutsideSkill { .. }), "{e}");
    let e = set.resolve("scripts/outdir/evil.py").unwrap_err();
    assert!(matches!(e, ResolveError::OutsideSkill { .. }), "{e}");
    // A link that stays inside is fine; its interpreter comes from the target's extension.
    let r = set.resolve("scripts/helper").unwrap();
    assert_eq!(r.path, s.dir.join("lib/helper.py"));
    assert_eq!(r.interpreter, "python3");
}

#[test]
fn setuid_and_setgid_files_are_refused() {
    let tmp = TempDir::new().unwrap();
    let dir = skill(
        tmp.path(),
        "tools",
        &basic("tools"),
        &[
            ("scripts/suid.sh", "echo x\n"),
            ("scripts/sgid.sh", "echo x\n"),
        ],
    );
    fs::set_permissions(
        dir.join("scripts/suid.sh"),
        fs::Permissions::from_mode(0o4755),
    )
    .unwrap();
    fs::set_permissions(
        dir.join("scripts/sgid.sh"),
        fs::Permissions::from_mode(0o2755),
    )
    .unwrap();
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    for (written, path) in [
        ("scripts/suid.sh", "scripts/suid.sh"),
        ("scripts/sgid.sh", "scripts/sgid.sh"),
    ] {
        let mode = fs::metadata(dir.join(path)).unwrap().permissions().mode();
        if mode & 0o6000 == 0 {
            continue; // the file system dropped the bit; nothing to refuse
        }
        let e = set.resolve(written).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("`{written}` is setuid/setgid; refusing to run it")
        );
    }
    // The bit set after resolution is caught when the command is built.
    let plain = dir.join("scripts/late.sh");
    fs::write(&plain, "echo late\n").unwrap();
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let r = set.resolve("scripts/late.sh").unwrap();
    fs::set_permissions(&plain, fs::Permissions::from_mode(0o4755)).unwrap();
    if fs::metadata(&plain).unwrap().permissions().mode() & 0o4000 != 0 {
        let e = r
            .command(&[], &strings(&["bash"]), &system_path(), None)
            .unwrap_err();
        assert!(matches!(e, ResolveError::SetId(_)), "{e}");
    }
}

#[test]
fn interpreters_must_be_allowed_and_present() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "tools",
        &basic("tools"),
        &[("scripts/r.rb", "puts 1\n"), ("scripts/p.py", "print(1)\n")],
    );
    let empty_bin = tmp.path().join("bin");
    fs::create_dir_all(&empty_bin).unwrap();
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let r = set.resolve("scripts/r.rb").unwrap();
    let e = r
        .command(
            &[],
            &strings(&["python3", "ruby"]),
            empty_bin.as_os_str(),
            None,
        )
        .unwrap_err();
    assert_eq!(e.to_string(), "interpreter not found: ruby");
    let e = r
        .command(&[], &strings(&["python3", "bash"]), &system_path(), None)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("interpreter `ruby` is not in allowed_interpreters (python3, bash);"),
        "{e}"
    );
    // Found only on the PATH the child gets.
    let p = set.resolve("scripts/p.py").unwrap();
    let fake = empty_bin.join("python3");
    fs::write(&fake, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let cmd = p
        .command(&[], &strings(&["python3"]), empty_bin.as_os_str(), None)
        .unwrap();
    assert_eq!(cmd.program, fake);
}

#[test]
fn allowed_tools_without_bash_refuses_scripts() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "readonly",
        "name: readonly\ndescription: d\nallowed-tools: Read Grep\n",
        &[("scripts/x.py", "")],
    );
    skill(
        tmp.path(),
        "gitty",
        "name: gitty\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(git status:*)\n",
        &[("scripts/y.py", "")],
    );
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let e = set.resolve("scripts/x.py").unwrap_err();
    assert_eq!(
        e.to_string(),
        "skill `readonly` does not allow running scripts: its allowed-tools (Read Grep) has no Bash entry"
    );
    assert!(set.resolve_in("readonly", "x").is_err());
    assert!(set.resolve("scripts/y.py").is_ok());
    assert_eq!(
        set.get("gitty").unwrap().allowed_tools,
        Some(strings(&["Read", "Bash(git status:*)"]))
    );
}

#[test]
fn same_script_in_two_skills_is_ambiguous() {
    let tmp = TempDir::new().unwrap();
    skill(
        tmp.path(),
        "alpha",
        &basic("alpha"),
        &[("scripts/x.py", "")],
    );
    skill(tmp.path(), "beta", &basic("beta"), &[("scripts/x.py", "")]);
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let e = set.resolve("scripts/x.py").unwrap_err();
    assert_eq!(
        e.to_string(),
        "`scripts/x.py` is in several skills; write one of alpha/scripts/x.py, beta/scripts/x.py"
    );
    assert_eq!(set.resolve("beta/scripts/x.py").unwrap().skill, "beta");

    skill(
        tmp.path(),
        "gamma",
        &basic("gamma"),
        &[("scripts/y.py", ""), ("scripts/y.sh", "")],
    );
    let set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let e = set.resolve("gamma:y").unwrap_err().to_string();
    assert!(e.contains("scripts/y.py, scripts/y.sh"), "{e}");
}

#[test]
fn first_skill_of_a_name_wins_and_duplicates_are_reported() {
    let first = TempDir::new().unwrap();
    let second = TempDir::new().unwrap();
    skill(
        first.path(),
        "tools",
        "name: tools\ndescription: first\n",
        &[],
    );
    skill(
        second.path(),
        "tools",
        "name: tools\ndescription: second\n",
        &[],
    );
    skill(second.path(), "other", &basic("other"), &[]);
    let dirs = vec![
        first.path().to_path_buf(),
        second.path().to_path_buf(),
        first.path().to_path_buf(), // the same folder twice is not a duplicate
    ];
    let set = SkillSet::load(&dirs);
    assert_eq!(set.get("tools").unwrap().description, "first");
    let names: Vec<&str> = set.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["tools", "other"]);
    assert_eq!(set.warnings().len(), 1, "{:?}", set.warnings());
    let w = &set.warnings()[0];
    assert!(
        w.starts_with(&format!(
            "{}:1: duplicate skill `tools`",
            second.path().join("tools/SKILL.md").display()
        )),
        "{w}"
    );
    // The library names the search path, not the binary's flag.
    assert!(
        w.contains("name its folder first in the skill search path: ") && !w.contains("--"),
        "{w}"
    );

    // A search-path entry may itself be a skill folder.
    let set = SkillSet::load(&[second.path().join("other")]);
    assert!(set.get("other").is_some());
}

/// The duplicate warning names the flag that brings the shadowed skill back, and that flag works.
#[test]
fn a_shadowed_skill_is_reached_with_the_flag_its_warning_names() {
    let tmp = TempDir::new().unwrap();
    for (col, said) in [("first col", "from first"), ("second col", "from second")] {
        skill(
            &tmp.path().join(col),
            "calc",
            "name: calc\ndescription: A calc\n",
            &[("scripts/who.sh", &format!("#!/bin/sh\necho {said}\n"))],
        );
    }
    let run = |dirs: &[&Path]| {
        let mut cmd = skillpipe(tmp.path());
        cmd.arg("run");
        for d in dirs {
            cmd.arg("--skills-dir").arg(d);
        }
        cmd.args(["--allow-scripts", "-y", "calc", "who"])
            .output()
            .unwrap()
    };
    let first = tmp.path().join("first col");
    let second = tmp.path().join("second col");
    let out = run(&[&first, &second]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from first\n");
    let err = String::from_utf8_lossy(&out.stderr);
    let flag = err
        .split("name its folder first: --skills-dir ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("no flag named: {err}"));
    let words = shell_words::split(flag).unwrap();
    assert_eq!(words.len(), 1, "{flag}");
    let named = PathBuf::from(&words[0]);
    assert_eq!(named, fs::canonicalize(second.join("calc")).unwrap());
    let out = run(&[&named, &first, &second]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from second\n");
}

/// With no skill loaded at all, an unknown skill says where skills were looked for and how to
/// add one, in every command that names a skill.
#[test]
fn with_no_skill_loaded_an_unknown_skill_says_where_to_put_one() {
    let tmp = TempDir::new().unwrap();
    let commands: [&[&str]; 4] = [
        &["skills", "show", "calc"],
        &["run", "calc", "x"],
        &["filter", "--skill", "calc"],
        &["chat", "--allow-scripts", "--skill", "calc", "-y"],
    ];
    for args in commands {
        let out = skillpipe(tmp.path())
            .args(args)
            .write_stdin("12 * 37?\n")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(
                "no skill is loaded: looked in ~/.config/skillpipe/skills, ~/.agents/skills"
            ) && err.contains("--skills-dir DIR"),
            "{args:?}: {err}"
        );
    }
    // Positive control: with a skill loaded, the list of names is the answer.
    let dir = tmp.path().join("col");
    skill(&dir, "other", &basic("other"), &[]);
    let out = skillpipe(tmp.path())
        .args(["skills", "show", "calc", "--skills-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("available: other") && !err.contains("no skill is loaded"),
        "{err}"
    );
}

/// With many skills installed, an unknown name lists a few and counts the rest, so the line
/// stays readable.
#[test]
fn an_unknown_skill_among_many_lists_a_few_names() {
    let tmp = TempDir::new().unwrap();
    let names: Vec<String> = (0..15).map(|i| format!("s{i:02}")).collect();
    for n in &names {
        skill(tmp.path(), n, &basic(n), &[]);
    }
    let mut set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let e = set.retain_named(&strings(&["zz"])).unwrap_err().to_string();
    assert!(e.starts_with("unknown skill `zz`; available: "), "{e}");
    assert!(e.ends_with(", … and 3 more"), "{e}");
    assert_eq!(e.matches(", ").count(), 12, "{e}");
}

#[test]
fn retain_named_filters_or_names_the_unknown() {
    let tmp = TempDir::new().unwrap();
    for n in ["a", "b", "c"] {
        skill(tmp.path(), n, &basic(n), &[]);
    }
    let mut set = SkillSet::load(&[tmp.path().to_path_buf()]);
    let e = set.retain_named(&strings(&["b", "zz"])).unwrap_err();
    assert_eq!(e.to_string(), "unknown skill `zz`; available: a, b, c");
    assert_eq!(set.len(), 3);
    set.retain_named(&strings(&["c", "a"])).unwrap();
    let names: Vec<&str> = set.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["a", "c"]);
}

#[test]
fn lenient_loading_warns_or_skips_with_file_and_line() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path();
    skill(
        root,
        "bad-yaml",
        "name: bad-yaml\ndescription: [oops\nx: 1\n",
        &[],
    );
    skill(root, "no-desc", "name: no-desc\n", &[]);
    skill(
        root,
        "Mixed",
        "name: mixed\ndescription: loads anyway\n",
        &[],
    );
    skill(
        root,
        "long",
        &format!("name: long\ndescription: {}\n", "d".repeat(1100)),
        &[],
    );
    skill(
        root,
        "fine",
        "name: fine\ndescription: ok\nauthor: me\n",
        &[],
    );
    let set = SkillSet::load(&[root.to_path_buf()]);
    let names: Vec<&str> = set.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["mixed", "fine", "long"]);
    let w = set.warnings().join("\n");
    let file = |n: &str| root.join(n).join("SKILL.md").display().to_string();
    assert!(
        w.contains(&format!("{}:4: invalid YAML", file("bad-yaml"))),
        "{w}"
    );
    assert!(
        w.contains(&format!("{}:1: missing `description`", file("no-desc"))),
        "{w}"
    );
    assert!(
        w.contains(&format!(
            "{}:2: name `mixed` does not match its folder name `Mixed`",
            file("Mixed")
        )),
        "{w}"
    );
    assert!(
        w.contains(&format!(
            "{}:3: `description` is 1100 characters",
            file("long")
        )),
        "{w}"
    );
    // Unknown keys are for strict validation only.
    assert!(!w.contains("author"), "{w}");
    assert_eq!(set.get("mixed").unwrap().body, "# Mixed\n\nUse it well.");
}

#[test]
fn validate_reports_every_violation_and_exits_3() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().join("s");
    skill(
        &root,
        "broken",
        "name: Broken--Name\ndescription: d\ncompatibility: \"\"\nmetadata:\n  version: 1.5\nallowed-tools: 42\nextra: x\n",
        &[],
    );
    skill(
        &root,
        "bad-yaml",
        "name: bad-yaml\ndescription: [oops\n",
        &[],
    );
    skill(&root, "good", &basic("good"), &[]);
    let out = skillpipe(tmp.path())
        .args([
            "skills",
            "validate",
            "s/broken",
            "s/bad-yaml",
            "s/good/SKILL.md",
            "s/missing",
        ])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("problems in 3 skills"))
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let broken = "s/broken/SKILL.md";
    for (line, needle) in [
        (2, "character `B`"),
        (2, "consecutive hyphens"),
        (2, "does not match its folder name `broken`"),
        (4, "`compatibility` must be 1 to 500 characters"),
        (6, "`metadata.version` must be a string"),
        (7, "`allowed-tools` must be a string or a list"),
        (8, "unknown frontmatter key `extra`"),
    ] {
        let prefix = format!("{broken}:{line}: ");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&prefix) && l.contains(needle)),
            "missing {prefix}…{needle} in:\n{out}"
        );
    }
    assert!(out.contains("s/bad-yaml/SKILL.md:3: invalid YAML"), "{out}");
    assert!(out.contains("s/missing: "), "{out}");
    assert!(!out.contains("s/good"), "{out}");

    skillpipe(tmp.path())
        .args(["skills", "validate", "s/good"])
        .assert()
        .code(0)
        .stdout("ok: 1 skill valid\n");
    // By name, on the search path: a skill that loads, and one that loading skipped.
    skillpipe(tmp.path())
        .args(["skills", "validate", "good", "--skills-dir", "s"])
        .assert()
        .code(0)
        .stdout("ok: 1 skill valid\n");
    skillpipe(tmp.path())
        .args(["skills", "validate", "bad-yaml", "--skills-dir", "s"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "bad-yaml/SKILL.md:3: invalid YAML",
        ));
    // A skill whose folder has another name is found by its name.
    skill(&root, "folder-x", &basic("other-name"), &[]);
    skillpipe(tmp.path())
        .args(["skills", "validate", "other-name", "--skills-dir", "s"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "does not match its folder name `folder-x`",
        ));
    skillpipe(tmp.path())
        .args(["skills", "validate", "nope", "--skills-dir", "s"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "nope: no such file or folder, nor a skill of that name on the search path",
        ));
}

#[test]
fn list_and_show_through_the_binary() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().join("mine");
    skill(
        &root,
        "tools",
        "name: tools\ndescription: Handy tools.\nmetadata:\n  version: \"0.3\"\n",
        &[
            ("scripts/fetch.py", "\"\"\"Fetch a URL.\"\"\"\n"),
            ("scripts/run.sh", "# Run it.\n"),
        ],
    );
    skill(&root, "Odd", "name: odd\ndescription: Odd one.\n", &[]);
    let out = skillpipe(tmp.path())
        .args(["skills", "list", "--json", "--skills-dir", "mine"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let skills = v["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2);
    let odd = &skills[0];
    assert_eq!(odd["name"], "odd");
    assert_eq!(odd["scripts"], 0);
    assert!(odd["warnings"][0].as_str().unwrap().contains("folder name"));
    let tools = &skills[1];
    assert_eq!(tools["name"], "tools");
    assert_eq!(tools["description"], "Handy tools.");
    assert_eq!(tools["scripts"], 2);
    assert_eq!(tools["version"], "0.3");
    assert_eq!(
        tools["folder"],
        fs::canonicalize(root.join("tools"))
            .unwrap()
            .display()
            .to_string()
    );
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);

    skillpipe(tmp.path())
        .args(["skills", "list", "--skills-dir", "mine"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tools").and(predicate::str::contains("Handy tools.")))
        .stderr(predicate::str::contains("warning: "));

    skillpipe(tmp.path())
        .args(["skills", "show", "tools", "--skills-dir", "mine"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("name: tools")
                .and(predicate::str::contains("metadata.version: 0.3"))
                .and(
                    predicate::str::is_match(r"scripts/fetch\.py +python3 +Fetch a URL\.").unwrap(),
                )
                .and(predicate::str::is_match(r"scripts/run\.sh +bash +Run it\.").unwrap()),
        );

    skillpipe(tmp.path())
        .args(["skills", "show", "nope", "--skills-dir", "mine"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown skill `nope`; available: odd, tools",
        ));

    // Without --skills-dir, ./skills is on the search path only in a trusted directory.
    let project = tmp.path().join("project");
    fs::create_dir(&project).unwrap();
    fs::rename(&root, project.join("skills")).unwrap();
    let in_project = || {
        let mut c = skillpipe(tmp.path());
        c.current_dir(&project);
        c
    };
    in_project()
        .args(["skills", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tools").not())
        .stderr(predicate::str::contains("skillpipe trust"));
    in_project().arg("trust").assert().success();
    in_project()
        .args(["skills", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tools"));
}

#[test]
fn shipped_skills_validate() {
    let tmp = TempDir::new().unwrap();
    let mut cmd = skillpipe(tmp.path());
    cmd.args(["skills", "validate"]);
    for name in ["say", "lookup", "calc", "notify"] {
        cmd.arg(shipped().join(name));
    }
    cmd.assert().code(0).stdout("ok: 4 skills valid\n");
    let set = SkillSet::load(&[shipped()]);
    assert_eq!(set.warnings(), &[] as &[String]);
    for (name, script, interp) in [
        ("say", "scripts/say.sh", "bash"),
        ("lookup", "scripts/lookup.py", "python3"),
        ("calc", "scripts/calc.py", "python3"),
        ("notify", "scripts/notify.sh", "bash"),
    ] {
        let r = set.resolve(script).unwrap();
        assert_eq!((r.skill.as_str(), r.interpreter.as_str()), (name, interp));
        assert!(!set.get(name).unwrap().scripts()[0].description.is_empty());
    }
}

/// Run a shipped script as skillpipe would: resolved, interpreter from PATH, only the
/// contract's environment, in the skill folder.
fn run_shipped(argv0: &str, args: &[&str], path: &OsString) -> std::process::Output {
    shipped_command(argv0, args, path).output().unwrap()
}

/// A shipped skill's script as the dispatcher would start it, with only `path` on PATH.
fn shipped_command(argv0: &str, args: &[&str], path: &OsString) -> std::process::Command {
    let set = SkillSet::load(&[shipped()]);
    let cmd = set
        .resolve(argv0)
        .unwrap()
        .command(&strings(args), &strings(&["python3", "bash"]), path, None)
        .unwrap();
    let mut c = std::process::Command::new(&cmd.program);
    c.args(&cmd.args)
        .current_dir(&cmd.cwd)
        .env_clear()
        .env("PATH", path)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null());
    c
}

#[test]
fn lookup_prints_definition_and_json() {
    let out = run_shipped("scripts/lookup.py", &["Serendipity"], &system_path());
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("serendipity: the luck of finding"),
        "{stdout}"
    );
    let o = outputs_of(stdout.as_bytes());
    assert_eq!(o["word"], "serendipity");
    assert_eq!(o["found"], true);
    assert!(o["definition"].as_str().unwrap().contains("luck"));

    let out = run_shipped("lookup:lookup", &["serendipty"], &system_path());
    let o = outputs_of(&out.stdout);
    assert_eq!(o["found"], false);
    assert_eq!(o["suggestions"][0], "serendipity");

    let dict: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
        &fs::read_to_string(shipped().join("lookup/assets/dictionary.json")).unwrap(),
    )
    .unwrap();
    assert!((90..=150).contains(&dict.len()), "{}", dict.len());
}

#[test]
fn calc_evaluates_safely() {
    for (expr, want) in [
        ("2 + 3 * 4", "14\n"),
        ("2^10", "1024\n"),
        ("(17.5 * 4) / 3", "23.3333333333333\n"),
        ("0.1 + 0.2", "0.3\n"),
        ("sqrt(16) + 7 // 2 - -1", "8\n"),
        ("12.5% of 880", "110\n"),
        ("17 % 5 + 20%of 50", "12\n"),
        ("sqrt 1521", "39\n"),
        ("sqrt 16 + 2 * log10 100", "8\n"),
    ] {
        let out = run_shipped("scripts/calc.py", &[expr], &system_path());
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{expr}");
        assert!(out.status.success());
    }
    for (expr, reason) in [
        ("__import__('os').system('echo hacked')", "not allowed"),
        ("1/0", "division by zero"),
        ("9**9**9", "too large"),
        ("2 +", "not a valid expression"),
        ("5% off 80", "not a valid expression"),
        ("hypot 3 4", "not a valid expression"),
        ("open('/etc/passwd')", "not allowed"),
    ] {
        let out = run_shipped("scripts/calc.py", &[expr], &system_path());
        assert_eq!(out.status.code(), Some(1), "{expr}");
        assert!(out.stdout.is_empty(), "{expr}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason), "{expr}: {err}");
    }
}

/// A PATH whose first entry holds fake programs that record their argv to `log`.
fn fake_path(tmp: &Path, programs: &[&str]) -> (OsString, PathBuf) {
    let bin = tmp.join("fakebin");
    fs::create_dir_all(&bin).unwrap();
    let log = tmp.join("log");
    for p in programs {
        let f = bin.join(p);
        fs::write(
            &f,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '%s|' \"$a\" >> '{}'; done\necho >> '{}'\n",
                log.display(),
                log.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // bash must still be found, but not any real speech or notification tool.
    let mut dirs = vec![bin];
    for interp in ["bash"] {
        if let Some(p) = find_on_path(interp, &system_path()) {
            let link_dir = tmp.join("interp");
            fs::create_dir_all(&link_dir).unwrap();
            let _ = symlink(&p, link_dir.join(interp));
            if !dirs.contains(&link_dir) {
                dirs.push(link_dir);
            }
        }
    }
    (std::env::join_paths(dirs).unwrap(), log)
}

#[test]
fn say_uses_an_engine_or_explains() {
    let tmp = TempDir::new().unwrap();
    let (path, log) = fake_path(tmp.path(), &["espeak-ng"]);
    let out = run_shipped("scripts/say.sh", &["ephemeral"], &path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&log).unwrap(), "ephemeral|\n");

    // Text that looks like an option is still spoken as text.
    fs::remove_file(&log).unwrap();
    run_shipped("scripts/say.sh", &["-v"], &path);
    assert_eq!(fs::read_to_string(&log).unwrap(), " -v|\n");

    let (path, _) = fake_path(&tmp.path().join("none"), &[]);
    let out = run_shipped("scripts/say.sh", &["hello"], &path);
    assert_eq!(out.status.code(), Some(69));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no speech engine found"), "{err}");
}

#[test]
fn notify_uses_notify_send_or_rings() {
    let tmp = TempDir::new().unwrap();
    let (path, log) = fake_path(tmp.path(), &["notify-send"]);
    let out = run_shipped(
        "scripts/notify.sh",
        &["Done", "All 3 tasks finished"],
        &path,
    );
    assert!(out.status.success());
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        "--|Done|All 3 tasks finished|\n"
    );

    // No service and no terminal to ring (as in skillpipe's sandbox): a failure that says so,
    // not a success nobody saw.
    let (path, _) = fake_path(&tmp.path().join("none"), &[]);
    let out = run_shipped_detached("scripts/notify.sh", &["Done", "ok"], &path);
    assert_eq!(out.status.code(), Some(69));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "notify.sh: no notification service found (tried notify-send, osascript); not shown: Done: ok"
    );
    // notify-send there but failing (no session bus): the reason names the socket to grant.
    let (path, _) = fake_path(&tmp.path().join("nobus"), &[]);
    let failing = tmp.path().join("nobus/fakebin/notify-send");
    fs::write(&failing, "#!/bin/sh\nexit 1\n").unwrap();
    fs::set_permissions(&failing, fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_shipped_detached("scripts/notify.sh", &["Done"], &path);
    assert_eq!(out.status.code(), Some(69));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-socket \"$XDG_RUNTIME_DIR/bus\""),
        "{err}"
    );
    assert!(err.trim_end().ends_with("not shown: Done"), "{err}");
}

/// [`run_shipped`] in a new session: no controlling terminal, as in the sandbox.
fn run_shipped_detached(argv0: &str, args: &[&str], path: &OsString) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = shipped_command(argv0, args, path);
    // SAFETY: setsid is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    c.output().unwrap()
}

#[test]
fn run_round_trips_json_input_and_sets_the_environment() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().join("sk");
    let dir = skill(
        &root,
        "rt",
        "name: rt\ndescription: Round trip.\nmetadata:\n  version: \"2.5\"\n",
        &[
            (
                "scripts/echo_input.py",
                "import json, os, sys\n\
                 got = json.load(sys.stdin)\n\
                 e = os.environ\n\
                 print('human readable line')\n\
                 print(json.dumps({'got': got, 'args': sys.argv[1:], 'cwd': os.getcwd(),\n\
                   'skill': e.get('SKILL_NAME'), 'version': e.get('SKILL_VERSION'),\n\
                   'base': e.get('SKILL_BASE_DIR'), 'spv': e.get('SKILLPIPE_VERSION'),\n\
                   'secret': e.get('SECRET_TOKEN'), 'lang': e.get('LANG'), 'tmp': e.get('TMPDIR'),\n\
                   'tmp_is_dir': os.path.isdir(e.get('TMPDIR', ''))}))\n",
            ),
            ("scripts/hello.sh", "echo \"bash $SKILL_NAME $1\"\n"),
        ],
    );
    let canonical = fs::canonicalize(&dir).unwrap();
    let out = skillpipe(tmp.path())
        .env("SECRET_TOKEN", "do-not-pass")
        .env("LANG", "C.UTF-8")
        .args(["run", "rt", "echo_input", "--skills-dir", "sk"])
        .args([
            "--allow-scripts",
            "-y",
            "--json",
            "--input",
            r#"{"a":[1,2]}"#,
        ])
        .args(["--", "x", "y z"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["success"], true);
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["signal"], serde_json::Value::Null);
    assert_eq!(
        r["truncated"],
        serde_json::json!({"stdout": false, "stderr": false})
    );
    assert_eq!(
        r["script_path"],
        canonical.join("scripts/echo_input.py").to_str().unwrap()
    );
    assert!(r["duration_ms"].is_u64());
    assert!(
        r["stdout"]
            .as_str()
            .unwrap()
            .starts_with("human readable line\n")
    );
    let o = &r["outputs"];
    assert_eq!(o["got"], serde_json::json!({"a": [1, 2]}));
    assert_eq!(o["args"], serde_json::json!(["x", "y z"]));
    assert_eq!(o["cwd"], canonical.to_str().unwrap());
    assert_eq!(o["skill"], "rt");
    assert_eq!(o["version"], "2.5");
    assert_eq!(o["base"], canonical.to_str().unwrap());
    assert_eq!(o["spv"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        o["secret"],
        serde_json::Value::Null,
        "not in env_passthrough"
    );
    assert_eq!(o["lang"], "C.UTF-8");
    assert_eq!(o["tmp_is_dir"], true);
    assert!(
        !Path::new(o["tmp"].as_str().unwrap()).exists(),
        "per-run TMPDIR removed afterwards"
    );

    // The other ways to name a script; without --allow-scripts nothing runs (exit 3).
    for script in ["scripts/hello.sh", "hello.sh", "hello"] {
        let out = skillpipe(tmp.path())
            .args([
                "run",
                "rt",
                script,
                "--skills-dir",
                "sk",
                "--allow-scripts",
                "-y",
            ])
            .args(["--", "arg"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "bash rt arg\n");
    }
    skillpipe(tmp.path())
        .args(["run", "rt", "hello", "--skills-dir", "sk"])
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains("scripts are not allowed"));
}

#[test]
fn a_missing_skills_dir_is_a_usage_error() {
    let tmp = TempDir::new().unwrap();
    for args in [
        &["skills", "list", "--skills-dir", "nope"][..],
        &["filter", "--skills-dir", "nope"],
        &["run", "calc", "calc", "--skills-dir", "nope"],
    ] {
        skillpipe(tmp.path())
            .args(args)
            .write_stdin("text\n")
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "--skills-dir nope: no such directory",
            ));
    }
}

/// `skillpipe … | head -1`: a stdout whose reader has gone ends the command quietly with 0, as
/// in `filter` — no "Broken pipe" error, no panic — for every command that writes to stdout.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let tmp = TempDir::new().unwrap();
    let skills = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");
    let cases: [&[&str]; 6] = [
        &["skills", "list", "--skills-dir", skills],
        &["skills", "list", "--json", "--skills-dir", skills],
        &["skills", "show", "calc", "--skills-dir", skills],
        // A model on this machine: no API key is needed, so doctor has nothing to fail on.
        &[
            "doctor",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ],
        &["trust", "--list"],
        &[
            "run",
            "calc",
            "calc",
            "--skills-dir",
            skills,
            "--allow-scripts",
            "-y",
            "--json",
            "--",
            "2+2",
        ],
    ];
    for args in cases {
        // Positive control: with a reader, the command writes something.
        let out = skillpipe(tmp.path())
            .env("XDG_STATE_HOME", tmp.path().join("state"))
            .args(args)
            .output()
            .unwrap();
        let wrote = !out.stdout.is_empty();
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = common::spawn::skillpipe()
            .current_dir(tmp.path())
            .env("HOME", tmp.path())
            .env("XDG_CONFIG_HOME", tmp.path().join(".config"))
            .env("XDG_STATE_HOME", tmp.path().join("state"))
            .env_remove("R9S_SKILLS_DIR")
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("Broken pipe") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        if wrote {
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        }
    }
}

/// A collection that groups its skills in (hidden) subfolders, `skills/.curated/NAME`: named
/// with --skills-dir at its top, it says where the skills are instead of "no skills found".
#[test]
fn a_collection_one_level_deeper_is_pointed_at() {
    let tmp = TempDir::new().unwrap();
    let top = tmp.path().join("collection");
    skill(&top.join(".curated"), "one", &basic("one"), &[]);
    skill(&top.join(".curated"), "two", &basic("two"), &[]);
    skill(&top.join("extra"), "three", &basic("three"), &[]);
    let hint = format!(
        "its skills are one level down, in .curated (2), extra (1): pass --skills-dir {} (once for each)",
        top.join(".curated").display()
    );
    let out = skillpipe(tmp.path())
        .args(["skills", "list", "--skills-dir"])
        .arg(&top)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&hint), "{err}");
    let out = skillpipe(tmp.path())
        .args(["skills", "validate"])
        .arg(&top)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(&hint), "{text}");
    // The control: the folder it names loads, with no such warning.
    let out = skillpipe(tmp.path())
        .args(["skills", "list", "--skills-dir"])
        .arg(top.join(".curated"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("one"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("one level down"));
}

/// A skill `name` with one script `scripts/FILE` in `tmp/skills`, and `tmp/work`, where the
/// user is, made empty: for the tests of where a skill script runs.
fn workdir_case(tmp: &TempDir, name: &str, file: &str, script: &str) -> PathBuf {
    skill(
        &tmp.path().join("skills"),
        name,
        &basic(name),
        &[(&format!("scripts/{file}"), script)],
    );
    let work = tmp.path().join("work");
    fs::create_dir_all(&work).unwrap();
    work
}

/// `skillpipe run SKILL SCRIPT [extra flags] -- ARGS` from `work`, with `tmp/skills` and
/// scripts allowed without asking.
fn run_from(
    tmp: &TempDir,
    work: &Path,
    target: [&str; 2],
    extra: &[&str],
    args: &[&str],
) -> std::process::Output {
    skillpipe(tmp.path())
        .current_dir(work)
        .args(["run", "--skills-dir"])
        .arg(tmp.path().join("skills"))
        .args(["--allow-scripts", "-y"])
        .args(extra)
        .args(target)
        .arg("--")
        .args(args)
        .output()
        .unwrap()
}

/// A skill script given a path relative to where the user is: it runs in its skill's folder, so
/// the failure says so and names the flag (instead of a bare "not found").
#[test]
fn a_relative_path_meant_for_the_callers_folder_gets_a_workdir_hint() {
    let tmp = TempDir::new().unwrap();
    let work = workdir_case(
        &tmp,
        "check",
        "exists.sh",
        "#!/bin/bash\ntest -e \"$1\" || { echo \"not found: $1\" >&2; exit 1; }\necho found\n",
    );
    fs::write(work.join("data.txt"), "x").unwrap();
    let run = |extra: &[&str]| run_from(&tmp, &work, ["check", "exists"], extra, &["data.txt"]);
    let out = run(&["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["advice"]["kind"], "workdir", "{doc}");
    assert_eq!(doc["advice"]["setting"], "workdir", "{doc}");
    // The hint stays beside it for one release.
    assert!(
        doc["hint"].as_str().unwrap().contains("--workdir caller"),
        "{doc}"
    );
    // The control: where the user is, it is found.
    let out = run(&["--workdir", "caller"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "found\n", "{out:?}");
}

/// A script that looks for a file of the user's project by itself (`No package.json found. Run
/// this script from your project root.`): the file its message names is where the user is, so
/// the failure gets the workdir hint too.
#[test]
fn a_project_file_named_by_a_failing_script_gets_a_workdir_hint() {
    let tmp = TempDir::new().unwrap();
    let work = workdir_case(
        &tmp,
        "bundle",
        "bundle.sh",
        "#!/bin/bash\ntest -f package.json || { echo \"Error: No package.json found. Run this script from your project root.\" >&2; exit 1; }\necho bundled\n",
    );
    let run = |extra: &[&str]| run_from(&tmp, &work, ["bundle", "bundle"], extra, &[]);
    // Not where the user is either: no story to tell.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--workdir caller"));
    fs::write(work.join("package.json"), "{}").unwrap();
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "where `package.json` does not exist (it does where you are): --workdir caller"
        ),
        "{err}"
    );
    let out = run(&["--workdir", "caller"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "bundled\n", "{out:?}");
}

/// `--repo .` (OpenAI's gh-fix-ci): `.` exists in the skill's folder too, but is not the
/// user's; when the script fails there, the hint is given for it as well.
#[test]
fn a_dot_argument_gets_the_workdir_hint_when_the_script_fails_elsewhere() {
    let tmp = TempDir::new().unwrap();
    let work = workdir_case(
        &tmp,
        "check",
        "in_repo.sh",
        "#!/bin/bash\ntest -e \"$2/.marker\" || { echo \"Error: not inside a Git repository.\" >&2; exit 1; }\necho ok\n",
    );
    fs::write(work.join(".marker"), "x").unwrap();
    let run_with =
        |extra: &[&str], args: &[&str]| run_from(&tmp, &work, ["check", "in_repo"], extra, args);
    let run = |extra: &[&str]| run_with(extra, &["--repo", "."]);
    // Written `--repo=.`, the same.
    let out = run_with(&[], &["--repo=."]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("so `.` was that folder"),
        "{out:?}"
    );
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "the script ran in its skill's folder, so `.` was that folder, not where you are: \
             --workdir caller runs skill scripts where you are"
        ),
        "{err}"
    );
    // The control: run where the user is, it succeeds, and no hint comes.
    let out = run(&["--workdir", "caller"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n", "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--workdir caller"));
}

/// The user's own agent (in `$XDG_CONFIG_HOME/skillpipe/agents`, so it may widen the policy).
fn own_agent(home: &Path, name: &str, policy: &str) {
    let dir = home.join(".config/skillpipe/agents");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join(format!("{name}.toml")),
        format!("name = \"{name}\"\ninstructions = \"x\"\n[script_policy]\n{policy}\n"),
    )
    .unwrap();
}

#[test]
fn a_python_script_gets_its_skill_folder_then_the_users_pythonpath() {
    let tmp = TempDir::new().unwrap();
    let vendor = tmp.path().join("vendor");
    fs::create_dir_all(&vendor).unwrap();
    fs::write(vendor.join("vendored_zz.py"), "WHO = 'vendor'\n").unwrap();
    skill(
        &tmp.path().join("skills"),
        "py",
        &basic("py"),
        &[
            ("helper_zz.py", "WHO = 'skill'\n"),
            (
                "scripts/both.py",
                "import os, helper_zz, vendored_zz\nprint(helper_zz.WHO, vendored_zz.WHO)\n\
                 print(os.environ['PYTHONPATH'])\n",
            ),
        ],
    );
    own_agent(
        tmp.path(),
        "passes",
        r#"env_passthrough = ["PATH", "HOME", "LANG", "TERM", "PYTHONPATH"]"#,
    );
    let run = |agent: Option<&str>| {
        let mut c = skillpipe(tmp.path());
        c.env("PYTHONPATH", &vendor)
            .args(["run", "--skills-dir"])
            .arg(tmp.path().join("skills"))
            .args(["--allow-scripts", "-y"]);
        if let Some(a) = agent {
            c.args(["--agent", a]);
        }
        c.args(["py", "both"]).output().unwrap()
    };
    let out = run(Some("passes"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let skill_dir = fs::canonicalize(tmp.path().join("skills/py")).unwrap();
    assert_eq!(
        stdout,
        format!(
            "skill vendor\n{}:{}\n",
            skill_dir.display(),
            vendor.display()
        )
    );
    // The control: not passed through, the vendored module is out of reach, and the hint
    // says why.
    let out = run(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "skillpipe: python: the module `vendored_zz` is missing; install it with \
             `pip install vendored_zz`; PYTHONPATH is set here but not passed to scripts (add it \
             to env_passthrough)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_missing_module_hint_names_the_flag_that_shows_a_hidden_user_site() {
    let tmp = TempDir::new().unwrap();
    skill(
        &tmp.path().join("skills"),
        "office",
        &basic("office"),
        &[(
            "scripts/read.py",
            "#!/usr/bin/env python3\nimport docx_absent_zz\n",
        )],
    );
    // Only a path that exists is hidden.
    fs::create_dir_all(tmp.path().join(".local/lib")).unwrap();
    own_agent(tmp.path(), "hides", r#"deny_read = ["~/.local"]"#);
    let out = skillpipe(tmp.path())
        .args(["run", "--skills-dir"])
        .arg(tmp.path().join("skills"))
        .args([
            "--allow-scripts",
            "-y",
            "--agent",
            "hides",
            "office",
            "read",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    if err.contains("sandbox not enforced") || !err.contains("is missing") {
        eprintln!("skipped: private mounts (hiding) are not enforced here: {err}");
        return;
    }
    let local = tmp.path().join(".local");
    assert!(
        err.contains(&format!(
            "the sandbox hides {} (deny_read), where `pip install --user` puts packages: \
             --allow-read {} shows it",
            local.display(),
            local.display()
        )),
        "{err}"
    );
}

#[test]
fn a_missing_python_module_gets_an_install_hint() {
    let tmp = TempDir::new().unwrap();
    skill(
        &tmp.path().join("skills"),
        "office",
        &basic("office"),
        &[
            (
                "scripts/read.py",
                "#!/usr/bin/env python3\nimport sys\nif sys.argv[1:] == ['plain']:\n    \
                 sys.exit('usage: read.py FILE')\nimport docx_absent_zz.sub\n",
            ),
            // xlsx's shape: `scripts/recalc.py` imports its own `scripts/office/`, which
            // `python -m scripts.recalc` (run from the skill root) does not put on the path.
            (
                "scripts/recalc.py",
                "import sys\nfrom office_pkg_zz.soffice import run\nrun(sys.argv)\n",
            ),
            ("scripts/office_pkg_zz/__init__.py", ""),
            (
                "scripts/office_pkg_zz/soffice.py",
                "def run(a):\n    print(a)\n",
            ),
        ],
    );
    let run = |arg: &str| {
        skillpipe(tmp.path())
            .args(["run", "--skills-dir"])
            .arg(tmp.path().join("skills"))
            .args(["--allow-scripts", "-y", "office", "read", "--", arg])
            .output()
            .unwrap()
    };
    let out = run("doc.docx");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "skillpipe: python: the module `docx_absent_zz` is missing; install it with \
             `pip install docx_absent_zz`"
        ),
        "{err}"
    );
    // The control: a plain failure gets no such line.
    let out = run("plain");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("usage: read.py FILE") && !err.contains("pip install"),
        "{err}"
    );
    // A module the skill bundles (anywhere in its folder) is not one to install.
    let out = skillpipe(tmp.path())
        .args(["filter", "--skills-dir"])
        .arg(tmp.path().join("skills"))
        .args(["--allow-scripts", "-y"])
        .write_stdin("!{python -m scripts.recalc x.xlsx}\n")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("No module named 'office_pkg_zz'") && !err.contains("pip install"),
        "{err}"
    );
}

/// A script the SKILL.md tells the model to run from another folder (skill-creator's
/// `eval-viewer/generate_review.py`) is one of the skill's scripts: listed, run the ways the
/// body writes it, and allowed by its own pattern — not by `scripts/*`. A file it does not name
/// there stays data.
#[test]
fn a_script_the_skill_names_outside_scripts_runs_under_its_own_pattern() {
    let tmp = TempDir::new().unwrap();
    let dir = skill(
        &tmp.path().join("skills"),
        "viewer",
        &basic("viewer"),
        &[
            (
                "review/show.py",
                "import sys\nprint('shown', sys.argv[1:])\n",
            ),
            ("review/other.py", "print('other ran')\n"),
        ],
    );
    fs::write(
        dir.join("SKILL.md"),
        "---\nname: viewer\ndescription: Shows results.\n---\n\nRun \
         `python <viewer-path>/review/show.py WORKSPACE` to show them.\n",
    )
    .unwrap();
    let show = skillpipe(tmp.path())
        .args(["skills", "show", "viewer", "--skills-dir"])
        .arg(tmp.path().join("skills"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("review/show.py"), "{text}");
    assert!(!text.contains("review/other.py"), "{text}");
    let filter = |allow: &str, input: &str| {
        let out = skillpipe(tmp.path())
            .args(["filter", "--skills-dir"])
            .arg(tmp.path().join("skills"))
            .args(["--allow", allow, "-y", "--sandbox", "best-effort"])
            .write_stdin(input)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // `scripts/*` does not cover it; the refusal names the pattern that does.
    let (out, err) = filter("scripts/*", "!{python review/show.py ws}\n");
    assert!(!out.contains("shown"), "{out}");
    assert!(err.contains("--allow 'viewer:review/show.py'"), "{err}");
    // Allowed by that pattern, each way a body or a model writes it.
    for written in [
        "python review/show.py ws",
        "python3 viewer/review/show.py ws",
        "viewer:review/show.py ws",
        "review/show.py ws",
    ] {
        let (out, err) = filter("viewer:review/*", &format!("!{{{written}}}\n"));
        assert!(out.contains("shown ['ws']"), "{written}: {out} {err}");
    }
    // A file the body does not name is not a script, whatever the pattern.
    let (out, err) = filter("viewer:review/*", "!{viewer:review/other.py}\n");
    assert!(!out.contains("other ran"), "{out}");
    assert!(err.contains("is not a script of skill `viewer`"), "{err}");
    // A deny covers it however it is written (the control: allowed by `*` it runs).
    let deny = |pattern: &str, written: &str| {
        let out = skillpipe(tmp.path())
            .args(["filter", "--skills-dir"])
            .arg(tmp.path().join("skills"))
            .args([
                "--allow",
                "*",
                "--deny",
                pattern,
                "-y",
                "--sandbox",
                "best-effort",
            ])
            .write_stdin(format!("!{{{written}}}\n"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains("shown")
    };
    assert!(
        deny("nothing-here", "viewer:review/show.py ws"),
        "the control"
    );
    let absolute = format!(
        "python3 {}/review/show.py ws",
        fs::canonicalize(&dir).unwrap().display()
    );
    for (pattern, written) in [
        ("viewer:*", absolute.as_str()),
        ("viewer:*", "viewer:review/show.py ws"),
        ("viewer:show", "python review/show.py ws"),
        ("viewer/review/show.py", "viewer/review/show.py ws"),
        ("viewer:review/show.py", "review/show.py ws"),
    ] {
        assert!(
            !deny(pattern, written),
            "HOLE: --deny {pattern} let {written} run"
        );
    }
    // Its stem alone does not name it (only `viewer:review/show.py` does).
    let (out, err) = filter("*", "!{viewer:show ws}\n");
    assert!(!out.contains("shown"), "{out} {err}");
}

#[test]
fn run_takes_its_skill_positionally_and_has_no_skill_flag() {
    let tmp = TempDir::new().unwrap();
    let help = skillpipe(tmp.path())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("<SKILL> <SCRIPT>"), "{help}");
    assert!(!help.contains("--skill "), "{help}");
    skillpipe(tmp.path())
        .args(["run", "--skill", "calc", "calc", "calc"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '--skill'"));
    // The commands that load many skills keep it.
    for cmd in ["filter", "chat", "mcp"] {
        let help = skillpipe(tmp.path())
            .args([cmd, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&help.stdout);
        assert!(help.contains("--skill <NAME>"), "{cmd}: {help}");
    }
}

/// The one-line count of skills with spec warnings counts the skills named: with `--skill` (or
/// an agent's list) a skill left out is not mentioned, and with none named (every installed
/// skill in the catalog, mostly not the user's own) it is `doctor`'s to say, not every run's.
#[test]
fn spec_warnings_count_only_the_skills_named() {
    let tmp = TempDir::new().unwrap();
    let sk = tmp.path().join("sk");
    // Its name does not match its folder: a spec warning.
    skill(&sk, "odd", "name: other\ndescription: Odd.\n", &[]);
    skill(&sk, "good", &basic("good"), &[]);
    let run = |extra: &[&str]| {
        let out = skillpipe(tmp.path())
            .args(["filter", "--skills-dir", "sk"])
            .args(extra)
            .write_stdin("hi\n")
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hi\n");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let named = run(&["--skill", "other"]);
    assert!(named.contains("1 skill has spec warnings"), "{named}");
    let one = run(&["--skill", "good"]);
    assert!(!one.contains("spec warnings"), "{one}");
    let all = run(&[]);
    assert!(!all.contains("spec warnings"), "{all}");
    let doctor = skillpipe(tmp.path())
        .args(["doctor", "--skills-dir", "sk"])
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        doctor.contains("2 loaded; 1 with spec warnings (`skillpipe skills list` says why)"),
        "{doctor}"
    );
}

/// The same collection in two folders of the search path (`cp -r ~/.claude/skills
/// ~/.agents/skills`): identical copies are one skill, with no warning; copies that differ are
/// one summary line on ordinary commands, each named with its folders by `skills list`.
#[test]
fn identical_copies_are_one_skill_and_real_clashes_are_summed_up() {
    let tmp = TempDir::new().unwrap();
    let home = tmp.path();
    let names = ["alpha", "beta", "gamma"];
    for root in [".claude/skills", ".agents/skills"] {
        for name in names {
            skill(
                &home.join(root),
                name,
                &basic(name),
                &[("scripts/run.sh", "echo run\n")],
            );
        }
    }
    let filter = || {
        let out = skillpipe(home)
            .arg("filter")
            .write_stdin("x")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = filter();
    assert!(
        !err.contains("duplicate") && !err.contains("ignored"),
        "{err}"
    );
    // Two copies now differ (one in a script, one in its SKILL.md).
    fs::write(
        home.join(".claude/skills/alpha/scripts/run.sh"),
        "echo other\n",
    )
    .unwrap();
    fs::write(
        home.join(".claude/skills/beta/SKILL.md"),
        "---\nname: beta\ndescription: Changed.\n---\nBody.\n",
    )
    .unwrap();
    let err = filter();
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("ignored")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0]
            .contains("2 skills are also found later in the skill search path with other contents")
            && lines[0].contains("alpha, beta")
            && !lines[0].contains("gamma"),
        "{err}"
    );
    // With the skills named, only a clash among them is said: the others are not in use.
    let named = |skill: &str| {
        let out = skillpipe(home)
            .args(["filter", "--skill", skill])
            .write_stdin("x")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = named("gamma");
    assert!(!err.contains("ignored"), "{err}");
    // `run SKILL` names its skill too.
    let out = skillpipe(home)
        .args([
            "run",
            "gamma",
            "run",
            "--allow-scripts",
            "-y",
            "--sandbox",
            "best-effort",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("ignored"), "{err}");
    let err = named("alpha");
    assert!(
        err.contains("duplicate skill `alpha` ignored") && !err.contains("beta"),
        "{err}"
    );
    let out = skillpipe(home).args(["skills", "list"]).output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["alpha", "beta"] {
        assert!(
            all.contains(&format!("duplicate skill `{name}` ignored")),
            "{all}"
        );
    }
    assert!(!all.contains("duplicate skill `gamma`"), "{all}");
}

/// `SKILL/FILE` for a skill's root script is also a path from the working directory: when the
/// user has that file there, neither is picked silently; `./SKILL/FILE` is always the user's.
#[test]
fn a_root_script_path_that_is_also_the_users_file_is_not_guessed() {
    let tmp = TempDir::new().unwrap();
    let skills = tmp.path().join("sk");
    skill(
        &skills,
        "docs",
        &basic("docs"),
        &[("build.sh", "#!/bin/sh\necho SKILL\n")],
    );
    let work = tmp.path().join("w");
    fs::create_dir_all(work.join("docs")).unwrap();
    fs::write(work.join("docs/build.sh"), "#!/bin/sh\necho MINE\n").unwrap();
    let run = |body: &str| {
        skillpipe(tmp.path())
            .current_dir(&work)
            .args(["filter", "--skills-dir"])
            .arg(&skills)
            .args([
                "--allow",
                "sh ./docs/build.sh",
                "--allow",
                "docs:build",
                "-y",
            ])
            .args(["--sandbox", "best-effort"])
            .write_stdin(body.to_string())
            .output()
            .unwrap()
    };
    let out = run("!{docs/build.sh}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is both skill `docs`'s script and a file here"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert_eq!(
        String::from_utf8_lossy(&run("!{sh ./docs/build.sh}").stdout),
        "MINE"
    );
    // The control: qualified by id, the skill's runs.
    assert_eq!(
        String::from_utf8_lossy(&run("!{docs:build.sh}").stdout),
        "SKILL"
    );
}

/// A listing is read by a person even when piped into `head` or `grep`: the controls in a skill's
/// text are shown, not obeyed, on a pipe too; `--json` (read by programs) keeps them exact, as
/// JSON escapes.
#[test]
fn listings_show_controls_on_a_pipe_too() {
    let tmp = TempDir::new().unwrap();
    let sk = tmp.path().join("sk");
    skill(
        &sk,
        "esc",
        "name: esc\ndescription: \"Sets the title \\e]2;PWNED\\a here.\"\n",
        &[],
    );
    for args in [
        &["skills", "show", "esc", "--skills-dir", "sk"][..],
        &["skills", "list", "--skills-dir", "sk"][..],
    ] {
        let out = skillpipe(tmp.path()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Positive control: the description reached the listing.
        assert!(stdout.contains("PWNED"), "{args:?}: {stdout}");
        assert!(!stdout.contains('\u{1b}'), "{args:?}: {stdout:?}");
        assert!(stdout.contains("␛]2;PWNED␇"), "{args:?}: {stdout}");
    }
    let out = skillpipe(tmp.path())
        .args(["skills", "list", "--json", "--skills-dir", "sk"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\\u001b]2;PWNED\\u0007"), "{stdout}");
}

/// Every shipped skill runs unchanged under the default policy and the sandbox's read view:
/// calc and lookup answer; say and notify end as they do on a machine without a speech engine
/// or a desktop (0, or 69 with their own message) — never on a path outside the view.
#[test]
fn every_shipped_skill_runs_under_the_default_policy() {
    let home = common::TestHome::new();
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let run = |skill: &str, script: &str, args: &[&str]| {
        let out = home
            .cmd()
            .args(["run", "--json", "--allow-scripts", "-y", "--skills-dir"])
            .arg(&skills)
            .args([skill, script, "--"])
            .args(args)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{skill}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert!(
            !v["hint"]
                .as_str()
                .unwrap_or("")
                .contains("outside the run's view"),
            "{skill}: {v}"
        );
        v
    };
    let calc = run("calc", "calc.py", &["6 * 7"]);
    assert_eq!(calc["exit_code"], 0, "{calc}");
    assert!(calc["stdout"].as_str().unwrap().contains("42"), "{calc}");
    let lookup = run("lookup", "lookup.py", &["ephemeral"]);
    assert_eq!(lookup["exit_code"], 0, "{lookup}");
    assert_eq!(lookup["outputs"]["found"], true, "{lookup}");
    for (skill, script, args) in [
        ("say", "say.sh", &["hello"][..]),
        ("notify", "notify.sh", &["Done", "all good"][..]),
    ] {
        let v = run(skill, script, args);
        let code = v["exit_code"].as_i64().unwrap();
        assert!(code == 0 || code == 69, "{skill}: {v}");
    }
}
