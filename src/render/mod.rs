//! Markdown answers rendered for a terminal as they stream (DESIGN §8): headings, emphasis,
//! lists, block quotes, tables and fenced code with syntax highlighting, wrapped at word
//! boundaries to the width given with each piece. Line breaks inside a paragraph are kept, as a
//! chat reader expects (a model's single newlines are meant), and long lines wrap.
//!
//! Pure: bytes in, styled text out; the caller writes it and says how wide the window is, so a
//! resize applies from the next word on (what is on screen stays as it was drawn).
//!
//! Streaming: a paragraph's words go out as soon as they are complete and their emphasis or code
//! markers are closed; a line whose kind is not yet known (`#`, `-`, a fence, a table row) waits
//! for its end; a table waits for its last row, since its columns depend on every row.
//!
//! Every byte of the answer passes [`crate::term::Sanitizer`] first: the only escapes in the
//! output are the renderer's own styles. A quote is drawn with a bar (`│`), never as `> `, so it
//! cannot be taken for the REPL prompt.

mod block;
mod chrome;
mod code;
mod display;
mod inline;
mod style;
mod table;
mod wrap;

use crate::term::Sanitizer;
use block::Line;
pub use chrome::{HeldOutput, wrap_text};
pub use display::Display;
use style::{Color, Style};
use wrap::{Flow, Prefix, Span};

/// `text` (plain, one paragraph) wrapped at word boundaries to `width` columns, the first line
/// after `first`, the others after `rest` (a hanging indent). Every line ends with `\n`; a word
/// longer than a line is broken. Pure.
pub fn wrap_plain(text: &str, width: usize, first: &str, rest: &str) -> String {
    let plain = |s: &str| vec![Span::new(s, Style::default())];
    let prefix = Prefix {
        first: plain(first),
        rest: plain(rest),
    };
    let width = width.max(first.len().max(rest.len()) + 8);
    Flow::block(&plain(text), prefix, width, Options::default())
}

/// How the output may look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// SGR styles and colours (off under `NO_COLOR`).
    pub color: bool,
    /// The terminal takes 24-bit colour (`COLORTERM=truecolor`).
    pub truecolor: bool,
    /// Box-drawing characters and bullets; ASCII otherwise.
    pub unicode: bool,
}

impl Options {
    /// From the environment, for a stdout that is a terminal with colour `color`.
    pub fn detect(color: bool, unicode: bool) -> Options {
        let ct = std::env::var("COLORTERM").unwrap_or_default();
        Options {
            color,
            truecolor: ct == "truecolor" || ct == "24bit",
            unicode,
        }
    }
}

/// What the open paragraph belongs to, so a following line knows whether it continues it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Ctx {
    #[default]
    None,
    Para,
    Quote(usize),
    Item,
}

/// The streaming renderer of one answer.
#[derive(Default)]
pub struct Renderer {
    opts: Options,
    san: Sanitizer,
    /// The current source line so far (sanitized).
    partial: String,
    /// Bytes of `partial` already rendered.
    done: usize,
    /// The kind of `partial`, once its start has been rendered.
    started: Option<Line>,
    ctx: Ctx,
    flow: Flow,
    /// Inside a fence: its marker and the highlighter for its language.
    fence: Option<(char, usize, Option<code::Highlighter>)>,
    table: Vec<String>,
    /// The last line written was blank (blank lines are not doubled).
    blank: bool,
    wrote: bool,
    /// Inside a list (since an item, until a line at the margin): a line indented by four is
    /// the item's text there, not an indented code block.
    in_list: bool,
    /// The newline that ends the last paragraph line is owed, at this offset of the output
    /// being built: held back so that a setext underline (`===`, `---`) on the next line can
    /// still turn that line into a heading with a carriage return (no cursor movement).
    owed_newline: Option<usize>,
    /// The text of a paragraph that is one source line on one screen row, its newline owed:
    /// what a setext underline would make a heading of.
    setext: Option<String>,
    /// Inline text of the open paragraph not yet drawn, its lines joined by `\n`: it leaves an
    /// emphasis open (`**bold across`), whose closer may come on the paragraph's next line. It
    /// goes out with the line that closes it, or as written when the paragraph ends, after
    /// [`MAX_HELD_LINES`] lines, or when the text so far must be shown ([`Renderer::release`]).
    held: Option<String>,
}

