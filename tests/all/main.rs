//! The integration tests, one module per area, in one test binary: each binary links the whole
//! crate, so one binary links it once. The shared helpers are in `common`.
//! `tests/optimistic.rs` stays a binary of its own: it sets the process-wide launcher and
//! probe cache, which every sandboxed run of this binary would then see.

mod common;

mod agents;
mod chat;
mod docs;
mod eval_script;
mod exec;
mod filter;
#[cfg(target_os = "linux")]
mod hostile;
mod imports;
mod library;
#[cfg(target_os = "linux")]
mod load;
#[cfg(all(target_os = "linux", feature = "mcp"))]
mod mcp;
mod model;
#[cfg(target_os = "linux")]
mod protected;
mod repl;
#[cfg(target_os = "linux")]
mod sandbox;
mod scale;
mod scan_props;
mod skills;
mod terminal;
mod tools;
mod trust;
