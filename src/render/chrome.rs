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
const SIDE_OUTPUT_LABEL: &str = "side effect output:";

/// A side effect's output (made inert), held for the status line of the report that follows
/// it, which then says what it is: the one layout of the one-shot chat's and the REPL's.
#[derive(Debug, Default)]
pub struct HeldOutput(Option<String>);

impl HeldOutput {
    pub fn hold(&mut self, text: &str) {
        self.0.get_or_insert_default().push_str(text);
    }

    /// `status`, labelled when output is held, and that output's lines under it in rows of at
    /// most `width` columns. Each row starts with the output's own gutter (`┆`, ASCII `:`;
    /// `paint` styles it), never the quote bar (`│`) an answer's block quote gets, so a
    /// script's output cannot pass for the model's words, with colour or without; every row
    /// gets one, as a row the terminal wrapped would not.
    pub fn under(
        &mut self,
        status: &str,
        width: usize,
        unicode: bool,
        paint: impl Fn(&str) -> String,
    ) -> (String, Vec<String>) {
        let Some(output) = self.0.take() else {
            return (status.to_string(), Vec::new());
        };
        let gutter = if unicode { "  ┆ " } else { "  : " };
        let painted = paint(gutter);
        let lines: String = output.lines().map(|l| format!("{gutter}{l}\n")).collect();
        let rows = (wrap_text(&lines, width).lines())
            .map(|row| {
                // A blank line of output is its gutter alone, which wrapping trimmed.
                let body = row
                    .strip_prefix(gutter)
                    .or(row.strip_prefix(gutter.trim_end()));
                format!("{painted}{}", body.unwrap_or(row.trim_start()))
            })
            .collect();
        (format!("{status} — {SIDE_OUTPUT_LABEL}"), rows)
    }
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
    fn side_output_has_its_own_gutter_and_labels_its_status_line() {
        for (unicode, rows) in [
            (true, ["  ┆ no speech engine", "  ┆ found anywhere", "  ┆ "]),
            (
                false,
                ["  : no speech engine", "  : found anywhere", "  : "],
            ),
        ] {
            let mut held = HeldOutput::default();
            held.hold("no speech engine ");
            held.hold("found anywhere\n\n");
            let (status, got) = held.under("ran x", 20, unicode, str::to_string);
            assert_eq!(status, "ran x — side effect output:");
            assert_eq!(got, rows);
        }
    }
}