/// The most source lines an open emphasis holds back waiting for its closer: a stray marker
/// must not hold a whole paragraph.
const MAX_HELD_LINES: usize = 4;

const DIM: Style = Style {
    dim: true,
    ..Style::PLAIN
};

impl Renderer {
    /// Inside a fenced code block: a status line written now would land among its lines.
    pub fn in_code_block(&self) -> bool {
        self.fence.is_some()
    }

    pub fn new(opts: Options) -> Renderer {
        Renderer {
            opts,
            ..Renderer::default()
        }
    }

    /// Renders what `bytes` completes; the rest waits for more (or [`Renderer::finish`]).
    pub fn push(&mut self, bytes: &[u8], width: usize) -> String {
        let mut clean = Vec::with_capacity(bytes.len());
        self.san.push(bytes, &mut clean);
        let text = String::from_utf8_lossy(&clean).into_owned();
        self.emit(width, |r, width, out| {
            let mut pieces = text.split('\n').peekable();
            while let Some(piece) = pieces.next() {
                r.partial.push_str(piece.trim_end_matches('\r'));
                if pieces.peek().is_some() {
                    r.end_line(width, out);
                }
            }
            r.shown_early(width, out, false);
        })
    }

    /// Output built by `render` at `width`: an owed newline is paid once something follows it.
    fn emit(&mut self, width: usize, render: impl FnOnce(&mut Self, usize, &mut String)) -> String {
        let mut out = String::new();
        self.owed_newline = self.owed_newline.map(|_| 0);
        render(self, width.max(10), &mut out);
        self.settle(&mut out);
        self.wrote |= !out.is_empty();
        out
    }

    /// The last line break written was a wrap inside a block (the row was full), not the end
    /// of a source line: what waits for the answer's line to end keeps waiting.
    pub fn last_break_soft(&self) -> bool {
        self.flow.last_break_soft()
    }

    /// The newline owed after a paragraph's first line, now (empty when none is owed): for a
    /// caller about to write something else on the terminal (a status line), which must start on
    /// a line of its own. That line can then no longer become a setext heading.
    pub fn end_open_line(&mut self) -> String {
        self.setext = None;
        match self.owed_newline.take() {
            Some(_) => "\n".into(),
            None => String::new(),
        }
    }

    /// The screen ended the row the answer was on (a confirmation prompt went under it): the
    /// paragraph goes on from the start of a fresh row, wrapped from there.
    pub fn row_ended_elsewhere(&mut self) {
        self.setext = None;
        self.flow.row_ended_elsewhere();
    }

    /// Whether the newline ending the last line written is held back.
    pub fn owes_newline(&self) -> bool {
        self.owed_newline.is_some()
    }

    /// Pays the owed newline once something follows it in `out`.
    fn settle(&mut self, out: &mut String) {
        if let Some(at) = self.owed_newline
            && out.len() > at
        {
            out.insert(at, '\n');
            self.owed_newline = None;
            self.setext = None;
        }
    }

    /// Renders whatever is left at the end of the answer.
    pub fn finish(&mut self, width: usize) -> String {
        let mut clean = Vec::new();
        self.san.finish(&mut clean);
        self.partial.push_str(&String::from_utf8_lossy(&clean));
        self.emit(width, |r, width, out| {
            if !r.partial.is_empty() || r.started.is_some() {
                r.end_line(width, out);
            }
            r.flush_table(width, out);
            r.close(width, out);
            if let Some(at) = r.owed_newline.take() {
                out.insert(at, '\n');
            }
        })
    }

    fn close(&mut self, width: usize, out: &mut String) {
        self.release_held(width, out);
        self.flow.close(width, self.opts, out);
        self.ctx = Ctx::None;
    }

