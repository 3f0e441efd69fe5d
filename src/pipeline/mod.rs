//! The one directive pipeline the filter and the chat loop share (DESIGN §7, §9): a `Driver`
//! takes a byte stream and gives typed events (text, [`Report`]s, captures), with one ordered,
//! bounded side-effect queue, one capture-text rule ([`capture_text`]) and one wording of
//! outcomes ([`Report`]'s `Display`, [`status_text`]), so the two modes cannot drift apart in
//! what they run, say or hand back.
//!
//! The filter feeds it straight from its read buffer (`Driver::feed_blocking`, no copy of the
//! text); the chat loop feeds it model tokens (`Driver::feed`) and stops the model's stream at
//! a capture it hands back. Only the reports and the two text rules are public.

mod driver;
mod queue;
mod report;

pub(crate) use driver::{CaptureMode, Driver, DriverOptions, Event, Flow, Listener};
#[cfg(test)]
pub(crate) use queue::SIDE_QUEUE;
pub use report::{Report, ReportKind, capture_text, status_text};
