//! Agent configs (DESIGN §5) and the system prompt (§4).
//!
//! - `config`: the TOML formats (skillpipe's own, strict; r9s's versioned layout) → [`AgentFile`]
//!   → [`AgentConfig`] once `{{var}}` placeholders are filled. Pure.
//! - `search`: where agents live and how a name is found; `agents list`.
//! - `prompt`: the system prompt a model sees. Pure.
//! - `template`: `{{var}}` placeholders and `--var K=V`. Pure.
//! - `skill_adapter`: the prompt view of loaded skills.
//! - `catalog`: the catalog entries of skills not named (progressive disclosure). Pure.
//! - `guide`: the directive guide and its worked examples, inside that prompt. Pure.

pub(crate) mod catalog;
pub(crate) mod config;
mod error;
pub(crate) mod guide;
pub(crate) mod origin;
pub(crate) mod prompt;
pub(crate) mod search;
pub(crate) mod skill_adapter;
pub(crate) mod template;

pub use config::{AgentConfig, AgentFile, AgentFormat};
pub use error::AgentError;
pub(crate) use error::missing_variables;
pub use prompt::{few_shot, prompt_for, system_prompt};
pub use search::{AgentListing, AgentSummary, find, list, list_in, load, load_from};
pub use skill_adapter::{SkillPrompt, skill_prompts_of};
