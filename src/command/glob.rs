//! A small glob for one pattern word: `*`, `?`, `[..]` and `\` escapes, nothing else.
//!
//! Hand-rolled rather than globset because a policy word must mean exactly what it shows:
//! globset would read `{a,b}` as alternation (so a pattern `printf {x}` would not match the
//! command `printf {x}`) and `**` specially. Here `*` matches any run of characters, `/`
//! included — a pattern word is matched against one whole argv word, which is opaque text (a
//! commit message, a URL), not a path to be walked. Matching works on Unicode scalar values,
//! compared exactly.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `?`: exactly one character.
    One,
    /// `*`: any run of characters, possibly empty.
    Star,
    /// `[..]`: one character in (or, negated, not in) the inclusive ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glob {
    toks: Vec<Tok>,
}

/// A `[` without its `]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unterminated `[` in `{word}`")]
pub(crate) struct GlobError {
    pub word: String,
}

impl Glob {
    pub(crate) fn parse(word: &str) -> Result<Glob, GlobError> {
        let mut toks = Vec::new();
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            let tok = match c {
                '*' => Tok::Star,
                '?' => Tok::One,
                // A trailing backslash stands for itself.
                '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
                '[' => {
                    let negated = matches!(chars.peek(), Some('!' | '^'));
                    if negated {
                        chars.next();
                    }
                    let mut members = Vec::new();
                    let mut closed = false;
                    while let Some(c) = chars.next() {
                        match c {
                            // `]` right after `[` or `[!` is a member, not the end.
                            ']' if !members.is_empty() => {
                                closed = true;
                                break;
                            }
                            '\\' => members.push(chars.next().unwrap_or('\\')),
                            c => members.push(c),
                        }
                    }
                    if !closed {
                        return Err(GlobError {
                            word: word.to_string(),
                        });
                    }
                    Tok::Class {
                        negated,
                        ranges: class_ranges(&members),
                    }
                }
                c => Tok::Lit(c),
            };
            toks.push(tok);
        }
        Ok(Glob { toks })
    }

    /// The text this glob matches, if it matches exactly one text (no wildcards).
    pub(crate) fn literal(&self) -> Option<String> {
        self.toks
            .iter()
            .map(|t| match t {
                Tok::Lit(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// Match the whole of `text`. `fold_ascii_case` compares ASCII letters case-insensitively.
    pub(crate) fn matches(&self, text: &str, fold_ascii_case: bool) -> bool {
        let text: Vec<char> = text.chars().collect();
        let toks = &self.toks;
        let (mut p, mut t) = (0, 0);
        // Where the last `*` was and how much text it has swallowed so far; on a mismatch it
        // swallows one more character and matching resumes after it.
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            if let Some(tok) = toks.get(p) {
                if *tok == Tok::Star {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                if tok_matches(tok, text[t], fold_ascii_case) {
                    p += 1;
                    t += 1;
                    continue;
                }
            }
            match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            }
        }
        toks[p..].iter().all(|t| *t == Tok::Star)
    }
}

fn class_ranges(members: &[char]) -> Vec<(char, char)> {
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < members.len() {
        // `a-z` is a range; a `-` first or last is itself.
        if i + 2 < members.len() && members[i + 1] == '-' {
            ranges.push((members[i], members[i + 2]));
            i += 3;
        } else {
            ranges.push((members[i], members[i]));
            i += 1;
        }
    }
    ranges
}

fn tok_matches(tok: &Tok, c: char, fold: bool) -> bool {
    let candidates = if fold {
        [c, c.to_ascii_lowercase(), c.to_ascii_uppercase()]
    } else {
        [c, c, c]
    };
    match tok {
        Tok::Lit(l) => candidates.contains(l),
        Tok::One => true,
        Tok::Star => false,
        Tok::Class { negated, ranges } => {
            let inside = candidates
                .iter()
                .any(|c| ranges.iter().any(|(lo, hi)| lo <= c && c <= hi));
            inside != *negated
        }
    }
}

/// Escape `word` so that [`Glob::parse`] reads it back as a literal.
pub(crate) fn escape(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if matches!(c, '*' | '?' | '[' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pat: &str, text: &str) -> bool {
        Glob::parse(pat).unwrap().matches(text, false)
    }

    #[test]
    fn wildcards() {
        assert!(m("*", ""));
        assert!(m("*", "a/b c"));
        assert!(m("e*o", "echo"));
        assert!(m("e*o", "eo"));
        assert!(!m("e*o", "echos"));
        assert!(m("*.py", "scripts/sub/x.py"));
        assert!(m("a*b*c", "a-b-b-c"));
        assert!(!m("a*b*c", "a-c-b"));
        assert!(m("?", "é"));
        assert!(!m("?", ""));
        assert!(!m("??", "a"));
        assert!(m("*?", "x"));
    }

    #[test]
    fn classes() {
        assert!(m("[ab]c", "bc"));
        assert!(!m("[ab]c", "cc"));
        assert!(m("[a-c]", "b"));
        assert!(!m("[!a-c]", "b"));
        assert!(m("[^a-c]", "d"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[a-]", "-"));
        assert!(m("[\\]]", "]"));
        assert!(Glob::parse("[abc").is_err());
        assert_eq!(
            Glob::parse("x[").unwrap_err().to_string(),
            "unterminated `[` in `x[`"
        );
    }

    #[test]
    fn exact_and_case_sensitive() {
        assert!(!m("echo", "ECHO"));
        assert!(!m("echo", "\u{435}cho")); // Cyrillic е
        assert!(!m("echo", "\u{ff45}\u{ff43}\u{ff48}\u{ff4f}")); // fullwidth
        assert!(!m("echo", "echo "));
        assert!(!m("echo", "ech"));
        let g = Glob::parse("echo").unwrap();
        assert!(g.matches("EcHo", true));
        assert!(!g.matches("\u{435}cho", true));
        assert!(Glob::parse("[a-c]").unwrap().matches("B", true));
    }

    #[test]
    fn escapes_and_literals() {
        assert!(m("a\\*", "a*"));
        assert!(!m("a\\*", "ab"));
        assert_eq!(Glob::parse("a\\*b").unwrap().literal(), Some("a*b".into()));
        assert_eq!(Glob::parse("a*b").unwrap().literal(), None);
        for word in ["*", "a?[b]\\", "plain", "[!x]"] {
            let g = Glob::parse(&escape(word)).unwrap();
            assert_eq!(g.literal().as_deref(), Some(word));
        }
    }
}
