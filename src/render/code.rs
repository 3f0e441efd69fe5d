//! Syntax highlighting of fenced code, line by line as it streams (syntect). The grammars and
//! themes load on a thread of their own when a coloured display starts ([`warm_up`]), while the
//! request is on its way to the model, so neither start-up nor the first block waits for them.

use super::style::{Color, Style};
use super::wrap::Span;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> &'static Theme {
    static THEME: OnceLock<Theme> = OnceLock::new();
    THEME.get_or_init(|| {
        let mut set = ThemeSet::load_defaults();
        set.themes.remove("base16-ocean.dark").unwrap_or_default()
    })
}

/// Loads the grammars and the theme in the background; a block that needs them before they
/// are ready waits for the load in progress (a `OnceLock` runs it once).
pub fn warm_up() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("syntax-load".into())
            .spawn(|| {
                syntaxes();
                theme();
            });
    });
}

/// Highlights one fenced block; `None` for a language it does not know (plain code then).
pub struct Highlighter {
    lines: HighlightLines<'static>,
}

impl Highlighter {
    pub fn for_language(lang: &str) -> Option<Highlighter> {
        let lang = lang.trim();
        if lang.is_empty() {
            return None;
        }
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_token(lang)
            .or_else(|| set.find_syntax_by_extension(lang))?;
        Some(Highlighter {
            lines: HighlightLines::new(syntax, theme()),
        })
    }

    /// Spans for one line of code (without its newline); plain if the grammar fails on it.
    pub fn line(&mut self, line: &str) -> Vec<Span> {
        let with_newline = format!("{line}\n");
        match self.lines.highlight_line(&with_newline, syntaxes()) {
            Ok(ranges) => ranges
                .into_iter()
                .map(|(st, text)| {
                    let c = st.foreground;
                    Span::new(
                        text.trim_end_matches('\n'),
                        Style {
                            fg: Some(Color::Rgb(c.r, c.g, c.b)),
                            ..Style::default()
                        },
                    )
                })
                .filter(|s| !s.text.is_empty())
                .collect(),
            Err(_) => vec![Span::new(line, Style::default())],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_colours_unknown_ones_none() {
        let mut h = Highlighter::for_language("rust").expect("rust is a default syntax");
        let spans = h.line("fn main() {}");
        let text: String = spans.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(text, "fn main() {}");
        let colours: std::collections::HashSet<_> = spans.iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "one colour for a whole line: {spans:?}");
        assert!(Highlighter::for_language("no-such-language").is_none());
        assert!(Highlighter::for_language("").is_none());
    }
}
