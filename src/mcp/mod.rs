//! `skillpipe mcp`: an MCP server over stdio that offers the loaded skills as resources (the MCP
//! Skills extension) and their scripts as tools, every call through the same [`Dispatcher`]
//! (policy, confirmation, sandbox, caps, timeout, audit) as a directive.
//!
//! JSON-RPC and MCP are implemented here rather than with the `rmcp` SDK: its stdio transport
//! drops lines it cannot parse without a reply — among them valid requests nested deeper than
//! serde_json's limit — so a client would wait forever on them; and its `server` feature brings
//! schemars, chrono, tracing and uuid, which skillpipe does not otherwise build.
//!
//! - [`jsonrpc`]: framing, parse and error replies (pure).
//! - [`catalog`]: tools and skill resources, read once at start.
//! - [`session`]: the protocol state machine (pure), for both eras: the `initialize` session
//!   (2025 revisions) and stateless requests carrying their version in `_meta` (2026-07-28).
//! - [`page`]: `cursor`/`nextCursor` pagination of the list methods (pure).
//! - [`consent`]: `confirm = "ask"` as MCP elicitation: a request of ours (legacy era) or an
//!   `input_required` result the client answers by retrying (modern era).
//! - [`call`]: one tool call through the dispatcher, and its result.
//! - [`server`]: the stdio transport and the concurrent call loop.
//!
//! [`Dispatcher`]: crate::dispatch::Dispatcher

pub mod call;
pub mod catalog;
pub mod consent;
pub mod jsonrpc;
pub mod page;
pub mod server;
pub mod session;
