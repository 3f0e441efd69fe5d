//! Markdown tables (GFM pipes): laid out in aligned columns once the whole table has arrived.

use super::Options;
use super::inline;
use super::style::Style;
use super::wrap::{Flow, Prefix, Span, width_of};
use pulldown_cmark::{Alignment, Event, Parser, Tag};
use unicode_width::UnicodeWidthStr;

/// The alignments and every row's cells as written (trimmed, `\|` a pipe), read as GFM
/// does; `None` when the rows are no table (the second is no delimiter row matching the first).
fn parse(rows: &[String]) -> Option<(Vec<Alignment>, Vec<Vec<String>>)> {
    let text = rows.join("\n");
    let (mut aligns, mut cells) = (None, Vec::<Vec<String>>::new());
    for (event, at) in
        Parser::new_ext(&text, pulldown_cmark::Options::ENABLE_TABLES).into_offset_iter()
    {
        match event {
            Event::Start(Tag::Table(a)) => aligns = Some(a),
            Event::Start(Tag::TableHead | Tag::TableRow) => cells.push(Vec::new()),
            Event::Start(Tag::TableCell) => {
                let cell = text[at].trim().replace("\\|", "|");
                cells.last_mut()?.push(cell);
            }
            _ => {}
        }
    }
    Some((aligns?, cells))
}

/// Renders the rows of a table; `None` when they are no table (then they are shown as text).
pub fn render(rows: &[String], width: usize, color: Options) -> Option<String> {
    let (aligns, cells) = parse(rows)?;
    let n = aligns.len();
    // The header in bold; without colour the markers stay, as in a paragraph: no style could
    // show them.
    let body: Vec<Vec<Vec<Span>>> = (cells.iter().enumerate())
        .map(|(r, row)| {
            let base = Style {
                bold: r == 0,
                ..Style::default()
            };
            let cell = |c: &String| inline::spans_marked(c, base, !color.color);
            row.iter().map(cell).collect()
        })
        .collect();
    let widths: Vec<usize> = (0..n)
        .map(|i| body.iter().map(|r| width_of(&r[i])).max().unwrap_or(0))
        .collect();
    let (bar, dash, cross) = if color.unicode {
        ("│", "─", "┼")
    } else {
        ("|", "-", "+")
    };
    let dim = super::DIM;
    let mut out = String::new();
    let gaps = 3 * n.saturating_sub(1);
    let longest_word: Vec<usize> = (0..n)
        .map(|i| {
            body.iter()
                .flat_map(|r| r[i].iter())
                .flat_map(|s| s.text.split(' '))
                .map(UnicodeWidthStr::width)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let Some(widths) = fit(&widths, &longest_word, width.saturating_sub(gaps)) else {
        // Too narrow even for narrow columns: one wrapped line per row, cells apart by bars.
        for row in body {
            let mut spans = Vec::new();
            for (i, cell) in row.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::new(format!(" {bar} "), dim));
                }
                spans.extend(cell);
            }
            out.push_str(&Flow::block(&spans, Prefix::default(), width, color));
        }
        return Some(out);
    };
    for (r, row) in body.into_iter().enumerate() {
        // Each cell wrapped to its column; the row is as tall as its tallest cell.
        let cells: Vec<Vec<(String, usize)>> = (row.iter().zip(&widths))
            .map(|(cell, w)| wrap_cell(cell, *w, color))
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for line in 0..height {
            for (i, cell) in cells.iter().enumerate() {
                let (text, used) = cell.get(line).map_or(("", 0), |(t, w)| (t.as_str(), *w));
                // The last cell empty on this line: the bar ends the line, nothing after it.
                let end = i + 1 == n && text.is_empty();
                if i > 0 {
                    let gap = format!(" {bar} ");
                    dim.paint(if end { gap.trim_end() } else { &gap }, color, &mut out);
                }
                if end {
                    break;
                }
                let pad = widths[i].saturating_sub(used);
                let (left, right) = match aligns[i] {
                    Alignment::Right => (pad, 0),
                    Alignment::Center => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                out.push_str(&" ".repeat(left));
                out.push_str(text);
                if i + 1 < n {
                    out.push_str(&" ".repeat(right));
                }
            }
            out.push('\n');
        }
        if r == 0 {
            let line: Vec<String> = widths.iter().map(|w| dash.repeat(*w)).collect();
            dim.paint(&line.join(&format!("{dash}{cross}{dash}")), color, &mut out);
            out.push('\n');
        }
    }
    Some(out)
}

/// Narrowest a column is squeezed to before the table gives up on columns: a short word fits.
const MIN_COLUMN: usize = 6;