    /// Draws the held lines as written (their emphasis never closed), each on its own line.
    fn release_held(&mut self, width: usize, out: &mut String) {
        if let Some(text) = self.held.take() {
            self.push_lines(&text, Style::default(), width, out);
            self.flow.break_line(width, self.opts, out);
        }
    }

    /// Inline text of one or more source lines (joined by `\n`) into the open block, parsed as
    /// one; a line break between them is kept. The last line stays open.
    fn push_lines(&mut self, text: &str, base: Style, width: usize, out: &mut String) {
        let lines = inline::lines_marked(text, base, !self.opts.color);
        let last = lines.len().saturating_sub(1);
        for (i, spans) in lines.into_iter().enumerate() {
            self.flow.push(&spans, width, self.opts, out);
            if i < last {
                self.flow.break_line(width, self.opts, out);
            }
        }
    }

    /// Shows the line still arriving as it stands, markers waiting for their closer as written:
    /// something is about to be drawn below it (a confirmation prompt) and the user must see
    /// the text that led there. Code blocks and tables keep their whole lines.
    pub fn release(&mut self, width: usize) -> String {
        self.emit(width, |r, width, out| {
            r.release_held(width, out);
            r.shown_early(width, out, true);
        })
    }

    /// Renders the start of a line still arriving, and its complete words; with `all`, also
    /// what Markdown markers still hold back.
    fn shown_early(&mut self, width: usize, out: &mut String, all: bool) {
        if self.fence.is_some() || !self.table.is_empty() || self.partial.is_empty() {
            return;
        }
        if self.started.is_none() {
            let Some(kind) = block::classify_partial(&self.partial) else {
                return;
            };
            if self.indented_code(&kind) {
                return;
            }
            let partial = std::mem::take(&mut self.partial);
            self.done = self.start(&kind, &partial, width, out);
            self.partial = partial;
            self.started = Some(kind);
        }
        let pending = &self.partial[self.done..];
        let (piece, tail) = pending.split_at(pending.rfind(' ').unwrap_or(0));
        if let Some(held) = &self.held {
            // The line may close what the held lines opened: they go out together once it has.
            let joined = format!("{held}\n{piece}");
            if piece.is_empty() || inline::open_emphasis(&joined) || !inline::balanced(&joined) {
                return;
            }
            self.held = None;
            self.done += piece.len();
            self.push_lines(&joined, self.base(), width, out);
            self.flow.end_word(width, self.opts, out);
            return;
        }
        if !piece.is_empty() {
            if !all && !inline::balanced(piece) {
                return;
            }
            let spans = self.spans(piece, self.base());
            self.flow.push(&spans, width, self.opts, out);
            // The piece ends where a space follows: its last word is complete.
            self.flow.end_word(width, self.opts, out);
            self.done += piece.len();
        }
        // The word still arriving shows at once when no Markdown marker could change it.
        if !tail.trim().is_empty() && (all || inline::plain(tail)) {
            let spans = self.spans(tail, self.base());
            self.flow.push(&spans, width, self.opts, out);
            self.flow.show_partial(width, self.opts, out);
            self.done += tail.len();
        }
    }

    /// A piece's spans; without colour its emphasis and code keep their markers as text.
    fn spans(&self, text: &str, base: Style) -> Vec<wrap::Span> {
        inline::spans_marked(text, base, !self.opts.color)
    }

    /// The style a line's text starts from (a heading is bold).
    fn base(&self) -> Style {
        self.started.as_ref().map(heading_of).unwrap_or_default()
    }

