//! How the prompt shows text it did not write (a command's words, the input, the working
//! directory, paths): controls escaped, and shortened where whole it would push the prompt off
//! the screen — a long run of blanks becomes one marker that says how many, a very long piece
//! keeps its start and its end around a marker that says how much is not shown. Every marker is
//! in `⟨…⟩`, its words joined by no-break spaces so that the prompt's line breaking keeps it
//! whole, and nothing is hidden silently. Pure.

use crate::command::{escape_controls, quote_word};

/// Blanks in a row beyond this many are shown as one marker (indentation stays as it is).
const BLANK_RUN: usize = 16;

/// How much of long text is shown: the prompt tries less and less until it fits the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Detail {
    /// Most columns one word (or one line of detail) takes; longer ones are cut in the middle.
    pub piece: usize,
    /// Most words of a command shown; the ones between are counted in a marker.
    pub words: usize,
}

impl Detail {
    /// Everything (long blank runs still folded): where no window limits the text.
    pub(crate) const ALL: Detail = Detail::STEPS[0];

    /// From everything to little, in the order the prompt tries them.
    pub(crate) const STEPS: [Detail; 6] = [
        Detail::new(usize::MAX, usize::MAX),
        Detail::new(1000, usize::MAX),
        Detail::new(300, 256),
        Detail::new(120, 64),
        Detail::new(48, 24),
        Detail::new(24, 8),
    ];

    const fn new(piece: usize, words: usize) -> Detail {
        Detail { piece, words }
    }
}

/// Columns `text` takes: two for East Asian wide and fullwidth characters (emoji among them),
/// by their Unicode property; one for the rest.
pub(crate) fn columns(text: &str) -> usize {
    use icu_properties::{CodePointMapData, props::EastAsianWidth};
    let width = CodePointMapData::<EastAsianWidth>::new();
    let wide = |c| {
        matches!(
            width.get(c),
            EastAsianWidth::Wide | EastAsianWidth::Fullwidth
        )
    };
    text.chars().map(|c| if wide(c) { 2 } else { 1 }).sum()
}

/// Whether `c` shows nothing of itself, or changes how its neighbours show, so that the prompt
/// names it instead: controls, the format characters (Cf: bidi marks, tags, the soft hyphen),
/// line and paragraph separators, every default-ignorable code point (fillers, the combining
/// grapheme joiner, the Mongolian vowel separator), variation selectors, and the Braille blank
/// U+2800, which draws nothing though no property says so.
pub(crate) fn invisible(c: char) -> bool {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory, VariationSelector};
    use icu_properties::{CodePointMapData, CodePointSetData};
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<VariationSelector>().contains(c)
        || c == '\u{2800}'
}

/// `text` on one line: C0 controls and DEL as their pictures, every other [`invisible`]
/// character as `⟨U+XXXX⟩`.
pub(crate) fn escaped(text: &str) -> String {
    text.chars().map(|c| one(c).text()).collect()
}

/// How one character is shown, blanks aside.
fn one(c: char) -> Piece {
    if c.is_ascii_control() {
        Piece::Char(escape_controls(&c.to_string()).chars().next().unwrap_or(c))
    } else if invisible(c) {
        Piece::Named(c)
    } else {
        Piece::Char(c)
    }
}

/// One piece of shown text: a character, an invisible one named, or a run of blanks shown as a
/// marker.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Char(char),
    Named(char),
    Blanks { count: usize, spaces: bool },
}

impl Piece {
    fn text(&self) -> String {
        match self {
            Piece::Char(c) => c.to_string(),
            Piece::Named(c) => format!("⟨U+{:04X}⟩", *c as u32),
            Piece::Blanks { count, spaces } => {
                let what = if *spaces {
                    "spaces"
                } else {
                    "blank\u{a0}characters"
                };
                format!("⟨{count}\u{a0}{what}⟩")
            }
        }
    }

    /// Characters of the original text it stands for.
    fn stands_for(&self) -> usize {
        match self {
            Piece::Char(_) | Piece::Named(_) => 1,
            Piece::Blanks { count, .. } => *count,
        }
    }
}

/// `text` as pieces: C0 controls and DEL as their pictures, other [`invisible`] characters
/// named, long runs of blanks folded.
fn pieces(text: &str) -> Vec<Piece> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let run = chars[i..]
            .iter()
            .take_while(|c| c.is_whitespace() && !c.is_ascii_control() && !invisible(**c))
            .count();
        if run > BLANK_RUN {
            let spaces = chars[i..i + run].iter().all(|c| *c == ' ');
            out.push(Piece::Blanks { count: run, spaces });
            i += run;
        } else if run > 0 {
            out.extend(chars[i..i + run].iter().map(|c| Piece::Char(*c)));
            i += run;
        } else {
            out.push(one(chars[i]));
            i += 1;
        }
    }
    out
}

/// `text` as the prompt shows it: controls escaped, long blank runs folded, and cut to about
/// `max` columns keeping its start (two thirds) and its end, with a marker in between.
pub(crate) fn text(text: &str, max: usize) -> String {
    let all = pieces(text);
    let width = |p: &[Piece]| p.iter().map(|p| columns(&p.text())).sum::<usize>();
    if width(&all) <= max {
        return all.iter().map(Piece::text).collect();
    }
    // How many of `pieces`, in order, fit in `room` columns.
    let fitting = |pieces: &mut dyn Iterator<Item = &Piece>, room: usize| {
        let mut used = 0;
        let fits = |p: &&Piece| {
            used += columns(&p.text());
            used <= room
        };
        pieces.take_while(fits).count()
    };
    let head_room = max * 2 / 3;
    // At least one piece of the start, whatever its width.
    let head = fitting(&mut all.iter(), head_room).max(1);
    let tail = all.len() - fitting(&mut all[head..].iter().rev(), max - head_room);
    let hidden: usize = all[head..tail].iter().map(Piece::stands_for).sum();
    let mut out: String = all[..head].iter().map(Piece::text).collect();
    out.push_str(&format!("⟨{hidden}\u{a0}more\u{a0}characters⟩"));
    out.extend(all[tail..].iter().map(Piece::text));
    out
}

