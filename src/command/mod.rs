//! Directive body → argv (shell-word rules, shell syntax rejected) and command patterns. Pure.
//!
//! - `argv`: [`parse_argv`] and [`InvalidBody`].
//! - `pattern`: command patterns, the [`Target`] they are matched against, and `script_ref`
//!   for `argv[0]`.
//! - `glob`: the one-word glob used by patterns.
//! - `interpreter`: which programs run code given in their arguments, and what part of an
//!   argv names what runs.
//! - `wrapper`: programs that start their arguments as a command, and what a command line
//!   may start through them.

mod argv;
mod glob;
pub(crate) mod interpreter;
mod pattern;
pub(crate) mod wrapper;

pub(crate) use argv::check_word;
pub use argv::{InvalidBody, parse_argv};
#[cfg(test)]
pub(crate) use pattern::test_targets;
pub(crate) use pattern::{
    Pattern, ScriptRef, cut_chars, escape_controls, is_left_out, is_placeholder, is_skill_word,
    quote_word, script_ref,
};
pub use pattern::{PatternError, Target};
