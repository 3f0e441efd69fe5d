//! Styles of rendered text and their SGR form. Only skillpipe writes these escapes: the text they
//! wrap has been sanitized before it gets here.

use super::Options;

/// How a piece of rendered text looks. `Default` is plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub dim: bool,
    pub strike: bool,
    pub fg: Option<Color>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// One of the 16 basic colours (30–37).
    Basic(u8),
    Rgb(u8, u8, u8),
}

impl Style {
    /// [`Style::default`], for constants.
    pub const PLAIN: Style = Style {
        bold: false,
        italic: false,
        underline: false,
        dim: false,
        strike: false,
        fg: None,
    };

    pub fn is_plain(&self) -> bool {
        *self == Style::PLAIN
    }

    /// Appends `text` in this style; plain when `color` is off or the style is plain.
    pub fn paint(&self, text: &str, color: Options, out: &mut String) {
        if text.is_empty() {
            return;
        }
        if !color.color || self.is_plain() {
            out.push_str(text);
            return;
        }
        let attributes = [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.strike, "9"),
        ];
        let on = attributes.into_iter().filter(|(on, _)| *on);
        let mut codes: Vec<String> = on.map(|(_, code)| code.to_string()).collect();
        match self.fg {
            Some(Color::Basic(n)) => codes.push(format!("{}", 30 + n)),
            Some(Color::Rgb(r, g, b)) if color.truecolor => codes.push(format!("38;2;{r};{g};{b}")),
            Some(Color::Rgb(r, g, b)) => codes.push(format!("38;5;{}", ansi256(r, g, b))),
            None => {}
        }
        out.push_str("\x1b[");
        out.push_str(&codes.join(";"));
        out.push('m');
        out.push_str(text);
        out.push_str("\x1b[0m");
    }
}

/// The nearest colour of the 6×6×6 cube of the 256-colour palette.
fn ansi256(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    16 + 36 * level(r) + 6 * level(g) + level(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgb_falls_back_to_the_256_palette() {
        assert_eq!(ansi256(0, 0, 0), 16);
        assert_eq!(ansi256(255, 255, 255), 231);
    }
}
