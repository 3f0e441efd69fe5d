//! The one edge that guesses: what a failed run likely ran into, read from its typed facts
//! first and a dozen keywords of its messages after (`guess`), and every sentence that names a
//! setting, written once and rendered for the library, the command line or the model
//! (`words`, `cli`). The core never imports this module; front ends plug it into the
//! dispatcher's advisor.

#[cfg(feature = "cli")]
pub(crate) mod cli;
mod guess;
mod words;

pub use guess::{Hint, explain};
pub use words::{Audience, setting};

/// The advice after a failed run in policy keys: for a library's dispatcher
/// (`DispatcherBuilder::advise`).
pub fn for_library(r: &crate::exec::RunResult) -> Option<crate::exec::Advised> {
    advised(r, Audience::Library)
}

/// The advice after a failed run, for the user in `to`'s terms and for the model.
pub(crate) fn advised(r: &crate::exec::RunResult, to: Audience) -> Option<crate::exec::Advised> {
    let h = explain(r)?;
    Some(crate::exec::Advised {
        advice: h.advice(),
        hint: h.word(to),
        for_model: h.word(Audience::Model),
    })
}

#[cfg(test)]
mod audiences {
    use crate::exec::{RunFacts, RunResult, Stopped};

    #[test]
    fn one_advice_three_renderings() {
        let r = RunResult {
            exit_code: 124,
            timed_out: true,
            facts: RunFacts {
                stopped: Some(Stopped {
                    after: std::time::Duration::from_secs(2),
                    tool: None,
                }),
                ..RunFacts::default()
            },
            ..RunResult::default()
        };
        let lib = super::for_library(&r).unwrap();
        assert_eq!(
            (lib.advice.kind, lib.advice.setting),
            ("timeout", Some("timeout_seconds"))
        );
        assert!(
            !lib.hint.contains("--") && !lib.for_model.contains("--"),
            "{lib:?}"
        );
        let cli = super::advised(&r, super::Audience::Cli).unwrap();
        assert_eq!(cli.advice, lib.advice);
        assert!(cli.hint.contains("--timeout SECS"), "{}", cli.hint);
    }
}

#[cfg(test)]
mod budget {
    /// The edge stays small: its lines, tests included, within the budget.
    #[test]
    fn the_advice_module_stays_within_its_line_budget() {
        const BUDGET: usize = 1500;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/advice");
        let mut lines = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            lines += std::fs::read_to_string(e.unwrap().path())
                .unwrap()
                .lines()
                .count();
        }
        assert!(
            lines <= BUDGET,
            "src/advice has {lines} lines, over {BUDGET}"
        );
    }
}

#[cfg(test)]
mod boundary {
    use std::path::Path;

    /// The modules that produce facts and never guess.
    const CORE: [&str; 10] = [
        "scan", "command", "policy", "pipeline", "dispatch", "exec", "sandbox", "skills", "chat",
        "model",
    ];

    /// The `crate::` paths a source names, comments left out: `crate::a::b` and each member of
    /// `use crate::{a, b::c}` as its first segment.
    fn crate_paths(source: &str) -> Vec<String> {
        let code: String = (source.lines())
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let mut out = Vec::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = code[i + "crate::".len()..].trim_start();
            let Some(group) = rest.strip_prefix('{') else {
                let seg: String = (rest.chars())
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(seg);
                continue;
            };
            let (mut depth, mut member) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => out.push(std::mem::take(&mut member)),
                    _ => member.push(c),
                }
            }
            out.push(member);
        }
        (out.iter())
            .map(|m| m.trim().split("::").next().unwrap_or("").trim().to_string())
            .collect()
    }

    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn the_core_never_imports_the_advice_edge() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        for m in CORE {
            let file = src.join(format!("{m}.rs"));
            if file.is_file() {
                files.push(file);
            }
            if src.join(m).is_dir() {
                sources(&src.join(m), &mut files);
            }
        }
        assert!(files.len() > 20, "{files:?}");
        let bad: Vec<_> = (files.iter())
            .filter(|f| {
                crate_paths(&std::fs::read_to_string(f).unwrap()).contains(&"advice".into())
            })
            .collect();
        assert!(bad.is_empty(), "core files import crate::advice: {bad:?}");
    }

    #[test]
    fn paths_are_read_from_plain_and_grouped_imports() {
        let s = "use crate::{exec, advice::cli};\n// crate::advice in a comment\nx = crate::advice::for_library;";
        assert_eq!(crate_paths(s), ["exec", "advice", "advice"]);
    }
}
