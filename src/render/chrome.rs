//! skillpipe's own text on a terminal (help, listings, status lines, warnings), wrapped at word
//! boundaries as answers are ([`super::wrap_plain`], the answers' word wrapper), so the
//! terminal never breaks a word where its row ends. Pure: text and a width in, text out.

use unicode_width::UnicodeWidthStr;

/// `text` wrapped line by line to `width` columns. A line that fits is kept as it is (its
/// spacing too). One that does not wraps at spaces with a hanging indent: under the second
/// column when the line is laid out in two (`/save [NAME]  save the …`: a gap of two spaces
/// within its first half), else two columns past its own indent (`· `, `skillpipe: `). A word
/// wider than a whole line (a path, a URL) is broken only where the line ends. Every line of the
/// result ends with `\n`.
pub fn wrap_text(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        let line = line.trim_end();
        if line.width() <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let (first, body) = line.split_at(second_column(line, indent, width).unwrap_or(indent));
        let hang = match first.len() > indent {
            true => first.width(),
            false => indent + 2,
        };
        out.push_str(&super::wrap_plain(body, width, first, &" ".repeat(hang)));
    }
    out
}

/// Where a two-column line's second column starts: after the first gap of two or more spaces
/// that follows the indent, if that is within the first half of the width.
fn second_column(line: &str, indent: usize, width: usize) -> Option<usize> {
    let rest = &line[indent..];
    let gap = rest.find("  ")?;
    let after = gap + rest[gap..].len() - rest[gap..].trim_start().len();
    let at = indent + after;
    (gap > 0 && line[..at].width() <= width / 2).then_some(at)
}

/// What labels a side effect's output (`--show-side-effects`) on the status line above it.
pub const SIDE_OUTPUT_LABEL: &str = "side effect output:";

/// The gutter before each line of a side effect's output: its own mark (`┆`, ASCII `:`), never
/// the quote bar (`│`) an answer's block quote gets, so a script's output cannot pass for the
/// model's words, with colour or without.
pub fn side_output_gutter(unicode: bool) -> &'static str {
    if unicode { "  ┆ " } else { "  : " }
}

/// A line of a side effect's output as rows of at most `width` columns after the gutter (the
/// gutter itself left out, for the caller to paint): every row gets one, as a row the terminal
/// wrapped would not.
pub fn side_output_rows(line: &str, width: usize, unicode: bool) -> Vec<String> {
    let gutter = side_output_gutter(unicode);
    wrap_text(&format!("{gutter}{line}"), width)
        .lines()
        .map(|row| {
            row.strip_prefix(gutter)
                .unwrap_or(row.trim_start())
                .to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_fit_keep_their_spacing() {
        let help = "Commands\n  /help              this help\n";
        assert_eq!(wrap_text(help, 80), help);
    }

    #[test]
    fn status_lines_and_warnings_hang_two_columns_in_and_break_no_word() {
        let status =
            "· failed: %{scripts/say.sh \"mariposa\"}: exit 69: say.sh: no speech engine found";
        let wrapped = wrap_text(status, 30);
        for row in wrapped.lines() {
            assert!(row.width() <= 30, "{wrapped}");
        }
        assert!(
            wrapped.contains("\n  \"mariposa\"}: exit 69:\n"),
            "{wrapped}"
        );
        // Every word is whole: joining the rows gives the line back.
        let joined: Vec<&str> = wrapped.split_whitespace().collect();
        assert_eq!(joined, status.split_whitespace().collect::<Vec<_>>());
        let warn = "skillpipe: warning: the session's agent cannot be loaded";
        assert_eq!(
            wrap_text(warn, 30),
            "skillpipe: warning: the\n  session's agent cannot be\n  loaded\n"
        );
    }

    #[test]
    fn a_path_wider_than_the_line_is_broken_only_at_the_line_end() {
        let path = "/home/someone/.local/state/skillpipe/sessions/work.json";
        let wrapped = wrap_text(&format!("saved to {path} — resume"), 30);
        let rows: Vec<&str> = wrapped.lines().collect();
        // It starts on a row of its own and fills every row it needs.
        assert_eq!(rows[0], "saved to");
        assert!(rows.iter().all(|r| r.width() <= 30), "{wrapped}");
        assert_eq!(rows[1].width(), 30, "{wrapped}");
        let pieces: String = rows[1..].iter().map(|r| r.trim()).collect();
        assert!(pieces.starts_with(path), "{wrapped}");
    }

    #[test]
    fn side_output_has_its_own_gutter() {
        assert_eq!(side_output_gutter(true), "  ┆ ");
        assert_eq!(side_output_gutter(false), "  : ");
        assert!(!side_output_gutter(true).contains('│'));
        assert_eq!(
            side_output_rows("no speech engine found anywhere", 20, true),
            ["no speech engine", "found anywhere"]
        );
    }
}
