//! The directive grammar as nom parsers over a complete directive.
//!
//! The streaming framer in [`super::scanner`] finds where a directive ends without re-reading held
//! bytes (it keeps depth/quote state across chunks). Once it has a closed candidate, this grammar is
//! the authority that turns the raw bytes into a [`Directive`]: if the two ever disagreed, the
//! candidate is treated as literal text (fail closed). The grammar is iterative over body tokens, not
//! recursive, so deep nesting (`%{{{{…}}}}`) cannot exhaust the stack.
//!
//! ```text
//! directive := sigil open body close        sigil := '%' | '!'    open/close := '{' '}' | '<' '>'
//! body      := token*  (open/close tokens balanced)
//! token     := "'" [^']* "'"                 single quotes: anything, no escapes
//!            | '"' ('\' any | [^"\])* '"'    double quotes: backslash escapes the next byte
//!            | '\' [^\n]                     outside quotes: backslash escapes the next byte
//!            | open | close
//!            | [^'"\\\n open close]+         everything else but an unquoted newline
//! ```

use nom::branch::alt;
use nom::bytes::complete::{tag, take, take_till, take_till1};
use nom::character::complete::{char, one_of};
use nom::combinator::{recognize, value, verify};
use nom::multi::many0_count;
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

use super::{Directive, Kind};

/// One lexical piece of a directive body; only brackets matter for nesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Open,
    Close,
    Other,
}

fn single_quoted(i: &[u8]) -> IResult<&[u8], &[u8]> {
    recognize(delimited(
        tag(&b"'"[..]),
        take_till(|c| c == b'\''),
        tag(&b"'"[..]),
    ))
    .parse(i)
}

fn double_quoted(i: &[u8]) -> IResult<&[u8], &[u8]> {
    let piece = alt((
        preceded(tag(&b"\\"[..]), take(1usize)),
        take_till1(|c| c == b'"' || c == b'\\'),
    ));
    recognize(delimited(
        tag(&b"\""[..]),
        many0_count(piece),
        tag(&b"\""[..]),
    ))
    .parse(i)
}

/// An escaped byte outside quotes. An escaped newline is still an unquoted newline: not allowed.
fn escaped(i: &[u8]) -> IResult<&[u8], &[u8]> {
    recognize(preceded(
        tag(&b"\\"[..]),
        verify(take(1usize), |b: &[u8]| b[0] != b'\n'),
    ))
    .parse(i)
}

fn token(open: u8, close: u8, i: &[u8]) -> IResult<&[u8], Token> {
    alt((
        value(Token::Other, single_quoted),
        value(Token::Other, double_quoted),
        value(Token::Other, escaped),
        value(Token::Open, char(open as char)),
        value(Token::Close, char(close as char)),
        value(
            Token::Other,
            take_till1(|c| matches!(c, b'\'' | b'"' | b'\\' | b'\n') || c == open || c == close),
        ),
    ))
    .parse(i)
}

/// The closing bracket for an opening one.
pub(crate) fn closing(open: u8) -> u8 {
    if open == b'<' { b'>' } else { b'}' }
}

/// Parses one directive at the start of `input`: its kind and the untrimmed bytes between the
/// brackets.
pub(crate) fn directive(input: &[u8]) -> IResult<&[u8], (Kind, &[u8])> {
    let (body, (sigil, open)) = (one_of("%!"), one_of("{<")).parse(input)?;
    let kind = if sigil == '%' {
        Kind::SideEffect
    } else {
        Kind::Capture
    };
    let (open, close) = (open as u8, closing(open as u8));
    let mut depth = 0usize;
    let mut rest = body;
    loop {
        let (next, tok) = token(open, close, rest)?;
        match tok {
            Token::Open => depth += 1,
            Token::Close if depth == 0 => {
                let inner = &body[..body.len() - rest.len()];
                return Ok((next, (kind, inner)));
            }
            Token::Close => depth -= 1,
            Token::Other => {}
        }
        rest = next;
    }
}

/// Turns the complete raw bytes of a candidate into a directive: the grammar must consume all of
/// `raw`, and the body must be valid UTF-8, non-blank once trimmed and not a placeholder (only
/// dots and ellipses, `!{…}`). `None` means "literal text".
pub fn parse_directive(raw: &[u8]) -> Option<Directive> {
    let (rest, (kind, inner)) = directive(raw).ok()?;
    if !rest.is_empty() {
        return None;
    }
    let body = std::str::from_utf8(inner).ok()?.trim();
    if body.is_empty() || placeholder(body) {
        return None;
    }
    Some(Directive {
        kind,
        body: body.to_owned(),
        raw: raw.to_vec(),
    })
}

/// A body made only of dots and ellipses (`…`, `...`): what a model writes when it talks about
/// the syntax, never a command anyone runs. Asked what kinds of directives there are, a small model
/// answered "`!{…}` runs a script" without backticks; read as a directive, that was refused and
/// cut out of its sentence. So it is text, like a blank body.
fn placeholder(body: &str) -> bool {
    body.chars()
        .all(|c| c == '.' || c == '…' || c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(raw: &str) -> Option<String> {
        parse_directive(raw.as_bytes()).map(|d| d.body)
    }

    #[test]
    fn parses_kinds_and_bodies() {
        let d = parse_directive(b"%{ echo x }").unwrap();
        assert_eq!((d.kind, d.body.as_str()), (Kind::SideEffect, "echo x"));
        let d = parse_directive(b"!<ls -l>").unwrap();
        assert_eq!((d.kind, d.body.as_str()), (Kind::Capture, "ls -l"));
    }

    #[test]
    fn quotes_escapes_and_nesting() {
        let cases = [
            (r#"%{echo "}"}"#, Some(r#"echo "}""#)),
            (r#"%{echo '}'}"#, Some("echo '}'")),
            (r#"!{a "x\"}" b}"#, Some(r#"a "x\"}" b"#)),
            (r"!{a \} b}", Some(r"a \} b")),
            ("!{jq '{a:1}' f}", Some("jq '{a:1}' f")),
            ("!{printf {x}}", Some("printf {x}")),
            ("!<a <b> c>", Some("a <b> c")),
            ("!<a {b c>", Some("a {b c")),
            ("%{echo 'a\nb'}", Some("echo 'a\nb'")),
            ("%{echo \"a\\\nb\"}", Some("echo \"a\\\nb\"")),
            ("%{echo a\nb}", None),
            ("%{echo a\\\nb}", None),
            ("%{}", None),
            ("%{  \t }", None),
            ("!{…}", None),
            ("%{...}", None),
            ("!{ … . }", None),
            ("!{./run}", Some("./run")),
            ("!{... x}", Some("... x")),
            ("!<…>", None),
            ("%{a}b", None),
            ("%{a", None),
            ("%{'a}", None),
            ("%{{a}", None),
            ("%(a)", None),
        ];
        for (raw, want) in cases {
            assert_eq!(body(raw).as_deref(), want, "raw {raw:?}");
        }
    }

    #[test]
    fn rejects_invalid_utf8_body() {
        assert!(parse_directive(b"%{echo \xff}").is_none());
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let raw = format!("%{{x{}{}}}", "{".repeat(100_000), "}".repeat(100_000));
        assert!(parse_directive(raw.as_bytes()).is_some());
    }
}
