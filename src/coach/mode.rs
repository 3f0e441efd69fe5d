//! Which coaching a chat gets: the setting alone, which the config, provider entries and agent
//! files name without reaching the coach itself. `small-model` turns every piece on; a list
//! such as `examples,lead-ins` turns on those pieces alone, so that each can be measured.

use serde::Deserialize;

/// One piece of coaching. The pieces are skillpipe's own: a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Worked exchanges before the conversation; skills' `## Example` sections move into them.
    Examples,
    /// The `Using NAME:` lead-ins the exchanges teach go with the directive they open.
    LeadIns,
    /// A turn whose user said to show a directive, not run it, runs nothing.
    DoNotRun,
}

impl Piece {
    /// Every piece, in the order a setting lists them.
    pub const ALL: [Piece; 3] = [Piece::Examples, Piece::LeadIns, Piece::DoNotRun];

    /// The piece as a setting writes it.
    pub fn name(self) -> &'static str {
        match self {
            Piece::Examples => "examples",
            Piece::LeadIns => "lead-ins",
            Piece::DoNotRun => "do-not-run",
        }
    }

    /// The piece it acts on, which must be on too: the lead-ins are the examples'.
    fn needs(self) -> Option<Piece> {
        match self {
            Piece::LeadIns => Some(Piece::Examples),
            Piece::Examples | Piece::DoNotRun => None,
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// Which coaching a chat gets: a set of [`Piece`]s, empty unless the user chose one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub struct CoachMode {
    pieces: u8,
}

impl CoachMode {
    /// No coaching: the request is the system prompt, the conversation and the user's message.
    pub const OFF: CoachMode = CoachMode { pieces: 0 };
    /// Every piece, for a small local model.
    pub const SMALL_MODEL: CoachMode = CoachMode { pieces: 0b111 };

    /// The modes with a name of their own, as written in a setting.
    pub const NAMES: [&'static str; 2] = ["off", "small-model"];

    /// The mode a setting names: `off`, `small-model`, or pieces joined by commas.
    pub fn parse(text: &str) -> Result<CoachMode, String> {
        match text.trim() {
            "off" => return Ok(CoachMode::OFF),
            "small-model" => return Ok(CoachMode::SMALL_MODEL),
            _ => {}
        }
        let mut mode = CoachMode::OFF;
        for word in text.split(',').map(str::trim) {
            let piece = Piece::ALL.into_iter().find(|p| p.name() == word);
            let Some(piece) = piece else {
                let pieces: Vec<_> = Piece::ALL.iter().map(|p| p.name()).collect();
                return Err(format!(
                    "`{word}` is no coaching mode or piece; one of: {}, or pieces joined by commas: {}",
                    CoachMode::NAMES.join(", "),
                    pieces.join(", ")
                ));
            };
            mode.pieces |= piece.bit();
        }
        for piece in Piece::ALL.into_iter().filter(|p| mode.has(*p)) {
            if let Some(need) = piece.needs().filter(|n| !mode.has(*n)) {
                return Err(format!(
                    "coaching piece `{}` acts on `{}`: add it (`{},{}`) or use `small-model`",
                    piece.name(),
                    need.name(),
                    need.name(),
                    piece.name()
                ));
            }
        }
        Ok(mode)
    }

    /// The mode as a setting writes it.
    pub fn name(self) -> String {
        match self {
            CoachMode::OFF => "off".into(),
            CoachMode::SMALL_MODEL => "small-model".into(),
            _ => (Piece::ALL.into_iter().filter(|p| self.has(*p)))
                .map(Piece::name)
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// Whether `piece` is on.
    pub fn has(self, piece: Piece) -> bool {
        self.pieces & piece.bit() != 0
    }

    /// True unless off.
    pub fn is_on(self) -> bool {
        self != CoachMode::OFF
    }
}

impl TryFrom<String> for CoachMode {
    type Error = String;
    fn try_from(text: String) -> Result<CoachMode, String> {
        CoachMode::parse(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_pieces_parse_from_their_names_only() {
        for name in CoachMode::NAMES {
            assert_eq!(CoachMode::parse(name).map(CoachMode::name), Ok(name.into()));
        }
        assert_eq!(CoachMode::parse("small-model"), Ok(CoachMode::SMALL_MODEL));
        let all: Vec<_> = Piece::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(CoachMode::parse(&all.join(",")), Ok(CoachMode::SMALL_MODEL));
        let some = CoachMode::parse(" examples , lead-ins").unwrap();
        assert!(some.has(Piece::Examples) && some.has(Piece::LeadIns));
        assert!(!some.has(Piece::DoNotRun));
        assert_eq!(some.name(), "examples,lead-ins");
        assert!(CoachMode::parse("do-not-run").unwrap().is_on());
        assert!(CoachMode::parse("qwen").is_err());
        assert!(CoachMode::parse("examples,").is_err());
        assert!(!CoachMode::default().is_on());
    }

    #[test]
    fn lead_ins_need_the_examples() {
        let err = CoachMode::parse("lead-ins").unwrap_err();
        assert!(err.contains("`examples`"), "{err}");
        assert!(CoachMode::parse("examples,lead-ins").is_ok());
    }
}
