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
    /// Worked exchanges and the guards that go with them, for a small local model.
    SmallModel,
}

impl CoachMode {
    /// Every mode, as written in a setting.
    pub const NAMES: [&'static str; 2] = ["off", "small-model"];

    /// The mode a setting names.
    pub fn parse(name: &str) -> Option<CoachMode> {
        match name.trim() {
            "off" => Some(CoachMode::Off),
            "small-model" => Some(CoachMode::SmallModel),
            _ => None,
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
