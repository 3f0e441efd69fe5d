//! Directive body → argv (shell-word rules, shell syntax rejected) and command patterns. Pure.
//!
//! - [`argv`]: [`parse_argv`] and [`InvalidBody`].
//! - [`pattern`]: [`Pattern`], the [`Target`] it is matched against, and [`classify`] for `argv[0]`.
//! - `glob`: the one-word glob used by patterns.
//! - [`interpreter`]: which programs run code given in their arguments, and what part of an
//!   argv names what runs.

pub mod argv;
mod glob;
pub mod interpreter;
pub mod pattern;

pub use argv::{InvalidBody, check_word, parse_argv};
pub use pattern::{
    Argv0Kind, Pattern, PatternError, Target, classify, escape_controls, quote_word,
};
