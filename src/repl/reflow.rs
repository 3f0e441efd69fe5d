//! Redrawing the prompt after a resize on a terminal that re-wraps its lines (tmux, VTE, kitty,
//! iTerm2, …). rustyline clears as many rows as the line took at the *old* width, counted from the
//! cursor; such a terminal has already re-wrapped the line to the new width, so the rows differ:
//! narrowed, a copy of the prompt line was left on screen; widened, the clearing reached above the
//! prompt and erased lines of the answer. So the typed line is drawn with hard line breaks where
//! the terminal would wrap it ([`hard_rows`]): a terminal never joins those, so widening keeps the
//! rows rustyline counts, and narrowing splits each row in a way [`correction`] can count to move
//! the cursor to the true start of the prompt and clear below (pure).

/// Whether the terminal re-wraps lines on resize. xterm and the Linux console do not; nearly all
/// others do.
pub fn terminal_reflows(term: &str, xterm_version: Option<&str>) -> bool {
    xterm_version.is_none() && term != "linux"
}

/// The typed line with a hard line break (`\r\n`) where the terminal would wrap it, `width`
/// columns a row, the prompt taking `prompt_width` of the first. A terminal re-wraps soft-wrapped
/// rows on a resize but keeps hard ones: widened, the line keeps its rows, so rustyline's
/// clearing (which counts rows at the old width) stays on them instead of erasing lines of the
/// answer above; narrowed, each row splits in a way [`correction`] can count. `None`: nothing to
/// break (it fits, or an entry of several lines keeps rustyline's own drawing). Pure.
pub fn hard_rows(prompt_width: usize, line: &str, width: usize) -> Option<String> {
    if width == 0 || line.contains('\n') {
        return None;
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut col = prompt_width % width;
    let mut broke = false;
    for ch in line.chars() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if col + w > width {
            out.push_str("\r\n");
            col = 0;
            broke = true;
        }
        out.push(ch);
        col += w;
    }
    broke.then_some(out)
}

/// What to write before the prompt: rows to move (up when the line now takes more rows) and a
/// clear to the end of the screen. `cursor` is the cursor's column counted from the start of the
/// prompt at the last draw (its rows broken hard, see [`hard_rows`]); `None` when nothing needs
/// doing.
pub fn correction(cursor: usize, old_width: usize, new_width: usize) -> Option<String> {
    if old_width == 0 || new_width == 0 || old_width == new_width {
        return None;
    }
    let old_row = cursor / old_width;
    // Widened, hard rows stay as they were; narrowed, each full row splits into as many rows as
    // it now needs, and the cursor's row up to the cursor likewise.
    let new_row = if new_width > old_width {
        old_row
    } else {
        old_row * old_width.div_ceil(new_width) + (cursor % old_width) / new_width
    };
    let moves = match new_row.cmp(&old_row) {
        std::cmp::Ordering::Greater => format!("\x1b[{}A", new_row - old_row),
        std::cmp::Ordering::Less => format!("\x1b[{}B", old_row - new_row),
        std::cmp::Ordering::Equal => String::new(),
    };
    Some(format!("{moves}\r\x1b[J"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_to_the_start_of_the_rewrapped_line() {
        // 70 columns of prompt and text: one row at 80, two at 50.
        assert_eq!(correction(70, 80, 50).unwrap(), "\x1b[1A\r\x1b[J");
        assert_eq!(correction(20, 80, 50).unwrap(), "\r\x1b[J");
        assert_eq!(correction(20, 80, 80), None);
        // 91 columns in hard rows of 40 (40, 40, 11): at 30 columns each full row takes two,
        // the cursor's row one more; widened, the rows stay.
        assert_eq!(correction(91, 40, 30).unwrap(), "\x1b[2A\r\x1b[J");
        assert_eq!(correction(91, 40, 100).unwrap(), "\r\x1b[J");
    }

    #[test]
    fn rows_break_hard_where_the_terminal_would_wrap() {
        assert_eq!(hard_rows(2, "abcdef", 4).unwrap(), "ab\r\ncdef");
        // A row filled to the edge breaks before the next character, not after the last.
        assert_eq!(hard_rows(0, "abcd", 4), None);
        assert_eq!(hard_rows(0, "abcde", 4).unwrap(), "abcd\r\ne");
        // A wide character that does not fit goes to the next row whole.
        assert_eq!(hard_rows(0, "abc\u{4e2d}", 4).unwrap(), "abc\r\n\u{4e2d}");
        assert_eq!(hard_rows(0, "a\nb", 1), None);
    }

    #[test]
    fn xterm_and_the_console_do_not_reflow() {
        assert!(terminal_reflows("tmux-256color", None));
        assert!(!terminal_reflows("xterm", Some("XTerm(390)")));
        assert!(!terminal_reflows("linux", None));
    }
}
