//! The scanner as a `futures` stream adapter: a stream of chunks in, a stream of [`Event`]s out.
//!
//! Needs the `stream` feature (on with `runtime`). Chunks may split anything, even a UTF-8
//! character or a directive's sigil from its bracket; the events are those [`Scanner`] gives.
//! Text comes as bytes, cut where the chunks were: a character split between two chunks is split
//! between two `Event::Text`s, so write them out as bytes (or decode with a streaming decoder),
//! never each one with `String::from_utf8_lossy`. A directive's body is always whole.

use super::{Event, ScanOptions, Scanner};
use futures_core::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Scans the chunks of `chunks` (anything that is bytes: `Vec<u8>`, `String`, `Bytes`, …).
/// The stream must be `Unpin`: pin one that is not with `Box::pin` (or `std::pin::pin!`).
///
/// ```
/// use futures::{StreamExt, executor::block_on, stream};
/// use skillpipe::{Event, ScanOptions};
///
/// let chunks = stream::iter(["Hello %{say h", "i} world"]);
/// let events: Vec<Event> = block_on(
///     skillpipe::scan::stream::directives(chunks, ScanOptions::default()).collect(),
/// );
/// assert!(matches!(&events[1], Event::Directive(d) if d.body == "say hi"));
/// ```
pub fn directives<S>(chunks: S, opts: ScanOptions) -> Directives<S>
where
    S: Stream + Unpin,
    S::Item: AsRef<[u8]>,
{
    Directives {
        chunks,
        scanner: Some(Scanner::new(opts)),
        ready: VecDeque::new(),
        buf: Vec::new(),
    }
}

/// The stream [`directives`] returns.
#[derive(Debug)]
pub struct Directives<S> {
    chunks: S,
    /// `None` once the input has ended and the scanner has been finished.
    scanner: Option<Scanner>,
    ready: VecDeque<Event>,
    buf: Vec<Event>,
}

impl<S> Stream for Directives<S>
where
    S: Stream + Unpin,
    S::Item: AsRef<[u8]>,
{
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = self.get_mut();
        loop {
            if let Some(ev) = this.ready.pop_front() {
                return Poll::Ready(Some(ev));
            }
            let Some(scanner) = this.scanner.as_mut() else {
                return Poll::Ready(None);
            };
            match Pin::new(&mut this.chunks).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(chunk)) => scanner.feed(chunk.as_ref(), &mut this.buf),
                Poll::Ready(None) => {
                    scanner.finish(&mut this.buf);
                    this.scanner = None;
                }
            }
            this.ready.extend(this.buf.drain(..));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::{StreamExt, executor::block_on, stream};

    #[test]
    fn events_match_the_scanner_for_every_split() {
        let input = b"a %{say hi} b !{date} `%{no}` c %{open";
        let whole = super::super::scan_all(input, ScanOptions::default());
        for split in 0..=input.len() {
            let (x, y) = input.split_at(split);
            let chunks = stream::iter([x.to_vec(), y.to_vec()]);
            let got: Vec<Event> = block_on(directives(chunks, ScanOptions::default()).collect());
            assert_eq!(
                super::super::coalesce(got),
                super::super::coalesce(whole.clone()),
                "split at {split}"
            );
        }
    }
}
