//! Incremental Server-Sent Events parser.
//!
//! Network chunks may split an event anywhere — inside a field name, between CR and LF, inside a
//! UTF-8 character — so bytes are buffered up to the end of each line and only whole lines are
//! interpreted. Follows the WHATWG rules that matter for model APIs: `data:` lines join with `\n`,
//! a blank line dispatches, `:` starts a comment, one space after the colon is dropped, lines end
//! in LF, CRLF or CR, and a leading BOM is ignored.

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
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed the next chunk; events completed by it are appended to `out`.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        if chunk.is_empty() {
            return;
        }
        if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
            chunk = &chunk[1..];
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', chunk) {
            self.line.extend_from_slice(&chunk[..pos]);
            self.end_line(out);
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
        self.line.extend_from_slice(chunk);
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

/// Parse a whole input at once (for tests).
#[cfg(test)]
pub fn parse_all(input: &[u8]) -> Vec<SseEvent> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    p.feed(input, &mut out);
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

    /// Every way of cutting `input` into two or three chunks gives the same events.
    fn assert_split_invariant(input: &[u8], expected: &[SseEvent]) {
        assert_eq!(parse_all(input), expected, "whole input");
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let mut p = SseParser::new();
                let mut out = Vec::new();
                p.feed(&input[..i], &mut out);
                p.feed(&input[i..j], &mut out);
                p.feed(&input[j..], &mut out);
                out.extend(p.finish());
                assert_eq!(out, expected, "split at {i},{j}");
            }
        }
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for b in input {
            p.feed(std::slice::from_ref(b), &mut out);
        }
        out.extend(p.finish());
        assert_eq!(out, expected, "byte by byte");
    }

    #[test]
    fn openai_style_stream() {
        let input = b"data: {\"a\":1}\n\ndata: {\"b\":\"\xc3\xa9\"}\n\ndata: [DONE]\n\n";
        assert_split_invariant(
            input,
            &[
                ev(None, "{\"a\":1}"),
                ev(None, "{\"b\":\"é\"}"),
                ev(None, "[DONE]"),
            ],
        );
    }

    #[test]
    fn crlf_cr_and_lf_line_ends() {
        let input = b"data: a\r\n\r\ndata: b\r\rdata: c\n\r\ndata: d\r\n\n";
        assert_split_invariant(
            input,
            &[ev(None, "a"), ev(None, "b"), ev(None, "c"), ev(None, "d")],
        );
    }

    #[test]
    fn multi_line_data_comments_and_event_names() {
        let input = b": keep-alive\n\nevent: message_start\ndata: one\ndata:two\n: note\ndata:  three\n\nid: 7\nretry: 10\n\n";
        assert_split_invariant(input, &[ev(Some("message_start"), "one\ntwo\n three")]);
    }

    #[test]
    fn field_without_colon_and_empty_data() {
        let input = b"data\n\ndata:\ndata:\n\nevent: x\n\ndata: y\n\n";
        // `data` alone is an empty data line; an event name without data dispatches nothing and
        // does not leak into the next event.
        assert_split_invariant(input, &[ev(None, ""), ev(None, "\n"), ev(None, "y")]);
    }

    #[test]
    fn bom_is_ignored_only_at_the_start() {
        let input = b"\xEF\xBB\xBFdata: a\n\n";
        assert_split_invariant(input, &[ev(None, "a")]);
    }

    #[test]
    fn end_of_stream_without_blank_line_delivers_complete_lines_only() {
        assert_split_invariant(b"data: [DONE]\n", &[ev(None, "[DONE]")]);
        assert_eq!(parse_all(b"data: a\n\ndata: {\"cut"), vec![ev(None, "a")]);
    }
}
