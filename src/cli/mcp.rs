//! `skillpipe mcp`: serve the loaded skills and their scripts to an MCP client over stdio.

use super::{SessionFlags, SkillFlags};
use crate::mcp::{catalog::Catalog, consent, server};
use clap::Args;
use std::sync::Arc;

#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub session: SessionFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub const EXAMPLES: &str = "\
Examples:
  skillpipe mcp --skills-dir /home/me/skills --allow-scripts
  claude mcp add --scope user skillpipe -- skillpipe mcp --skills-dir ~/skills --allow-scripts

The sandbox is Linux-only: elsewhere add --sandbox best-effort (scripts then run unconfined).";

pub fn run(args: McpArgs) -> anyhow::Result<i32> {
    let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
    let peer = consent::Peer::new(out_tx.clone());
    let config = args.session.app_config(&args.skill_flags, &[]);
    // stdin is the protocol: confirmations go to the client, never to a terminal.
    let setup = crate::app::build(
        &config,
        crate::app::Asking::Peer(Box::new(consent::asker(peer.clone()))),
    )?;
    super::warn_all(&setup.warnings);
    let mut catalog = Catalog::load(setup.dispatcher.skills(), &setup.dispatcher.read_hidden());
    let scripts_on = setup.dispatcher.policy().allow_scripts;
    let runnable = catalog.tools.len();
    // With scripts off nothing could run: a client's model is offered only `load_skill`.
    catalog.offer_only(|reference| scripts_on && setup.dispatcher.could_run(reference));
    // They name files of the skill folders, foreign names.
    super::warn_all(&catalog.warnings);
    let dispatcher = setup.dispatcher;
    if let Some(why) = nothing_offered(scripts_on, runnable, catalog.tools.len()) {
        eprintln!("skillpipe mcp: {why}");
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

/// What to say at start when the policy leaves no script or tool to offer (of `loaded`
/// entries, `load_skill` among them, `offered` are left), so that a client showing no tools is
/// not a mystery.
fn nothing_offered(scripts_on: bool, loaded: usize, offered: usize) -> Option<String> {
    let has_load_skill = loaded > 0;
    let runnable_left = offered.saturating_sub(usize::from(has_load_skill));
    if runnable_left > 0 || loaded <= usize::from(has_load_skill) {
        return None;
    }
    Some(match scripts_on {
        false => format!(
            "no script or tool is offered (only load_skill), and a call to one is refused: {}",
            crate::advice::cli::denied(&crate::policy::Denied::ScriptsOff)
        ),
        true => "no script or tool is offered (only load_skill): the policy allows none of them (no --allow pattern or agent's allowed_commands matches one, or a --deny pattern does); a call is refused with the policy's reason".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_why_when_nothing_runnable_is_offered() {
        let off = nothing_offered(false, 4, 1).unwrap();
        assert!(off.contains("--allow-scripts"), "{off}");
        assert!(nothing_offered(true, 4, 1).unwrap().contains("--allow"));
        // Controls: something runnable offered, or nothing loaded to offer.
        assert_eq!(nothing_offered(true, 4, 2), None);
        assert_eq!(nothing_offered(false, 0, 0), None);
        assert_eq!(nothing_offered(false, 1, 1), None);
    }
}
