//! skillpipe: lets a language model act through inline directives in its streamed output.
//!
//! The crate is a library with a thin binary on top. Each module has one job:
//! - [`scan`]: finds `%{…}` / `!{…}` directives in a byte stream fed in arbitrary chunks (pure).
//! - [`command`]: turns a directive body into argv and matches command patterns (pure).
//! - [`policy`]: the ScriptPolicy as data and the allow/deny decision (pure).
//! - [`exec`]: runs one command without a shell, with caps and timeouts.
//! - [`sandbox`]: OS enforcement of the policy (namespaces, Landlock), kept apart from the decision.
//! - [`skills`]: skill discovery, script detection and safe resolution.
//! - [`agents`]: agent configs and the system prompt.
//! - [`model`]: streaming model clients (OpenAI-compatible, Anthropic, replay) and settings.
//! - [`dispatch`]: one directive from decision to result, with confirmation and audit.
//! - [`filter`]: the Unix filter pipeline.
//! - [`chat`]: the chat loop (captures go back to the model).
//! - [`repl`]: the interactive terminal.
//! - [`mcp`]: the MCP server (`skillpipe mcp`, feature `mcp`).
//! - [`cli`]: command-line definitions and subcommand entry points.
//! - [`term`]: what may reach a terminal (untrusted text made inert).
//! - [`trust`]: which working directories may bring their own agents and skills.

pub mod agents;
pub mod audit;
pub mod chat;
pub mod cli;
pub mod command;
pub mod confirm;
pub mod dispatch;
pub mod exec;
pub mod filter;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod paths;
pub mod policy;
pub mod render;
pub mod repl;
pub mod sandbox;
pub mod scan;
pub mod skills;
pub mod term;
pub mod trust;
