//! The one directive pipeline the filter and the chat loop share (DESIGN §7, §9): a [`Driver`]
//! takes a byte stream and gives typed [`Event`]s (text, reports, captures), with one ordered,
//! bounded side-effect queue, one capture-text rule and one wording of outcomes, so the two
//! modes cannot drift apart in what they run, say or hand back.
//!
//! The filter feeds it straight from its read buffer ([`Driver::feed_blocking`], no copy of the
//! text); the chat loop feeds it model tokens ([`Driver::feed`]) and stops the model's stream at
//! a capture it hands back.

mod driver;
mod queue;
mod report;

pub use driver::{
    Admit, CaptureMode, Captured, Driver, DriverOptions, Event, Flow, Gate, GateAt, Listener,
};
pub use queue::{SIDE_QUEUE, SideDone, SideQueue, side_effect_queue};
pub use report::{Report, ReportKind, capture_text, status_text};
