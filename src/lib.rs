//! skillpipe: lets a language model act through inline directives in its streamed output.
//!
//! A model writes `%{say "hello"}` to cause a side effect or `!{scripts/lookup.py "term"}` to
//! run a command and get its output back. This crate finds those directives in a stream fed in
//! arbitrary chunks, checks each against a [`ScriptPolicy`], runs it (without a shell, under a
//! sandbox) and hands back the result. The `skillpipe` binary is a thin layer on top.
//!
//! # Embedding
//!
//! - Only scanning? [`Scanner`] (or [`scan::stream::directives`] for a `futures` stream) needs
//!   no optional feature: `skillpipe = { version = "0.1", default-features = false }`.
//! - Running directives: [`Dispatcher`] (feature `runtime`). Commands run under a sandbox set up
//!   by a *launcher* process; see [`dispatch::Launcher`] for how it is found, and
//!   [`sandbox::run_if_launcher`] for a host program that wants to be its own launcher.
//! - A whole chat loop with your own model backend: implement [`Provider`] and [`Ui`], then
//!   drive a [`Session`] (feature `runtime`; the bundled HTTP clients need feature `http`).
//! - The Unix filter: [`filter::run`] (blocking) or [`filter::run_async`].

#![deny(missing_docs)]
// The crate docs above describe the whole crate; without `runtime` most of their links have no
// target.
#![cfg_attr(not(feature = "runtime"), allow(rustdoc::broken_intra_doc_links))]
// In a build without the binary, what only the binary uses is dead code (and its crate-internal
// re-exports unused).
#![cfg_attr(not(feature = "cli"), allow(dead_code, unused_imports))]

pub mod command;
#[cfg(feature = "mcp")]
pub(crate) mod mcp;
pub mod policy;

#[cfg(feature = "runtime")]
pub mod advice;
#[cfg(feature = "cli")]
pub(crate) mod render;
pub mod scan;

#[cfg(feature = "runtime")]
pub mod agents;
#[cfg(feature = "cli")]
pub(crate) mod app;
#[cfg(feature = "runtime")]
pub mod audit;
#[cfg(feature = "runtime")]
pub mod chat;
#[cfg(feature = "cli")]
pub(crate) mod cli;
#[cfg(feature = "runtime")]
pub mod coach;
#[cfg(feature = "runtime")]
pub(crate) mod config;
#[cfg(feature = "runtime")]
pub mod confirm;
#[cfg(feature = "runtime")]
pub mod dispatch;
// Only `exec::sys` may hold unsafe code (it allows it itself).
#[cfg(feature = "runtime")]
#[deny(unsafe_code)]
pub mod exec;
#[cfg(feature = "runtime")]
pub mod filter;
#[cfg(feature = "runtime")]
pub mod model;
#[cfg(feature = "runtime")]
pub(crate) mod paths;
#[cfg(feature = "runtime")]
pub mod pipeline;
#[cfg(feature = "cli")]
pub(crate) mod repl;
#[cfg(feature = "runtime")]
pub mod sandbox;
#[cfg(feature = "runtime")]
pub mod skills;
#[cfg(feature = "runtime")]
pub mod term;
#[cfg(feature = "runtime")]
pub(crate) mod toml_words;
#[cfg(feature = "runtime")]
pub(crate) mod trust;

pub use policy::{Decision, ScriptPolicy};
pub use scan::{Announced, Directive, Event, Kind, ScanOptions, Scanner};

// The runtime's main types, at the crate root.
#[cfg(feature = "runtime")]
pub use {
    audit::AuditLog,
    chat::{Busy, ChatOptions, Notice, Session, TurnReport, Ui},
    confirm::{Answer, AskError, Prompt},
    dispatch::{Dispatcher, DispatcherBuilder, Launcher, Outcome},
    model::{ChatRequest, EventStream, Message, ModelError, Provider, StreamEvent},
    pipeline::{Report, ReportKind},
    skills::SkillSet,
};

/// The `skillpipe` command line: parses `std::env::args`, runs, returns the exit code.
/// For the binary; not part of the library API.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub fn cli_main() -> i32 {
    cli::main()
}
