//! Incremental Server-Sent Events parser.
//!
//! Network chunks may split an event anywhere — inside a field name, between CR and LF, inside a
//! UTF-8 character — so bytes are buffered up to the end of each line and only whole lines are
//! interpreted. Follows the WHATWG rules that matter for model APIs: `data:` lines join with `\n`,
//! a blank line dispatches, `:` starts a comment, one space after the colon is dropped, lines end
//! in LF, CRLF or CR, and a leading BOM is ignored.

/// Longest line, and longest event (its `data:` lines joined), taken from a stream: a server
/// that sends more without a line end would otherwise grow the buffer without bound.
pub const MAX_EVENT_BYTES: usize = 8 << 20;

/// A line or an event over [`MAX_EVENT_BYTES`]: the stream is not read further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong;

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any (Anthropic names its events; OpenAI does not).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The last byte seen was CR, so an LF at the start of the next chunk ends nothing.
    after_cr: bool,
    /// Whether the first line has been seen (to strip a BOM).
    seen_line: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
}

impl SseParser {
    /// Feed the next chunk; events completed by it are appended to `out`. A line or event over
    /// [`MAX_EVENT_BYTES`] is an error, and nothing more of it is kept.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), TooLong> {
        if chunk.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
            chunk = &chunk[1..];
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', chunk) {
            if self.line.len() + pos > MAX_EVENT_BYTES {
                self.line = Vec::new();
                return Err(TooLong);
            }
            self.line.extend_from_slice(&chunk[..pos]);
            self.end_line(out);
            if self.data.len() > MAX_EVENT_BYTES {
                self.data = String::new();
                return Err(TooLong);
            }
            let mut next = pos + 1;
            if chunk[pos] == b'\r' {
                match chunk.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            chunk = &chunk[next..];
        }
        if self.line.len() + chunk.len() > MAX_EVENT_BYTES {
            self.line = Vec::new();
            return Err(TooLong);
        }
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    /// The end of the stream: an event whose lines all arrived but whose closing blank line did
    /// not is still delivered (servers that close right after `data: [DONE]\n` exist). A partial
    /// last line is dropped: it was cut.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.line.clear();
        self.take_event()
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let mut line = std::mem::take(&mut self.line);
        let mut bytes = &line[..];
        if !self.seen_line {
            self.seen_line = true;
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        if bytes.is_empty() {
            if let Some(ev) = self.take_event() {
                out.push(ev);
            }
        } else if bytes[0] != b':' {
            let (field, value) = match memchr::memchr(b':', bytes) {
                Some(i) => {
                    let v = &bytes[i + 1..];
                    (&bytes[..i], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (bytes, &b""[..]),
            };
            match field {
                b"data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(&String::from_utf8_lossy(value));
                    self.has_data = true;
                }
                b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
                _ => {} // id, retry and unknown fields do not matter here
            }
        }
        line.clear();
        self.line = line; // keep the allocation
    }

    fn take_event(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Parse a whole input, fed in `chunks` (for tests).
#[cfg(test)]
pub fn parse_all<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut p = SseParser::default();
    let mut out = Vec::new();
    for chunk in chunks {
        p.feed(chunk, &mut out).unwrap();
    }
    out.extend(p.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    /// Every way of cutting each input into two or three chunks, or bytes, gives the same events.
    #[test]
    fn events_do_not_depend_on_where_the_input_is_cut() {
        let cases: [(&[u8], Vec<SseEvent>); 6] = [
            // OpenAI's style, a two-byte character among the data.
            (
                b"data: {\"a\":1}\n\ndata: {\"b\":\"\xc3\xa9\"}\n\ndata: [DONE]\n\n",
                vec![
                    ev(None, "{\"a\":1}"),
                    ev(None, "{\"b\":\"é\"}"),
                    ev(None, "[DONE]"),
                ],
            ),
            // CRLF, CR and LF line ends.
            (
                b"data: a\r\n\r\ndata: b\r\rdata: c\n\r\ndata: d\r\n\n",
                vec![ev(None, "a"), ev(None, "b"), ev(None, "c"), ev(None, "d")],
            ),
            // Multi-line data, comments and event names.
            (
                b": keep-alive\n\nevent: message_start\ndata: one\ndata:two\n: note\ndata:  three\n\nid: 7\nretry: 10\n\n",
                vec![ev(Some("message_start"), "one\ntwo\n three")],
            ),
            // `data` alone is an empty data line; an event name without data dispatches nothing
            // and does not leak into the next event.
            (
                b"data\n\ndata:\ndata:\n\nevent: x\n\ndata: y\n\n",
                vec![ev(None, ""), ev(None, "\n"), ev(None, "y")],
            ),
            // A BOM is ignored at the start.
            (b"\xEF\xBB\xBFdata: a\n\n", vec![ev(None, "a")]),
            // The end of the stream without a blank line delivers the complete lines.
            (b"data: [DONE]\n", vec![ev(None, "[DONE]")]),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_all([input]), expected, "whole input");
            for i in 0..=input.len() {
                for j in i..=input.len() {
                    let out = parse_all([&input[..i], &input[i..j], &input[j..]]);
                    assert_eq!(out, expected, "split at {i},{j}");
                }
            }
            assert_eq!(parse_all(input.chunks(1)), expected, "byte by byte");
        }
        // A partial last line is dropped: it was cut.
        let cut = parse_all([b"data: a\n\ndata: {\"cut".as_slice()]);
        assert_eq!(cut, vec![ev(None, "a")]);
    }

    #[test]
    fn a_line_or_an_event_over_the_bound_is_an_error() {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        let mib = vec![b'x'; 1 << 20];
        p.feed(b"data: ", &mut out).unwrap();
        let mut fed = 0;
        while p.feed(&mib, &mut out).is_ok() {
            fed += 1;
        }
        assert_eq!(fed, 7, "stopped at the bound, not before");
        assert!(p.line.capacity() == 0, "what it held is let go");
        // An event of many short lines, over the bound together.
        let mut p = SseParser::default();
        let line = [b"data: ".as_slice(), &vec![b'y'; 1 << 20], b"\n"].concat();
        let err = (0..16).find_map(|_| p.feed(&line, &mut out).err());
        assert_eq!(err, Some(TooLong));
        // Control: just under the bound is an event.
        let mut p = SseParser::default();
        let mut out = Vec::new();
        let data = vec![b'z'; MAX_EVENT_BYTES - 10];
        p.feed(&[b"data:".as_slice(), &data, b"\n\n"].concat(), &mut out)
            .unwrap();
        assert_eq!(out.len(), 1);
    }
}