/// Column widths that fit in `room`: the natural ones when they fit; else narrow columns keep
/// their width and the room left is shared among the wide ones in proportion to their text,
/// none narrower than its longest word where all of those fit (a word is cut only when they
/// do not). `None` when even `MIN_COLUMN` per column does not fit.
fn fit(natural: &[usize], longest_word: &[usize], room: usize) -> Option<Vec<usize>> {
    if natural.iter().sum::<usize>() <= room {
        return Some(natural.to_vec());
    }
    let hard: Vec<usize> = natural.iter().map(|w| (*w).clamp(1, MIN_COLUMN)).collect();
    if hard.iter().sum::<usize>() > room {
        return None;
    }
    let soft: Vec<usize> = (0..natural.len())
        .map(|i| hard[i].max(longest_word[i].min(natural[i])))
        .collect();
    let floor = match soft.iter().sum::<usize>() <= room {
        true => soft,
        false => hard,
    };
    // Columns no wider than their fair share keep their width; the rest share what is left.
    let mut fixed = vec![false; natural.len()];
    loop {
        let left = room
            - (0..natural.len())
                .filter(|i| fixed[*i])
                .map(|i| natural[i])
                .sum::<usize>();
        let open: Vec<usize> = (0..natural.len()).filter(|i| !fixed[*i]).collect();
        let share = left / open.len().max(1);
        let narrow: Vec<usize> = open
            .iter()
            .copied()
            .filter(|i| natural[*i] <= share)
            .collect();
        if narrow.is_empty() {
            let weight: usize = open.iter().map(|i| natural[*i]).sum::<usize>().max(1);
            let mut out: Vec<usize> = (0..natural.len())
                .map(|i| {
                    if fixed[i] {
                        natural[i]
                    } else {
                        (natural[i] * left / weight).max(floor[i])
                    }
                })
                .collect();
            // Rounding (and floors) can overshoot or leave room: take it from the columns with
            // the most above their floor, or give it to the widest.
            let mut total: usize = out.iter().sum();
            while total > room {
                let i = (0..out.len())
                    .filter(|i| out[*i] > floor[*i])
                    .max_by_key(|i| out[*i] - floor[*i])?;
                out[i] -= 1;
                total -= 1;
            }
            let widest = open.iter().copied().max_by_key(|i| out[*i])?;
            out[widest] += room - total;
            return Some(out);
        }
        for i in narrow {
            fixed[i] = true;
        }
    }
}

/// A cell wrapped at words to `width` columns (a longer word cut, as a paragraph's is): each
/// line painted, with the columns it takes.
fn wrap_cell(cell: &[Span], width: usize, color: Options) -> Vec<(String, usize)> {
    let flowed = |opts| Flow::block(cell, Prefix::default(), width, opts);
    let plain = flowed(Options {
        color: false,
        ..color
    });
    let painted = flowed(color);
    let lines = painted.lines().zip(plain.lines());
    lines
        .map(|(line, text)| (line.to_string(), text.width()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::tests::PLAIN as UNICODE;

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn columns_line_up() {
        let t = rows("| name | n |\n|---|--:|\n| apple | 3 |\n| fig | 12 |");
        let out = render(&t, 80, UNICODE).unwrap();
        assert_eq!(out, "name  │  n\n──────┼───\napple │  3\nfig   │ 12\n");
    }

    /// Under `NO_COLOR` a cell keeps its Markdown markers, as a paragraph does.
    #[test]
    fn without_colour_cells_keep_their_markers() {
        let t = rows("| a |\n|---|\n| **b** `c` *e* |");
        let out = render(&t, 80, Options::default()).unwrap();
        assert!(out.contains("**b** `c` *e*"), "{out}");
        let on = Options {
            color: true,
            ..Options::default()
        };
        assert!(!render(&t, 80, on).unwrap().contains("**b**"));
    }

    #[test]
    fn not_a_table_without_a_delimiter_row() {
        assert!(render(&rows("| a |\n| b |"), 80, UNICODE).is_none());
        // As GFM: the delimiter row has as many cells as the header, or there is no table.
        assert!(render(&rows("| a | b |\n|---|\n| 1 | 2 |"), 80, UNICODE).is_none());
    }

    #[test]
    fn too_wide_tables_wrap_cells_in_their_columns() {
        let t = rows(
            "| word | meaning |\n|---|---|\n| ubiquitous | present, appearing, or found everywhere |\n| tea | a drink |",
        );
        let out = render(&t, 30, Options::default()).unwrap();
        assert!(out.lines().all(|l| l.chars().count() <= 30), "{out}");
        // Every line has its bar in the same column: the columns still line up.
        let bars: Vec<usize> = out
            .lines()
            .filter(|l| !l.starts_with('-'))
            .map(|l| l.find('|').unwrap())
            .collect();
        assert!(bars.windows(2).all(|w| w[0] == w[1]), "{out}");
        assert!(
            out.lines().count() > 4,
            "the long meaning takes several lines: {out}"
        );
        assert!(
            out.lines().all(|l| !l.ends_with(' ')),
            "no trailing blanks: {out}"
        );
        // No word is lost or cut while it fits.
        for w in [
            "present,",
            "appearing,",
            "everywhere",
            "ubiquitous",
            "drink",
        ] {
            assert!(out.contains(w), "{w}: {out}");
        }
    }

    #[test]
    fn column_widths_fit_the_room() {
        assert_eq!(fit(&[4, 10], &[4, 5], 20), Some(vec![4, 10]));
        let w = fit(&[10, 39], &[10, 8], 27).unwrap();
        assert_eq!(w.iter().sum::<usize>(), 27);
        assert_eq!(w[0], 10, "a column within its share keeps its width");
        assert_eq!(fit(&[30, 30, 30], &[5, 5, 5], 12), None);
        // No column is cut below its longest word while those all fit.
        let w = fit(&[8, 30, 30], &[8, 9, 6], 36).unwrap();
        assert_eq!(w.iter().sum::<usize>(), 36);
        assert!(w[0] >= 8 && w[1] >= 9, "{w:?}");
    }

    #[test]
    fn too_narrow_tables_become_wrapped_rows() {
        let t = rows("| a | b |\n|---|---|\n| one two three | four five |");
        let out = render(&t, 12, Options::default()).unwrap();
        assert!(out.lines().all(|l| l.chars().count() <= 12), "{out}");
        assert!(out.contains("one two"));
    }

    #[test]
    fn escaped_pipes_stay_in_their_cell() {
        let (_, cells) = parse(&rows("| a \\| b | c |\n|---|---|\n| `x\\|y` | d |")).unwrap();
        assert_eq!(cells, [["a | b", "c"], ["`x|y`", "d"]]);
    }
}