/// `argv` as one line: each word quoted as a directive would read it back, shown as [`text`]
/// does; past `detail.words` words the first ones and the last stay, with a marker counting
/// those between. The program is always there, and every word shown starts as written.
pub(crate) fn command(argv: &[String], detail: Detail) -> String {
    let word = |w: &String| text(&quote_word(w), detail.piece);
    if argv.len() <= detail.words.max(2) {
        return argv.iter().map(word).collect::<Vec<_>>().join(" ");
    }
    let first = detail.words.max(2) - 1;
    let hidden = argv.len() - first - 1;
    let mut words: Vec<String> = argv[..first].iter().map(word).collect();
    words.push(format!("⟨{hidden}\u{a0}more\u{a0}arguments⟩"));
    words.push(word(&argv[argv.len() - 1]));
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::tests::argv;
    use super::*;

    #[test]
    fn long_blank_runs_become_a_counted_marker_and_short_ones_stay() {
        let word = format!("rm -rf x;{}echo hello", " ".repeat(3000));
        let shown = text(&word, usize::MAX);
        assert_eq!(shown, "rm -rf x;⟨3000\u{a0}spaces⟩echo hello");
        // Indentation, a newline (escaped) and other blanks.
        assert_eq!(text("a␊    b", usize::MAX), "a␊    b");
        assert_eq!(
            text(&format!("a{}b", "\u{3000}".repeat(20)), usize::MAX),
            "a⟨20\u{a0}blank\u{a0}characters⟩b"
        );
        assert_eq!(columns("a␊中🎉"), 6);
        // Escaped controls are not blanks: they stay visible.
        assert_eq!(text("a\n\n", usize::MAX), "a␊␊");
    }

    /// Every code point of the class, found by iterating all of them, is named; a control of
    /// each part of the class and a visible neighbour stay as they are.
    #[test]
    fn every_invisible_or_format_character_is_named() {
        let class: Vec<char> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| invisible(*c) && !c.is_ascii_control())
            .collect();
        // The whole class is large (the tag block alone is 128 of it): not a short list.
        assert!(class.len() > 4000, "{}", class.len());
        for c in class {
            assert_eq!(
                text(&format!("a{c}b"), usize::MAX),
                format!("a⟨U+{:04X}⟩b", c as u32),
                "U+{:04X}",
                c as u32
            );
        }
        // Each the issue saw shown raw is in it.
        for c in [
            '\u{E0041}',
            '\u{061C}',
            '\u{00AD}',
            '\u{3164}',
            '\u{115F}',
            '\u{2800}',
            '\u{FE0F}',
            '\u{E0100}',
            '\u{034F}',
            '\u{180E}',
            '\u{2028}',
            '\u{2029}',
            '\u{200B}',
            '\u{0085}',
        ] {
            assert!(invisible(c), "U+{:04X}", c as u32);
        }
        // Control: visible letters, marks and spaces are not.
        for c in ['a', 'é', '中', '\u{0301}', ' ', '\u{3000}', '🎉'] {
            assert!(!invisible(c), "U+{:04X}", c as u32);
        }
        assert_eq!(text("a\u{2028}\u{2028}b", usize::MAX), "a⟨U+2028⟩⟨U+2028⟩b");
    }

    #[test]
    fn a_long_piece_keeps_its_start_and_end_and_says_how_much_is_cut() {
        let long = format!("start{}end", "x".repeat(5000));
        let shown = text(&long, 60);
        assert!(shown.starts_with("startxx"), "{shown}");
        assert!(shown.ends_with("xxend"), "{shown}");
        assert!(shown.contains("\u{a0}more\u{a0}characters⟩"), "{shown}");
        // What is shown plus what the marker counts is all of it.
        let hidden: usize = shown
            .split('⟨')
            .nth(1)
            .and_then(|m| m.split('\u{a0}').next())
            .unwrap()
            .parse()
            .unwrap();
        let kept = shown.chars().count()
            - format!("⟨{hidden}\u{a0}more\u{a0}characters⟩")
                .chars()
                .count();
        assert_eq!(kept + hidden, long.chars().count());
        assert!(columns(&shown) <= 60 + 30, "{shown}");
        // Short enough: whole.
        assert_eq!(text("short", 60), "short");
    }

    #[test]
    fn a_command_shows_its_program_and_every_words_start() {
        let a = argv(&[
            "bash",
            "-c",
            &format!("rm -rf d;{}echo hi", " ".repeat(3000)),
        ]);
        let shown = command(&a, Detail::STEPS[0]);
        assert_eq!(shown, "bash -c 'rm -rf d;⟨3000\u{a0}spaces⟩echo hi'");
        let many: Vec<String> = (0..100).map(|n| format!("f{n}")).collect();
        let shown = command(&many, Detail::STEPS[5]);
        assert_eq!(
            shown,
            "f0 f1 f2 f3 f4 f5 f6 ⟨92\u{a0}more\u{a0}arguments⟩ f99"
        );
        assert_eq!(
            command(&argv(&["printf", "hi there"]), Detail::STEPS[5]),
            "printf 'hi there'"
        );
    }
}
