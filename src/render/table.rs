//! Markdown tables (GFM pipes): laid out in aligned columns once the whole table has arrived.

use super::inline;
use super::style::{Color24, Style};
use super::wrap::{Flow, Prefix, Span, width_of};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

/// The cells of a row: split at unescaped `|`, outer pipes dropped, trimmed.
fn cells(row: &str) -> Vec<String> {
    let t = row.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = if t.ends_with('|') && !t.ends_with("\\|") {
        &t[..t.len() - 1]
    } else {
        t
    };
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in t.chars() {
        match c {
            '|' if !escaped => out.push(String::new()),
            _ => {
                if let Some(last) = out.last_mut() {
                    if escaped && c != '|' {
                        last.push('\\');
                    }
                    if c != '\\' || escaped {
                        last.push(c);
                    }
                }
            }
        }
        escaped = c == '\\' && !escaped;
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

fn delimiter(cells: &[String]) -> Option<Vec<Align>> {
    cells
        .iter()
        .map(|c| {
            let core = c.trim_matches(':');
            if core.is_empty() || !core.chars().all(|x| x == '-') {
                return None;
            }
            Some(match (c.starts_with(':'), c.ends_with(':')) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// Renders the rows of a table; `None` when the second row is no delimiter row (then the lines
/// were not a table and are shown as text).
pub fn render(rows: &[String], width: usize, color: Color24, unicode: bool) -> Option<String> {
    let header = cells(rows.first()?);
    let aligns = delimiter(&cells(rows.get(1)?))?;
    let n = header.len().max(aligns.len());
    let mut body: Vec<Vec<Vec<Span>>> = Vec::new();
    let bold = Style {
        bold: true,
        ..Style::default()
    };
    let row_spans = |cells: Vec<String>, base: Style| -> Vec<Vec<Span>> {
        let mut r: Vec<Vec<Span>> = cells.iter().map(|c| inline::spans(c, base)).collect();
        r.resize(n, Vec::new());
        r.truncate(n);
        r
    };
    body.push(row_spans(header, bold));
    for row in &rows[2..] {
        body.push(row_spans(cells(row), Style::default()));
    }
    let widths: Vec<usize> = (0..n)
        .map(|i| body.iter().map(|r| width_of(&r[i])).max().unwrap_or(0))
        .collect();
    let (bar, dash, cross) = if unicode {
        ("│", "─", "┼")
    } else {
        ("|", "-", "+")
    };
    let dim = Style {
        dim: true,
        ..Style::default()
    };
    let mut out = String::new();
    let total: usize = widths.iter().sum::<usize>() + 3 * n.saturating_sub(1);
    if total > width {
        // Too wide for aligned columns: one wrapped line per row, cells apart by bars.
        for row in body {
            let mut spans = Vec::new();
            for (i, cell) in row.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::new(format!(" {bar} "), dim));
                }
                spans.extend(cell);
            }
            let mut flow = Flow::new(Prefix::default());
            flow.push(&spans, width, color, &mut out);
            flow.close(width, color, &mut out);
        }
        return Some(out);
    }
    for (r, row) in body.into_iter().enumerate() {
        for (i, cell) in row.into_iter().enumerate() {
            if i > 0 {
                dim.paint(&format!(" {bar} "), color, &mut out);
            }
            let pad = widths[i] - width_of(&cell);
            let (left, right) = match aligns.get(i).copied().unwrap_or(Align::Left) {
                Align::Left => (0, pad),
                Align::Right => (pad, 0),
                Align::Center => (pad / 2, pad - pad / 2),
            };
            out.push_str(&" ".repeat(left));
            for s in &cell {
                s.style.paint(&s.text, color, &mut out);
            }
            if i + 1 < n {
                out.push_str(&" ".repeat(right));
            }
        }
        out.push('\n');
        if r == 0 {
            let line: Vec<String> = widths.iter().map(|w| dash.repeat(*w)).collect();
            dim.paint(&line.join(&format!("{dash}{cross}{dash}")), color, &mut out);
            out.push('\n');
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn columns_line_up() {
        let t = rows("| name | n |\n|---|--:|\n| apple | 3 |\n| fig | 12 |");
        let out = render(&t, 80, Color24::default(), true).unwrap();
        assert_eq!(out, "name  │  n\n──────┼───\napple │  3\nfig   │ 12\n");
    }

    #[test]
    fn not_a_table_without_a_delimiter_row() {
        assert!(render(&rows("| a |\n| b |"), 80, Color24::default(), true).is_none());
    }

    #[test]
    fn too_wide_tables_become_wrapped_rows() {
        let t = rows("| a | b |\n|---|---|\n| one two three | four five |");
        let out = render(&t, 12, Color24::default(), false).unwrap();
        assert!(out.lines().all(|l| l.chars().count() <= 12), "{out}");
        assert!(out.contains("one two"));
    }

    #[test]
    fn escaped_pipes_stay_in_their_cell() {
        assert_eq!(cells("| a \\| b | c |"), ["a | b", "c"]);
    }
}
