//! `skillpipe mcp`: serve the loaded skills and their scripts to an MCP client over stdio.

use super::{OnlySkills, PolicyFlags, SkillFlags};
use crate::mcp::{catalog::Catalog, consent, server};
use clap::Args;
use std::sync::Arc;

#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub only: OnlySkills,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
    /// Agent name or path to an agent TOML (brings skills and a script policy).
    #[arg(long, value_name = "NAME|PATH")]
    pub agent: Option<String>,
}

pub fn run(args: McpArgs) -> anyhow::Result<i32> {
    let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
    let peer = consent::Peer::new(out_tx.clone());
    let config = args.policy.app_config(
        &args.skill_flags,
        &args.only.skills,
        args.agent.as_deref(),
        &[],
    )?;
    // stdin is the protocol: confirmations go to the client, never to a terminal.
    let setup = crate::app::build(
        &config,
        crate::app::Asking::Peer(Box::new(consent::asker(peer.clone()))),
    )?;
    super::warn_all(&setup.warnings);
    let mut catalog = Catalog::load(setup.dispatcher.skills(), &setup.dispatcher.read_hidden());
    catalog.offer_only(|reference| setup.dispatcher.could_run(reference));
    // They name files of the skill folders, foreign names.
    super::warn_all(&catalog.warnings);
    let dispatcher = setup.dispatcher;
    if !dispatcher.policy().allow_scripts {
        eprintln!(
            "skillpipe mcp: every tool call will be refused: {}",
            crate::app::wording::denied(&crate::policy::Denied::ScriptsOff)
        );
    }
    let rt = crate::app::runtime()?;
    let signal = rt.block_on(server::serve(
        dispatcher,
        Arc::new(catalog),
        peer,
        out_rx,
        out_tx,
    ))?;
    // The stdin thread may still be blocked in a read; do not wait for it.
    rt.shutdown_background();
    // Closing stdin is how a client ends the session; a signal stops it as it stops `filter`.
    Ok(signal.map_or(super::EXIT_OK, super::interrupt::stopped))
}
