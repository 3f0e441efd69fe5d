//! `skillpipe skills list|show|validate`.

use super::{EXIT_OK, EXIT_STRICT, SkillFlags};
use crate::skills::{Skill, SkillSet, validate};
use clap::{Args, Subcommand};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    pub command: SkillsCommand,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

#[derive(Debug, Clone, Subcommand)]
pub enum SkillsCommand {
    /// List the skills found on the search path.
    List {
        /// One JSON document: every skill with its folder, scripts, tools and warnings.
        #[arg(long)]
        json: bool,
        /// Add each skill's folder to its line.
        #[arg(long, short = 'l')]
        long: bool,
    },
    /// Show one skill: frontmatter and scripts.
    Show { name: String },
    /// Check skill folders against the spec; exit 3 on any violation.
    Validate {
        /// A skill folder, its SKILL.md, a folder of skill folders, or the name of a skill on
        /// the search path (`skills list` shows them).
        #[arg(required = true, value_name = "PATH|NAME")]
        paths: Vec<PathBuf>,
    },
}

pub fn run(args: SkillsArgs) -> anyhow::Result<i32> {
    let load = || -> anyhow::Result<(SkillSet, Vec<PathBuf>)> {
        let dirs = args.skill_flags.search_path(None)?;
        let set = SkillSet::load_with(&dirs, &crate::app::load_options()?);
        Ok((set, dirs))
    };
    // Names, descriptions and metadata come from SKILL.md files, foreign text.
    let mut out = crate::term::Guarded::listing();
    match &args.command {
        SkillsCommand::List { json, long } => {
            let (set, _) = load()?;
            if *json {
                drop(out);
                list_json(&set, &mut crate::term::Guarded::stdout())?;
            } else {
                list_text(&set, *long, &mut out)?;
                for w in set.warnings() {
                    eprintln!("warning: {}", crate::term::sanitize(w));
                }
            }
            Ok(EXIT_OK)
        }
        SkillsCommand::Show { name } => {
            let (set, dirs) = load()?;
            let Some(skill) = set.get(name) else {
                let e = format!("unknown skill `{name}`; available: {}", set.names_list());
                let names = std::slice::from_ref(name);
                return Err(crate::app::not_loaded(&set, names, e, &dirs).into());
            };
            show(skill, &mut out)?;
            Ok(EXIT_OK)
        }
        SkillsCommand::Validate { paths } => {
            let mut report = validate::Report::default();
            for p in paths {
                // Not a path here but a skill's name: a loaded skill by its name (its folder may
                // be named otherwise), else a folder of that name on the search path (found
                // even when loading skipped it, which is what validating is for).
                let named = match p
                    .to_str()
                    .filter(|n| !p.exists() && crate::command::is_skill_word(n))
                {
                    Some(n) => {
                        let (set, dirs) = load()?;
                        match set.get(n) {
                            Some(skill) => Some(skill.dir.clone()),
                            None => (dirs.into_iter().map(|d| d.join(n)))
                                .find(|d| d.join("SKILL.md").is_file()),
                        }
                    }
                    None => None,
                };
                validate::validate_path(named.as_deref().unwrap_or(p), &mut report);
            }
            for problem in &report.problems {
                writeln!(out, "{problem}")?;
            }
            let n = report.skills.len();
            let skills = if n == 1 { "skill" } else { "skills" };
            if report.problems.is_empty() {
                writeln!(out, "ok: {n} {skills} valid")?;
                Ok(EXIT_OK)
            } else {
                let k = report.problems.len();
                let problems = if k == 1 { "problem" } else { "problems" };
                eprintln!("skillpipe: {k} {problems} in {n} {skills}");
                Ok(EXIT_STRICT)
            }
        }
    }
}

fn list_json(set: &SkillSet, out: &mut impl Write) -> anyhow::Result<()> {
    let items: Vec<_> = set
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "description": s.description,
                "folder": s.dir,
                "version": s.version,
                "scripts": s.scripts().len(),
                "tools": s.tools().count(),
                "allows_scripts": s.allows_scripts(),
                "warnings": s.warnings,
            })
        })
        .collect();
    let doc = json!({ "skills": items, "warnings": set.warnings() });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}

