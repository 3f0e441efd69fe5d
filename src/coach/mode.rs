//! Which coaching a chat gets: the setting alone, which the config, provider entries and agent
//! files name without reaching the coach itself.

use serde::Deserialize;

/// Which coaching a chat gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoachMode {
    /// None: the request is the system prompt, the conversation and the user's message.
    #[default]
    Off,
    /// Worked exchanges before the conversation, for a small local model.
    SmallModel,
}

impl CoachMode {
    /// Every mode, as written in a setting.
    pub const NAMES: [&'static str; 2] = ["off", "small-model"];

    /// The mode a setting names.
    pub fn parse(name: &str) -> Result<CoachMode, String> {
        match name.trim() {
            "off" => Ok(CoachMode::Off),
            "small-model" => Ok(CoachMode::SmallModel),
            _ => Err(format!(
                "`{name}` is no coaching mode; one of: {}",
                CoachMode::NAMES.join(", ")
            )),
        }
    }

    /// The mode as a setting writes it.
    pub fn name(self) -> &'static str {
        match self {
            CoachMode::Off => Self::NAMES[0],
            CoachMode::SmallModel => Self::NAMES[1],
        }
    }

    /// True unless off.
    pub fn is_on(self) -> bool {
        self != CoachMode::Off
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_their_names_only() {
        for name in CoachMode::NAMES {
            assert_eq!(CoachMode::parse(name).map(CoachMode::name), Ok(name));
        }
        assert!(CoachMode::parse("qwen").is_err());
        assert!(!CoachMode::default().is_on());
    }
}
