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
pub fn for_library(r: &crate::exec::RunResult) -> Option<crate::exec::Advice> {
    Some(explain(r)?.advice(Audience::Library))
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
            (lib.kind, lib.setting),
            ("timeout", Some("timeout_seconds"))
        );
        assert!(
            !lib.hint.contains("--") && !lib.for_model.contains("--"),
            "{lib:?}"
        );
        let cli = super::explain(&r).unwrap().advice(super::Audience::Cli);
        assert_eq!(
            (cli.kind, cli.setting, cli.path),
            (lib.kind, lib.setting, lib.path)
        );
        assert_eq!(cli.for_model, lib.for_model);
        assert!(cli.hint.contains("--timeout SECS"), "{}", cli.hint);
    }
}
