//! Inline Markdown (emphasis, strong, code spans, links, strike-through) of one piece of a block's
//! text → styled spans, parsed with pulldown-cmark.

use super::style::{Color, Style};
use super::wrap::Span;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

pub const CODE: Style = Style {
    fg: Some(Color::Basic(3)),
    ..Style::PLAIN
};

/// Styled spans for `text`, on top of `base` (a heading's or a quote's style). Leading and
/// trailing spaces are kept as spans so that word breaks between pieces survive.
pub fn spans(text: &str, base: Style) -> Vec<Span> {
    spans_marked(text, base, false)
}

/// [`spans`]; with `marked`, emphasis, strong, strike-through and code keep their markers as
/// text (`*it*`, `**b**`, `~~s~~`, `` `c` ``): without colour (`NO_COLOR`) no style can show
/// them, and the words alone would lose what the writer stressed.
pub fn spans_marked(text: &str, base: Style, marked: bool) -> Vec<Span> {
    let mut out = parse(text, base, marked);
    for s in out.iter_mut().filter(|s| s.text == LINE_BREAK) {
        s.text = " ".to_string();
    }
    out
}

/// [`spans_marked`] of text that spans several source lines of one paragraph (an emphasis
/// opened on one line and closed on a later one): parsed as one, its spans split where the
/// source's lines end, since the model's line breaks are kept.
pub fn lines_marked(text: &str, base: Style, marked: bool) -> Vec<Vec<Span>> {
    let mut lines = vec![Vec::new()];
    for span in parse(text, base, marked) {
        match span.text == LINE_BREAK {
            true => lines.push(Vec::new()),
            false => lines.last_mut().expect("never empty").push(span),
        }
    }
    lines
}

/// What a line break inside the parsed text becomes before [`spans_marked`] or
/// [`lines_marked`] decides (no text event holds a newline: they are made spaces).
const LINE_BREAK: &str = "\n";

fn parse(text: &str, base: Style, marked: bool) -> Vec<Span> {
    let mut out = Vec::new();
    let body = text.trim_matches(' ');
    if body.is_empty() {
        if !text.is_empty() {
            out.push(Span::new(" ", base));
        }
        return out;
    }
    if text.starts_with(' ') {
        out.push(Span::new(" ", base));
    }
    let mut style = base;
    let mut depth = Depth::default();
    let mut link: Option<String> = None;
    let mut link_text = String::new();
    let source = escape_block_start(body);
    let parser = Parser::new_ext(&source, Options::ENABLE_STRIKETHROUGH);
    for event in parser {
        // Emphasis, strong, strike-through: one depth each, and (`marked`) the marker as text,
        // styled as the text around it.
        if let Some((kind, opens)) = emphasis_of(&event) {
            let kind = kind as usize;
            if !opens {
                depth.emphasis[kind] = depth.emphasis[kind].saturating_sub(1);
            }
            if marked {
                out.push(Span::new(MARKERS[kind], depth.apply(base)));
            }
            if opens {
                depth.emphasis[kind] += 1;
            }
            continue;
        }
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => {
                depth.link += 1;
                link = Some(dest_url.to_string());
                link_text.clear();
            }
            Event::End(TagEnd::Link) => {
                depth.link = depth.link.saturating_sub(1);
                if let Some(url) = link.take()
                    && !url.is_empty()
                    && url != link_text
                {
                    let dim = Style { dim: true, ..base };
                    out.push(Span::new(format!(" ({url})"), dim));
                }
            }
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => {
                style = depth.apply(base);
                if link.is_some() {
                    link_text.push_str(&t);
                }
                out.push(Span::new(t.replace('\n', " "), style));
            }
            Event::Code(t) => {
                let code = Style {
                    bold: base.bold,
                    ..CODE
                };
                let fence = if marked {
                    "`".repeat(t.split(|c| c != '`').map(str::len).max().unwrap_or(0) + 1)
                } else {
                    String::new()
                };
                out.push(Span::new(format!("{fence}{t}{fence}"), code));
            }
            Event::SoftBreak | Event::HardBreak => out.push(Span::new(LINE_BREAK, style)),
            _ => {}
        }
    }
    if text.ends_with(' ') {
        out.push(Span::new(" ", base));
    }
    out
}

/// The inline styles a pair of markers opens and closes.
#[derive(Clone, Copy)]
enum Emphasis {
    Italic,
    Bold,
    Strike,
}

/// The markers of each [`Emphasis`], in its order.
const MARKERS: [&str; 3] = ["*", "**", "~~"];

