//! How the REPL's text is drawn: the tone it is painted in and the columns it takes. The
//! screen and its tape both need these; neither owns them.

/// SGR styles used by the REPL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// As it is: a note from below the REPL.
    Plain,
    Dim,
    /// Dim and in the warning colour: a status line about a problem.
    DimWarn,
    Warn,
    Error,
    Bold,
    /// The gutter of a side effect's output.
    Output,
    /// The REPL's prompt.
    Prompt,
}

/// `text` in `tone` when `on`; plain otherwise.
pub fn paint(text: &str, tone: Tone, on: bool) -> String {
    if !on {
        return text.to_string();
    }
    use crossterm::style::Stylize;
    match tone {
        Tone::Plain => text.to_string(),
        Tone::Dim => text.dim().to_string(),
        Tone::DimWarn => text.dim().yellow().to_string(),
        Tone::Warn => text.yellow().to_string(),
        Tone::Error => text.red().bold().to_string(),
        Tone::Bold => text.bold().to_string(),
        Tone::Output => text.magenta().to_string(),
        Tone::Prompt => text.green().bold().to_string(),
    }
}

/// The column after writing `bytes` from column `col`, in display columns (a wide character
/// takes two), so the spinner knows whether the row is full. `split` keeps the first bytes of
/// a character the write cut off; it is counted once complete.
pub fn advance_column(mut col: usize, split: &mut Vec<u8>, bytes: &[u8]) -> usize {
    // Inside one of the renderer's own SGR sequences (`ESC [ … m`), which take no column.
    let mut csi = false;
    for &b in bytes {
        if csi {
            csi = !(0x40..=0x7e).contains(&b) || b == b'[';
            continue;
        }
        if b >= 0x80 {
            if b >= 0xC0 && !split.is_empty() {
                // A new character before the last was complete: that one took a column.
                split.clear();
                col += 1;
            }
            split.push(b);
            if let Ok(s) = std::str::from_utf8(split) {
                col += unicode_width::UnicodeWidthStr::width(s);
                split.clear();
            } else if split.len() >= 4 {
                split.clear();
                col += 1;
            }
            continue;
        }
        if !split.is_empty() {
            split.clear();
            col += 1;
        }
        match b {
            0x1b => csi = true,
            b'\n' | b'\r' => col = 0,
            b'\t' => col = (col / 8 + 1) * 8,
            b if b < 0x20 || b == 0x7f => {}
            _ => col += 1,
        }
    }
    col
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_display_width_and_reset_on_newline() {
        let col = |c, b: &[u8]| advance_column(c, &mut Vec::new(), b);
        assert_eq!(col(0, b"abc"), 3);
        assert_eq!(col(5, b"x\ny"), 1);
        assert_eq!(col(0, "héllo".as_bytes()), 5);
        // Wide characters take two columns.
        assert_eq!(col(0, "中文 🎉".as_bytes()), 7);
        // A character split across two writes counts once, when complete.
        let mut split = Vec::new();
        for s in ["é", "中", "🎉"] {
            let b = s.as_bytes();
            let first = advance_column(0, &mut split, &b[..1]);
            assert_eq!(first, 0);
            let w = unicode_width::UnicodeWidthStr::width(s);
            assert_eq!(advance_column(first, &mut split, &b[1..]), w, "{s}");
        }
        // A broken sequence still takes a column.
        assert_eq!(col(0, b"\xe4a"), 2);
        assert_eq!(col(3, b"\t"), 8);
        assert_eq!(col(4, b"\x1b"), 4);
        assert_eq!(col(0, b"\x1b[1;33mab\x1b[0m"), 2);
    }
}