/// One line per skill: name, script count, description cut to fit; `long` adds the folder.
fn list_text(set: &SkillSet, long: bool, out: &mut impl Write) -> anyhow::Result<()> {
    if set.is_empty() {
        writeln!(
            out,
            "no skills found (add one with --skills-dir DIR, or put it in $XDG_CONFIG_HOME/skillpipe/skills)"
        )?;
        return Ok(());
    }
    // With `--long`, the folder in a column of its own.
    let folder = |s: &Skill| long.then(|| s.dir.display().to_string());
    let header = ["NAME", "SCRIPTS"]
        .into_iter()
        .chain(long.then_some("FOLDER"));
    let mut rows = vec![header.chain(["DESCRIPTION"]).map(String::from).collect()];
    rows.extend(set.iter().map(|s| {
        let description = crate::skills::excerpt(&s.description.replace('\n', " "), 60);
        let cells = [s.name.clone(), format!("{:>7}", s.scripts().len())].into_iter();
        cells.chain(folder(s)).chain([description]).collect()
    }));
    write!(out, "{}", super::columns(&rows))?;
    Ok(())
}

fn show(skill: &Skill, out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(out, "name: {}", skill.name)?;
    writeln!(out, "description: {}", skill.description)?;
    writeln!(out, "folder: {}", skill.dir.display())?;
    if let Some(l) = &skill.license {
        writeln!(out, "license: {l}")?;
    }
    if let Some(c) = &skill.compatibility {
        writeln!(out, "compatibility: {c}")?;
    }
    for (k, v) in &skill.metadata {
        writeln!(out, "metadata.{k}: {v}")?;
    }
    if let Some(tools) = &skill.allowed_tools {
        let note = if skill.allows_scripts() {
            ""
        } else {
            "  (no Bash entry: scripts will not run)"
        };
        writeln!(out, "allowed-tools: {}{note}", tools.join(" "))?;
    }
    for w in &skill.warnings {
        writeln!(out, "warning: {w}")?;
    }
    let scripts = skill.scripts();
    writeln!(out)?;
    show_tools(skill, out)?;
    if scripts.is_empty() {
        writeln!(out, "scripts: none")?;
        return Ok(());
    }
    writeln!(out, "scripts:")?;
    // As a directive names each: a script at the skill root as `SKILL:FILE`; under it, how
    // its tool takes input or why it is no tool.
    let mut rows = vec![
        ["SCRIPT", "INTERPRETER", "DESCRIPTION"]
            .map(String::from)
            .to_vec(),
    ];
    for s in scripts {
        let name = crate::skills::listed_name(&skill.name, &s.rel_path);
        let interpreter = s.interpreter.clone().unwrap_or_else(|| "?".into());
        rows.push(vec![name, interpreter, s.description.clone()]);
        match crate::skills::tools::script_tool(s) {
            Ok(Some(t)) => rows.push(vec![
                String::new(),
                format!("JSON on stdin: {}", t.flag_usage()),
            ]),
            Ok(None) => {}
            Err(e) => rows.push(vec![String::new(), format!("warning: {e}")]),
        }
    }
    for line in super::columns(&rows).lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

/// The tools under `tools/`: id, how a directive calls it, runtime, timeout, env names, and
/// whether it is disabled. Nothing when the skill has none.
fn show_tools(skill: &Skill, out: &mut impl Write) -> anyhow::Result<()> {
    if skill.all_tools.is_empty() {
        return Ok(());
    }
    writeln!(out, "tools:")?;
    for t in &skill.all_tools {
        let state = match t.disabled_by {
            None => String::new(),
            Some(by) => format!("  (disabled by `{by}` in its tool.yaml)"),
        };
        writeln!(out, "  {}: {}{state}", t.id, t.name)?;
        let input = match t.input {
            crate::skills::ToolInput::StdinJson => "JSON on stdin",
            crate::skills::ToolInput::Argv => "arguments",
        };
        let schema = if t.schema.is_some() {
            ", schema.json"
        } else {
            ""
        };
        let env: Vec<&str> = t.env.iter().map(|(k, _)| k.as_str()).collect();
        let about = crate::skills::excerpt(&t.description.replace('\n', " "), 100);
        let usage = t.flag_usage();
        let sep = if usage.is_empty() { "" } else { " " };
        let call = format!("!{{{}:{}{sep}{usage}}}", skill.name, t.id);
        let asked = "asked before each run (execution.confirm)".to_string();
        let rows = [
            ("description", (!t.description.is_empty()).then_some(about)),
            ("script", Some(t.script.clone())),
            ("runtime", t.runtime.clone()),
            ("input", Some(format!("{input}{schema}"))),
            ("usage", Some(call)),
            ("timeout", t.timeout.map(crate::term::duration::text)),
            ("confirm", t.confirm.then_some(asked)),
            ("env", (!env.is_empty()).then(|| env.join(", "))),
        ];
        for (key, value) in rows {
            if let Some(value) = value {
                writeln!(out, "    {key}: {value}")?;
            }
        }
    }
    writeln!(out)?;
    Ok(())
}