/// The style `event` opens (`true`) or closes, if it is one of [`Emphasis`].
fn emphasis_of(event: &Event) -> Option<(Emphasis, bool)> {
    match event {
        Event::Start(Tag::Emphasis) => Some((Emphasis::Italic, true)),
        Event::End(TagEnd::Emphasis) => Some((Emphasis::Italic, false)),
        Event::Start(Tag::Strong) => Some((Emphasis::Bold, true)),
        Event::End(TagEnd::Strong) => Some((Emphasis::Bold, false)),
        Event::Start(Tag::Strikethrough) => Some((Emphasis::Strike, true)),
        Event::End(TagEnd::Strikethrough) => Some((Emphasis::Strike, false)),
        _ => None,
    }
}

/// How many of each [`Emphasis`] (by its order) and of links are open.
#[derive(Default)]
struct Depth {
    emphasis: [usize; 3],
    link: usize,
}

impl Depth {
    fn apply(&self, base: Style) -> Style {
        let on = |e: Emphasis| self.emphasis[e as usize] > 0;
        Style {
            bold: base.bold || on(Emphasis::Bold),
            italic: base.italic || on(Emphasis::Italic),
            strike: base.strike || on(Emphasis::Strike),
            underline: base.underline || self.link > 0,
            ..base
        }
    }
}

/// The piece is inline text of a block already recognised: a leading `#`, `>`, `-`, `1.`, … must
/// not start a heading, quote or list of its own.
fn escape_block_start(text: &str) -> String {
    let mut chars = text.chars();
    let first = chars.next().unwrap_or(' ');
    let second = chars.next();
    let rule = text.chars().filter(|c| !c.is_whitespace()).count() >= 3
        && text.chars().all(|c| c.is_whitespace() || c == first)
        && matches!(first, '-' | '*' | '_');
    let escape = rule
        || matches!(first, '#' | '>' | '-')
        || (matches!(first, '*' | '+') && second.is_none_or(|c| c == ' '))
        || text.starts_with("```")
        || text.starts_with("~~~");
    if escape {
        return format!("\\{text}");
    }
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && matches!(text[digits..].chars().next(), Some('.' | ')')) {
        return format!("{}\\{}", &text[..digits], &text[digits..]);
    }
    text.to_string()
}

/// Whether `text` holds nothing Markdown could style: it may be shown before its word ends.
pub fn plain(text: &str) -> bool {
    !text.contains(|c: char| "*_`~[]()<>!\\&#|=+-".contains(c) || c.is_ascii_digit())
}

/// Whether `text` can be rendered now without cutting an emphasis, code span or link in two:
/// its markers are balanced. A conservative guess; when in doubt the text waits for more.
/// Inside a closed code span nothing is a marker (`` `365*24` `` holds no emphasis).
pub fn balanced(text: &str) -> bool {
    without_code_spans(text).is_some_and(|rest| markers_balanced(&rest))
}

/// `text` with its code spans (a run of N backticks up to the next run of exactly N) left out;
/// `None` when a span is still open.
fn without_code_spans(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|c| *c == '`').count();
        let mut after = &rest[at + run..];
        loop {
            let close = after.find('`')?;
            let len = after[close..].chars().take_while(|c| *c == '`').count();
            after = &after[close + len..];
            if len == run {
                break;
            }
        }
        rest = after;
    }
    out.push_str(rest);
    Some(out)
}

/// Whether `text` (inline text of a paragraph, up to a line end) leaves an emphasis, strong or
/// strike-through open: a delimiter run that may open (CommonMark's left-flanking rule; `_`
/// not inside a word) with no run after it that may close it. Such text waits for the next
/// line of its paragraph, where the closer may come (`**bold across\nlines**`). A lone `*`
/// between spaces (`5 * 3`) opens nothing. Code spans are left out; an open one opens nothing.
pub fn open_emphasis(text: &str) -> bool {
    let Some(text) = without_code_spans(text) else {
        return false;
    };
    let chars: Vec<char> = text.chars().collect();
    let mut open: Vec<char> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            i += 2;
            continue;
        }
        if !matches!(c, '*' | '_' | '~') {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i] == c {
            i += 1;
        }
        let before = start.checked_sub(1).map(|b| chars[b]);
        let after = chars.get(i).copied();
        let space = |x: Option<char>| x.is_none_or(char::is_whitespace);
        let punct = |x: Option<char>| x.is_some_and(|x| x.is_ascii_punctuation());
        let left = !space(after) && (!punct(after) || space(before) || punct(before));
        let right = !space(before) && (!punct(before) || space(after) || punct(after));
        let (opens, closes) = match c {
            '_' => (
                left && (!right || punct(before)),
                right && (!left || punct(after)),
            ),
            _ => (left, right),
        };
        if closes && let Some(at) = open.iter().rposition(|o| *o == c) {
            open.truncate(at);
        } else if opens {
            open.push(c);
        }
    }
    !open.is_empty()
}