    /// A whole source line has arrived.
    fn end_line(&mut self, width: usize, out: &mut String) {
        let line = std::mem::take(&mut self.partial);
        let done = std::mem::take(&mut self.done);
        let (kind, at) = match self.started.take() {
            Some(kind) => (kind, done),
            None => {
                if self.fence.is_some() {
                    self.code_line(&line, out);
                    return;
                }
                let kind = block::classify(&line);
                if let Some(level) = block::setext_level(&line)
                    && self.setext.is_some()
                    && self.owed_newline == Some(out.len())
                {
                    self.setext_heading(level, width, out);
                    return;
                }
                if self.indented_code(&kind) {
                    self.close(width, out);
                    inline::CODE.paint(&line, self.opts, out);
                    out.push('\n');
                    self.blank = false;
                    return;
                }
                if !self.table.is_empty() {
                    if kind == Line::Row {
                        self.table.push(line);
                        return;
                    }
                    self.flush_table(width, out);
                }
                let at = self.start(&kind, &line, width, out);
                match kind {
                    Line::Row => {
                        self.table.push(line);
                        return;
                    }
                    Line::Blank | Line::Fence { .. } | Line::Rule => return,
                    _ => (kind, at),
                }
            }
        };
        let rest = line.get(at..).unwrap_or("");
        if let Line::Heading { .. } = kind {
            let title = rest.trim_end().trim_end_matches('#').trim_end();
            let spans = self.spans(title, heading_of(&kind));
            self.flow.push(&spans, width, self.opts, out);
            return self.close(width, out);
        }
        let text = match self.held.take() {
            Some(held) => format!("{held}\n{rest}"),
            None => rest.to_string(),
        };
        // An emphasis left open waits for the paragraph's next line (CommonMark lets it
        // close there); nothing of this line is drawn yet.
        if inline::open_emphasis(&text) && text.matches('\n').count() + 1 < MAX_HELD_LINES {
            self.held = Some(text);
            self.setext = None;
            return;
        }
        self.push_lines(&text, Style::default(), width, out);
        self.flow.end_word(width, self.opts, out);
        if let Line::Text { text } = kind
            && self.ctx == Ctx::Para
            && self.flow.rows() == 1
        {
            // The paragraph's first line, on one row: its newline is owed, in case the next
            // line underlines it as a heading.
            let mut end = String::new();
            self.flow.break_line(width, self.opts, &mut end);
            out.push_str(end.strip_suffix('\n').unwrap_or(&end));
            self.settle(out);
            self.owed_newline = Some(out.len());
            self.setext = Some(line.get(text..).unwrap_or("").to_string());
        } else {
            // A model's line breaks are meant (verse, addresses, steps): kept, not re-flowed.
            self.flow.break_line(width, self.opts, out);
        }
    }

    /// `Title` then `=====` (or `---`): the title's row, still the cursor's, is drawn again as
    /// a heading after a carriage return (the heading is at least as wide: same text, or `# `
    /// before it without colour).
    fn setext_heading(&mut self, level: usize, width: usize, out: &mut String) {
        let text = self.setext.take().unwrap_or_default();
        self.owed_newline = None;
        self.ctx = Ctx::None;
        self.flow = Flow::default();
        out.push('\r');
        let kind = Line::Heading { level, text: 0 };
        self.start(&kind, "", width, out);
        let spans = inline::spans(text.trim(), heading_style(level));
        self.flow.push(&spans, width, self.opts, out);
        self.close(width, out);
    }

    /// An indented line (four spaces) that starts a block outside a list: code, kept verbatim.
    fn indented_code(&self, kind: &Line) -> bool {
        matches!(kind, Line::Text { text } if *text >= 4) && self.ctx == Ctx::None && !self.in_list
    }

    fn code_line(&mut self, line: &str, out: &mut String) {
        let Some((ch, len, hl)) = &mut self.fence else {
            return;
        };
        if block::closes(line, *ch, *len) {
            DIM.paint(line.trim(), self.opts, out);
            self.fence = None;
        } else {
            match hl {
                Some(h) => {
                    for s in h.line(line) {
                        s.style.paint(&s.text, self.opts, out);
                    }
                }
                None => out.push_str(line),
            }
        }
        out.push('\n');
        self.blank = false;
    }

