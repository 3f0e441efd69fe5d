//! The side-effect queue: one worker runs side effects in program order, bounded, and hands each
//! outcome to whoever listens; a barrier lets a capture wait for every effect written before it.

use crate::dispatch::{Dispatcher, InFlight, Outcome};
use crate::scan::{Directive, Kind};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Side effects waiting behind the one that runs. When the queue is full, scanning waits: a
/// stream of `%{…}` faster than they run must not pile up in memory (each may hold 8 KiB).
pub const SIDE_QUEUE: usize = 64;

/// A side effect that has finished (or was refused), with its outcome, counted in flight until
/// it is reported (dropped): a signal's exit waits for the report.
pub type SideDone = (Directive, Outcome, InFlight);

/// Work for the side-effect worker: a directive, or a barrier that is released once every
/// side effect queued before it has finished and been handed back.
#[derive(Debug)]
enum Job {
    Run(Directive),
    Barrier(oneshot::Sender<()>),
}

/// The sending end of the side-effect queue (see [`side_effect_queue`]). Dropping it ends the
/// worker once the queue is drained.
#[derive(Debug, Clone)]
pub struct SideQueue {
    tx: mpsc::Sender<Job>,
}

impl SideQueue {
    /// Queues a side effect; waits while the queue is full.
    pub async fn push(&self, d: Directive) {
        let _ = self.tx.send(Job::Run(d)).await;
    }

    /// Waits until every side effect queued so far has finished and been handed to `done`
    /// (program order: a capture sees the effects written before it).
    pub async fn settled(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Job::Barrier(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

/// The side-effect queue: one worker (the returned future, to spawn) runs queued directives in
/// order and hands each outcome to `done`, on the worker. Bounded ([`SIDE_QUEUE`]).
pub fn side_effect_queue(
    dispatcher: Arc<Dispatcher>,
    mut done: impl FnMut(SideDone) + Send + 'static,
) -> (
    SideQueue,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (tx, mut rx) = mpsc::channel::<Job>(SIDE_QUEUE);
    let worker = async move {
        while let Some(job) = rx.recv().await {
            match job {
                Job::Run(d) => {
                    let reporting = InFlight::enter();
                    let outcome = dispatcher.run_body(Kind::SideEffect, &d.body).await;
                    done((d, outcome, reporting));
                }
                Job::Barrier(release) => {
                    let _ = release.send(());
                }
            }
        }
    };
    (SideQueue { tx }, worker)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture waits for the side effects before it: `settled` returns only once both slow
    /// side effects have been handed back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn settled_waits_for_every_earlier_side_effect() {
        let policy = crate::policy::ScriptPolicy {
            allow_scripts: true,
            allowed_commands: vec!["slow".into()],
            ..Default::default()
        };
        // The slow part is the confirmation, which takes its time and then says no.
        let dispatcher = Dispatcher::new(policy, Arc::default(), crate::audit::AuditLog::new(None))
            .with_asker(|_| {
                std::thread::sleep(std::time::Duration::from_millis(100));
                Ok(crate::confirm::Answer::No)
            });
        let (tx, mut done) = mpsc::unbounded_channel();
        let (queue, worker) = side_effect_queue(Arc::new(dispatcher), move |d| {
            let _ = tx.send(d);
        });
        tokio::spawn(worker);
        let slow = || Directive {
            kind: Kind::SideEffect,
            body: "slow".into(),
            raw: b"%{slow}".to_vec(),
        };
        queue.push(slow()).await;
        queue.push(slow()).await;
        assert!(done.try_recv().is_err(), "nothing has finished yet");
        queue.settled().await;
        assert!(done.try_recv().is_ok() && done.try_recv().is_ok());
    }
}
