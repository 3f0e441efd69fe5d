//! Makes untrusted text inert for a terminal by showing every control visibly.
//!
//! Rules, in order (one output form per input, so the result is the same for every chunking):
//! - `\n` and `\t` pass; `\r\n` passes (a line ending, harmless in that position).
//! - Any other C0 control and DEL become their Unicode control picture (`ESC` → `␛`, `\r` → `␍`,
//!   `BEL` → `␇`, DEL → `␡`). With ESC made visible, the rest of an escape sequence (CSI, OSC, DCS,
//!   APC, PM, SOS) is plain printable text: `␛]52;c;…` can be read but does nothing.
//! - C1 controls (U+0080–U+009F, which some terminals take as CSI/OSC introducers) and bidi
//!   overrides and isolates (U+202A–U+202E, U+2066–U+2069, which reorder what the user reads)
//!   are shown as `<U+XXXX>`.
//! - Bytes that are not UTF-8 are shown as `\xNN` (a terminal would show a replacement character
//!   at best, or take a raw 8-bit C1 byte as a control at worst).
//!
//! No SGR colour is let through: an allow-list would have to parse parameters exactly as every
//! terminal does, and colour from a model or a script is not worth that risk.

use std::borrow::Cow;

/// Sanitizes a whole string (see the module doc for the rules).
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if s.chars().all(|c| !needs_escape(c)) && !s.contains('\r') {
        return Cow::Borrowed(s);
    }
    Cow::Owned(sanitize_bytes(s.as_bytes()))
}

/// [`sanitize`] for bytes that may not be UTF-8 (a script's output): those show as `\xNN`.
pub fn sanitize_bytes(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() + 8);
    let mut san = Sanitizer::default();
    san.push(bytes, &mut out);
    san.finish(&mut out);
    // The sanitizer only ever writes valid UTF-8.
    String::from_utf8(out).expect("sanitizer output is UTF-8")
}

/// Streaming form of [`sanitize`]: bytes may arrive split anywhere (inside a UTF-8 character,
/// between `\r` and `\n`); the output is the same as for the whole input at once.
#[derive(Debug, Default)]
pub struct Sanitizer {
    /// An incomplete UTF-8 sequence or a lone `\r` held back from the end of the last chunk.
    held: Vec<u8>,
}

impl Sanitizer {
    /// Appends the sanitized form of `input` to `out`, holding back an unfinished tail.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut bytes = std::mem::take(&mut self.held);
        bytes.extend_from_slice(input);
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            let (invalid, last) = (chunk.invalid(), chunks.peek().is_none());
            let mut chars = chunk.valid().chars().peekable();
            while let Some(c) = chars.next() {
                match (c, chars.peek()) {
                    ('\r', Some('\n')) => {
                        out.extend_from_slice(b"\r\n");
                        chars.next();
                    }
                    // A `\r` at the very end may be a line ending's first half.
                    ('\r', None) if last && invalid.is_empty() => self.held.push(b'\r'),
                    ('\r', _) => out.extend_from_slice("␍".as_bytes()),
                    (c, _) if c.is_ascii() => push_ascii(c as u8, out),
                    (c, _) if needs_escape(c) => {
                        out.extend_from_slice(format!("<U+{:04X}>", c as u32).as_bytes())
                    }
                    (c, _) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                }
            }
            // A character cut off at the end of the input: completed by the next piece.
            let cut = std::str::from_utf8(invalid).is_err_and(|e| e.error_len().is_none());
            if last && cut {
                self.held.extend_from_slice(invalid);
            } else {
                for b in invalid {
                    out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                }
            }
        }
    }

    /// Flushes what was held back at the end of the stream.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        for b in std::mem::take(&mut self.held) {
            if b == b'\r' {
                out.extend_from_slice("␍".as_bytes());
            } else {
                out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
            }
        }
    }
}

fn push_ascii(b: u8, out: &mut Vec<u8>) {
    match b {
        b'\n' | b'\t' => out.push(b),
        0x00..=0x1f => {
            let mut buf = [0; 4];
            let pic = char::from_u32(0x2400 + u32::from(b)).expect("control picture");
            out.extend_from_slice(pic.encode_utf8(&mut buf).as_bytes());
        }
        0x7f => out.extend_from_slice("␡".as_bytes()),
        _ => out.push(b),
    }
}

/// Characters shown escaped besides the ASCII controls handled byte-wise.
fn needs_escape(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x08 | 0x0b..=0x1f | 0x7f // C0 (but \t, \n) and DEL
        | 0x80..=0x9f                    // C1
        | 0x202a..=0x202e                // bidi embeddings and overrides
        | 0x2066..=0x2069) // bidi isolates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(input: &[u8], at: usize) -> String {
        let mut s = Sanitizer::default();
        let mut out = Vec::new();
        let (a, b) = input.split_at(at);
        s.push(a, &mut out);
        s.push(b, &mut out);
        s.finish(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let s = "héllo\tworld\n日本 ✓";
        assert!(matches!(sanitize(s), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_a_lone_carriage_return_c1_and_bidi_are_made_visible() {
        for (text, shown) in [
            ("\x1b]52;c;aGk=\x07", "␛]52;c;aGk=␇"),
            ("\x1b[2J\x1b[1;1H", "␛[2J␛[1;1H"),
            ("\x1b]2;title\x1b\\", "␛]2;title␛\\"),
            ("a\x08b\x7f", "a␈b␡"),
            // A carriage return only in a line ending.
            ("ok\r\nnext", "ok\r\nnext"),
            ("fake\rreal", "fake␍real"),
            ("end\r", "end␍"),
            // C1 and bidi controls as code points.
            ("a\u{9b}2Jb", "a<U+009B>2Jb"),
            ("x\u{202e}gpj.exe", "x<U+202E>gpj.exe"),
            ("\u{2066}i\u{2069}", "<U+2066>i<U+2069>"),
        ] {
            assert_eq!(sanitize(text), shown, "{text:?}");
        }
    }

    #[test]
    fn one_line_messages_use_the_same_wording() {
        // `escape_controls` (notices, errors, the confirmation prompt) shows every character
        // this sanitizer escapes exactly as it does; it escapes line breaks, tabs and invisible
        // format characters besides.
        use crate::command::escape_controls;
        for c in (0..0x3000).filter_map(char::from_u32) {
            if matches!(c, '\n' | '\t' | '\r') {
                continue;
            }
            let s = c.to_string();
            let shown = sanitize(&s);
            if shown != s {
                assert_eq!(escape_controls(&s), shown, "U+{:04X}", c as u32);
            }
        }
        assert_eq!(escape_controls("a\nb\tc\rd"), "a␊b␉c␍d");
        assert_eq!(
            escape_controls("\x1b]52;c;x\x07"),
            sanitize("\x1b]52;c;x\x07")
        );
    }

    #[test]
    fn invalid_utf8_is_shown_as_hex() {
        let mut s = Sanitizer::default();
        let mut out = Vec::new();
        s.push(b"a\x9bb\xff", &mut out);
        s.finish(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "a\\x9bb\\xff");
    }

    #[test]
    fn every_split_gives_the_same_output() {
        let input = "é\x1b[31m\r\n日\u{202e}\r\u{9b}x\r".as_bytes();
        let whole = chunked(input, 0);
        for at in 0..=input.len() {
            assert_eq!(chunked(input, at), whole, "split at {at}");
        }
        assert_eq!(whole, "é␛[31m\r\n日<U+202E>␍<U+009B>x␍");
    }
}