fn markers_balanced(text: &str) -> bool {
    let count = |c: char| text.chars().filter(|x| *x == c).count();
    // Runs of a marker character: `**` opens once, `**b**` opens and closes.
    let runs = |c: char| text.split(|x| x != c).filter(|run| !run.is_empty()).count();
    let opening_underscores = text
        .char_indices()
        .filter(|(i, c)| *c == '_' && (*i == 0 || text[..*i].ends_with([' ', '(', '*'])))
        .count();
    runs('*') % 2 == 0
        && runs('~') % 2 == 0
        && opening_underscores == 0
        && count('[') == count(']')
        && count('(') == count(')')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(spans: &[Span]) -> String {
        spans.iter().map(|s| s.text.as_str()).collect()
    }

    #[test]
    fn without_colour_the_markers_stay() {
        let s = spans_marked(
            "a **bold** and *it* `x` ~~s~~ ``a`b``",
            Style::default(),
            true,
        );
        assert_eq!(shown(&s), "a **bold** and *it* `x` ~~s~~ ``a`b``");
    }

    #[test]
    fn emphasis_strong_and_code_lose_their_markers_block_markers_and_links_stay_text() {
        for (text, want) in [
            ("a **bold** and *it* `x`", "a bold and it x"),
            ("# not a heading", "# not a heading"),
            ("1. not a list", "1. not a list"),
            ("> no quote", "> no quote"),
            ("see [docs](https://x.y/z)", "see docs (https://x.y/z)"),
            // Spaces at the edges are kept.
            (" a ", " a "),
        ] {
            assert_eq!(shown(&spans(text, Style::default())), want);
        }
        let s = spans("a **bold** and *it* `x`", Style::default());
        assert!(s.iter().any(|s| s.text == "bold" && s.style.bold));
        assert!(s.iter().any(|s| s.text == "it" && s.style.italic));
        assert!(s.iter().any(|s| s.text == "x" && s.style == CODE));
    }

    #[test]
    fn an_emphasis_left_open_at_a_line_end_is_found() {
        assert!(open_emphasis("**bold across"));
        assert!(open_emphasis("some *it"));
        assert!(open_emphasis("a ~~gone"));
        assert!(open_emphasis("an _emph"));
        assert!(!open_emphasis("**bold across\nlines** ok"));
        assert!(!open_emphasis("5 * 3 = 15"));
        assert!(!open_emphasis("snake_case_name"));
        assert!(!open_emphasis("a **b** c"));
        assert!(!open_emphasis("`open *span"));
        assert!(!open_emphasis("`a *b` c"));
        assert!(!open_emphasis("\\*not"));
        assert!(open_emphasis("**a *b** c"));
    }

    #[test]
    fn text_across_lines_is_parsed_as_one_and_split_at_the_line_ends() {
        let lines = lines_marked("**bold across\nlines** ok", Style::default(), false);
        assert_eq!(lines.len(), 2);
        assert_eq!(shown(&lines[0]), "bold across");
        assert_eq!(shown(&lines[1]), "lines ok");
        assert!(lines[0].iter().all(|s| s.style.bold));
        assert!(lines[1].iter().any(|s| s.text == "lines" && s.style.bold));
        assert!(
            lines[1]
                .iter()
                .any(|s| s.text.contains("ok") && !s.style.bold)
        );
        let marked = lines_marked("**bold across\nlines** ok", Style::default(), true);
        assert_eq!(shown(&marked[0]), "**bold across");
        assert_eq!(shown(&marked[1]), "lines** ok");
    }

    /// A guess: markers are balanced; inside a code span nothing is a marker.
    #[test]
    fn balance_guesses() {
        for (text, balanced_) in [
            ("I will compute `365*24` for you", true),
            ("``a ` b*`` and *c*", true),
            ("a *b* [c](d)", true),
            ("a **b** c", true),
            ("snake_case_name", true),
            ("`open *span", false),
            ("``a` b``` *c", false),
            ("a *b", false),
            ("a **b", false),
            ("a `code", false),
            ("an _emph", false),
            ("[link](http", false),
        ] {
            assert_eq!(balanced(text), balanced_, "{text}");
        }
    }
}
