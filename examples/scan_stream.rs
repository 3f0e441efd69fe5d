//! Post-process a chunked model stream with the scanner alone: text flows through, directives
//! come out as typed events. Nothing runs. (Needs only the `stream` feature.)
//!
//! `cargo run --example scan_stream`

use futures::{StreamExt, executor::block_on, stream};
use skillpipe::{Event, ScanOptions};
use std::io::Write;

fn main() {
    // As a model might stream it: chunk boundaries anywhere, even inside a directive.
    let chunks = stream::iter([
        "Let me check. !{scripts/look",
        "up.py \"ferret\"} A ferret is ",
        "a mammal. %{say \"fer",
        "ret\"}\nIn code, `%{this}` stays text.\n",
    ]);
    let mut events = skillpipe::scan::stream::directives(chunks, ScanOptions::default());
    block_on(async {
        while let Some(event) = events.next().await {
            match event {
                // Bytes as they came: a chunk may end inside a UTF-8 character, so decoding each
                // event on its own could break one in two. Written as bytes, it stays whole.
                Event::Text(t) => std::io::stdout().write_all(&t).unwrap(),
                Event::Directive(d) => print!("⟨{:?}: {}⟩", d.kind, d.body),
            }
        }
    });
}
