//! The one way a skill's, script's or tool's description is shortened (the prompt's catalog,
//! MCP tool descriptions, listings): whole sentences where they fit, else whole words, and an
//! ellipsis where text was left out. Counted in characters, so no UTF-8 character is split.

/// `text` in at most `max` characters. A cut ends at the last sentence end that keeps at least
/// half the room (then ` …`), else at the last word (then `…`); a single word longer than the
/// room is cut inside.
pub fn excerpt(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    if max < 2 {
        return "…".chars().take(max).collect();
    }
    // The byte end of the first `max - 1` characters: room for the ellipsis.
    let room = text
        .char_indices()
        .nth(max - 1)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..room];
    let ends_sentence = |i: usize| {
        let next = text[i + 1..].chars().next();
        next.is_none_or(char::is_whitespace)
    };
    // A sentence end followed by a space inside `max - 2` characters leaves room for ` …`.
    let sentence = head
        .char_indices()
        .filter(|&(i, c)| matches!(c, '.' | '!' | '?') && ends_sentence(i))
        .map(|(i, _)| i + 1)
        .rfind(|&end| head[..end].chars().count() < max - 1)
        .filter(|&end| head[..end].chars().count() * 2 >= max);
    if let Some(end) = sentence {
        return format!("{} …", &text[..end]);
    }
    // A word boundary: the last whitespace in the head (the next character counts too: the
    // head may end just before a space).
    let word = match text[room..].chars().next() {
        Some(c) if c.is_whitespace() => Some(room),
        _ => head.rfind(char::is_whitespace),
    };
    let kept = match word {
        Some(i) => head[..i].trim_end_matches(|c: char| c.is_whitespace() || ",;:-—".contains(c)),
        None => head,
    };
    let kept = if kept.is_empty() { head } else { kept };
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(excerpt("Two words.", 10), "Two words.");
        assert_eq!(excerpt("", 5), "");
    }

    #[test]
    fn a_cut_ends_at_a_sentence_when_one_fits() {
        let t = "Convert every sheet to CSV. Formulas use the cached values stored.";
        let e = excerpt(t, 40);
        assert_eq!(e, "Convert every sheet to CSV. …");
        assert!(e.chars().count() <= 40);
        // A version number is not a sentence end.
        let e = excerpt("Uses format v1.2 and more words after it here", 20);
        assert_eq!(e, "Uses format v1.2…");
    }

    #[test]
    fn else_at_a_word_never_inside_one() {
        let t = "Dates are written in ISO form and numbers without thousands separators";
        let e = excerpt(t, 60);
        assert_eq!(
            e,
            "Dates are written in ISO form and numbers without thousands…"
        );
        assert!(e.chars().count() <= 60);
        // A sentence end too early (under half the room) is not taken.
        let e = excerpt("Hi. Then a long run of words without any stop at all", 30);
        assert_eq!(e, "Hi. Then a long run of words…");
        // Trailing punctuation of the cut is dropped.
        assert_eq!(excerpt("alpha, beta, gamma delta", 14), "alpha, beta…");
        // The head ends right before a space: the whole last word stays.
        assert_eq!(excerpt("abc def ghi", 8), "abc def…");
    }

    #[test]
    fn multibyte_text_is_cut_between_characters() {
        let t = "Überprüft Größen — ééééé ééééé ééééé ééééé";
        for max in 1..t.chars().count() {
            let e = excerpt(t, max);
            assert!(e.chars().count() <= max, "{max}: {e}");
            assert!(e.ends_with('…'), "{max}: {e}");
        }
        assert_eq!(excerpt("日本語のテキストです", 5), "日本語の…");
    }
}
