//! What one source line starts or continues (pure): the block structure the renderer follows.
//! Only what an answer uses is recognised; anything else is paragraph text.

/// The kind of a source line, with the byte offset where its inline text starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Blank,
    /// ```` ```lang ```` or `~~~`: `ch`, fence length, info string.
    Fence {
        ch: char,
        len: usize,
        info: String,
    },
    Heading {
        level: usize,
        text: usize,
    },
    Rule,
    /// `>` quotes, `depth` levels deep.
    Quote {
        depth: usize,
        text: usize,
    },
    /// A list item: its indent, the marker as written (`-`, `3.`), where its text starts.
    Item {
        indent: usize,
        marker: String,
        text: usize,
    },
    /// A table row (starts with `|`).
    Row,
    Text {
        text: usize,
    },
}

/// Classifies a whole line (without its newline).
pub fn classify(line: &str) -> Line {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if rest.trim().is_empty() {
        return Line::Blank;
    }
    if indent >= 4 {
        return Line::Text { text: indent };
    }
    if let Some(f) = fence(rest) {
        return f;
    }
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    let after = &rest[hashes..];
    if (1..=6).contains(&hashes) && (after.is_empty() || after.starts_with([' ', '\t'])) {
        let text = indent + hashes + (after.len() - after.trim_start().len());
        return Line::Heading {
            level: hashes,
            text,
        };
    }
    if is_rule(rest) {
        return Line::Rule;
    }
    if rest.starts_with('>') {
        let mut depth = 0;
        let mut quoted = rest;
        while let Some(inner) = quoted.strip_prefix('>') {
            depth += 1;
            quoted = inner.trim_start_matches(' ');
        }
        let text = line.len() - quoted.len();
        return Line::Quote { depth, text };
    }
    if let Some(marker) = item_marker(rest) {
        let after = &rest[marker.len()..];
        let text = indent + marker.len() + (after.len() - after.trim_start().len());
        return Line::Item {
            indent,
            marker,
            text,
        };
    }
    if rest.starts_with('|') {
        return Line::Row;
    }
    Line::Text { text: indent }
}

/// Classifies the start of a line still arriving: `None` while it could still become another
/// kind. Fences and table rows always wait for the whole line.
pub fn classify_partial(partial: &str) -> Option<Line> {
    let rest = partial.trim_start_matches(' ');
    let first = rest.chars().next()?;
    if partial.len() - rest.len() >= 4 {
        return Some(classify(partial));
    }
    let decided = match first {
        '`' | '~' | '|' => false,
        '#' | '>' | '-' | '*' | '+' | '_' | '=' | '0'..='9' => {
            // Decided once something other than the marker characters follows.
            rest.chars().any(|c| !"#>-*+_=0123456789.) ".contains(c))
        }
        _ => true,
    };
    if !decided {
        return None;
    }
    match classify(partial) {
        Line::Rule | Line::Fence { .. } | Line::Row | Line::Blank => None,
        l => Some(l),
    }
}

fn fence(rest: &str) -> Option<Line> {
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = rest[len..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some(Line::Fence {
        ch,
        len,
        info: info.split_whitespace().next().unwrap_or("").to_string(),
    })
}

/// Whether `line` closes a fence opened with `ch` × `len`.
pub fn closes(line: &str, ch: char, len: usize) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    indent < 4
        && rest.chars().take_while(|c| *c == ch).count() >= len
        && rest.trim_start_matches(ch).trim().is_empty()
}

/// A setext underline: `===` (level 1) or `---` (level 2), indented by less than four.
pub fn setext_level(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let t = line.trim();
    if indent >= 4 || t.is_empty() {
        return None;
    }
    if t.chars().all(|c| c == '=') {
        Some(1)
    } else if t.chars().all(|c| c == '-') {
        Some(2)
    } else {
        None
    }
}

fn is_rule(rest: &str) -> bool {
    let t: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|m| t.chars().all(|c| c.to_string() == *m))
}

fn item_marker(rest: &str) -> Option<String> {
    let first = rest.chars().next()?;
    let marker_len = if matches!(first, '-' | '*' | '+') {
        1
    } else {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 || digits > 9 || !matches!(rest[digits..].chars().next(), Some('.' | ')')) {
            return None;
        }
        digits + 1
    };
    let after = &rest[marker_len..];
    (after.is_empty() || after.starts_with(' ')).then(|| rest[..marker_len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_kinds() {
        assert_eq!(classify(""), Line::Blank);
        assert_eq!(classify("## Title"), Line::Heading { level: 2, text: 3 });
        assert_eq!(classify("#hashtag"), Line::Text { text: 0 });
        assert_eq!(
            classify("```rust"),
            Line::Fence {
                ch: '`',
                len: 3,
                info: "rust".into()
            }
        );
        assert_eq!(classify("> > deep"), Line::Quote { depth: 2, text: 4 });
        assert_eq!(
            classify("  - item"),
            Line::Item {
                indent: 2,
                marker: "-".into(),
                text: 4
            }
        );
        assert_eq!(
            classify("10. ten"),
            Line::Item {
                indent: 0,
                marker: "10.".into(),
                text: 4
            }
        );
        assert_eq!(classify("---"), Line::Rule);
        assert_eq!(classify("| a | b |"), Line::Row);
        assert_eq!(classify("**bold** start"), Line::Text { text: 0 });
        assert_eq!(classify("1999 was a year"), Line::Text { text: 0 });
    }

    #[test]
    fn fences_close_with_at_least_as_many_markers() {
        assert!(closes("```", '`', 3));
        assert!(closes("````  ", '`', 3));
        assert!(!closes("``", '`', 3));
        assert!(!closes("```rust", '`', 3));
    }

    #[test]
    fn partial_lines_wait_until_their_kind_is_known() {
        assert_eq!(classify_partial("Hel"), Some(Line::Text { text: 0 }));
        assert_eq!(classify_partial("#"), None);
        assert_eq!(
            classify_partial("## Ti"),
            Some(Line::Heading { level: 2, text: 3 })
        );
        assert_eq!(classify_partial("-"), None);
        assert_eq!(classify_partial("``"), None);
        assert_eq!(classify_partial("| a"), None);
        assert_eq!(classify_partial("**bo"), Some(Line::Text { text: 0 }));
    }
}
