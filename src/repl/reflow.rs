//! Redrawing the prompt after a resize on a terminal that re-wraps its lines (tmux, VTE, kitty,
//! iTerm2, …). rustyline clears as many rows as the line took at the *old* width; such a terminal
//! has already re-wrapped it to the new width, so the rows differ and a copy of the prompt line was
//! left on screen (or a line of the answer above it was erased). The fix moves the cursor from where
//! rustyline's clearing leaves it to the true start of the prompt and clears below (pure).

/// Whether the terminal re-wraps lines on resize. xterm and the Linux console do not; nearly all
/// others do.
pub fn terminal_reflows(term: &str, xterm_version: Option<&str>) -> bool {
    xterm_version.is_none() && term != "linux"
}

/// What to write before the prompt: rows to move (up when the line now takes more rows) and a
/// clear to the end of the screen. `cursor` is the cursor's column counted from the start of the
/// prompt at the last draw; `None` when nothing needs doing.
pub fn correction(cursor: usize, old_width: usize, new_width: usize) -> Option<String> {
    if old_width == 0 || new_width == 0 || old_width == new_width {
        return None;
    }
    let old_row = cursor / old_width;
    let new_row = cursor / new_width;
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
        assert_eq!(correction(70, 50, 80).unwrap(), "\x1b[1B\r\x1b[J");
        assert_eq!(correction(20, 80, 50).unwrap(), "\r\x1b[J");
        assert_eq!(correction(20, 80, 80), None);
    }

    #[test]
    fn xterm_and_the_console_do_not_reflow() {
        assert!(terminal_reflows("tmux-256color", None));
        assert!(!terminal_reflows("xterm", Some("XTerm(390)")));
        assert!(!terminal_reflows("linux", None));
    }
}
