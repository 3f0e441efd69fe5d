//! Run directives through the dispatcher with the sandbox: no network, writes only to the
//! per-run `$TMPDIR`, every decision in an audit log. The program is its own launcher.
//!
//! `cargo run --example sandboxed_directive`

use skillpipe::confirm::Answer;
use skillpipe::{AuditLog, Dispatcher, Kind, Launcher, Outcome, ScriptPolicy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // First thing: when this process is started as the sandbox launcher, it becomes one here.
    skillpipe::sandbox::run_if_launcher();

    let audit = std::env::temp_dir().join("skillpipe-example-audit.jsonl");
    let mut policy = ScriptPolicy::allowing(["sh", "echo"]);
    policy.denied_commands = vec!["sh -c *rm*".into()];
    let dispatcher = Dispatcher::builder(policy)
        .launcher(Launcher::ThisProgram)
        .audit(AuditLog::new(Some(audit.clone())))
        .asker(|_| Ok(Answer::Once))
        .build()?;

    let rt = tokio::runtime::Runtime::new()?;
    for body in [
        "echo hello from the sandbox",
        "sh -c 'touch $HOME/skillpipe-example-was-here && echo wrote'",
        "sh -c 'touch $TMPDIR/ok && echo wrote to TMPDIR'",
        "sh -c 'rm -rf /'",
        "echo $HOME",
    ] {
        let outcome = rt.block_on(dispatcher.run_body(Kind::Capture, body));
        let text = String::from_utf8_lossy(skillpipe::pipeline::capture_text(&outcome));
        match &outcome {
            Outcome::Ran(ran) => println!(
                "!{{{body}}} → {} {text:?} {}",
                skillpipe::pipeline::status_text(&ran.result),
                String::from_utf8_lossy(&ran.result.stderr).trim()
            ),
            Outcome::Blocked {
                decision, reason, ..
            } => {
                println!("!{{{body}}} → {decision:?}: {reason}")
            }
        }
    }
    println!("audit log: {}", audit.display());
    Ok(())
}