    /// Starts the block `kind` begins (closing the open one unless it continues it); returns
    /// where the line's inline text starts.
    fn start(&mut self, kind: &Line, line: &str, width: usize, out: &mut String) -> usize {
        if *kind != Line::Blank {
            self.blank = false;
        }
        match kind {
            Line::Item { .. } => self.in_list = true,
            Line::Blank => {}
            // An indented paragraph after an item is that item's text.
            Line::Text { text } if *text >= 2 || self.ctx != Ctx::None => {}
            _ => self.in_list = false,
        }
        match kind {
            Line::Blank => {
                self.close(width, out);
                if (self.wrote || !out.is_empty()) && !self.blank {
                    out.push('\n');
                }
                self.blank = true;
                0
            }
            Line::Fence { ch, len, info } => {
                self.close(width, out);
                DIM.paint(line.trim(), self.opts, out);
                out.push('\n');
                let hl = if self.opts.color {
                    code::Highlighter::for_language(info)
                } else {
                    None
                };
                self.fence = Some((*ch, *len, hl));
                0
            }
            Line::Rule => {
                self.close(width, out);
                let dash = if self.opts.unicode { "─" } else { "-" };
                DIM.paint(&dash.repeat(width.min(60)), self.opts, out);
                out.push('\n');
                0
            }
            Line::Row => {
                self.close(width, out);
                0
            }
            Line::Heading { level, text } => {
                self.close(width, out);
                // Without colour the markers stay: they are all that shows it is a heading.
                let prefix = if self.opts.color {
                    Vec::new()
                } else {
                    vec![Span::new(
                        format!("{} ", "#".repeat(*level)),
                        Style::default(),
                    )]
                };
                self.flow = Flow::new(Prefix::same(prefix));
                *text
            }
            Line::Quote { depth, text } => {
                if self.ctx != Ctx::Quote(*depth) {
                    self.close(width, out);
                    let bar = if self.opts.unicode { "│ " } else { "| " };
                    let bars = vec![Span::new(bar.repeat(*depth), DIM)];
                    self.flow = Flow::new(Prefix::same(bars));
                    self.ctx = Ctx::Quote(*depth);
                }
                *text
            }
            Line::Item {
                indent,
                marker,
                text,
            } => {
                self.close(width, out);
                let bullet = match marker.as_str() {
                    "-" | "*" | "+" if self.opts.unicode => "•",
                    "-" | "*" | "+" => "*",
                    m => m,
                };
                let lead = " ".repeat((*indent).min(12));
                let first = format!("{lead}{bullet} ");
                let rest = " ".repeat(unicode_width::UnicodeWidthStr::width(first.as_str()));
                let mark = Style {
                    fg: Some(Color::Basic(6)),
                    ..Style::default()
                };
                self.flow = Flow::new(Prefix {
                    first: vec![
                        Span::new(lead, Style::default()),
                        Span::new(format!("{bullet} "), mark),
                    ],
                    rest: vec![Span::new(rest, Style::default())],
                });
                self.ctx = Ctx::Item;
                *text
            }
            Line::Text { text } => {
                if self.ctx == Ctx::None {
                    self.close(width, out);
                    let lead = " ".repeat((*text).min(8));
                    self.flow = Flow::new(Prefix::same(vec![Span::new(lead, Style::default())]));
                    self.ctx = Ctx::Para;
                }
                *text
            }
        }
    }

    fn flush_table(&mut self, width: usize, out: &mut String) {
        if self.table.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.table);
        match table::render(&rows, width, self.opts) {
            Some(text) => out.push_str(&text),
            None => {
                for row in rows {
                    let spans = inline::spans(&row, Style::default());
                    out.push_str(&Flow::block(&spans, Prefix::default(), width, self.opts));
                }
            }
        }
        self.blank = false;
    }
}

/// The base style of a line's text: headings bold, the first two levels in colour too.
fn heading_of(kind: &Line) -> Style {
    match kind {
        Line::Heading { level, .. } => heading_style(*level),
        _ => Style::default(),
    }
}

fn heading_style(level: usize) -> Style {
    Style {
        bold: true,
        underline: level == 1,
        fg: (level <= 2).then_some(Color::Basic(5)),
        ..Style::default()
    }
}

#[cfg(test)]
mod tests;
