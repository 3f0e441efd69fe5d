//! `{{var}}` placeholders in instructions. Pure.

use regex::Regex;
use std::sync::LazyLock;

/// `{{name}}`, with optional spaces inside the braces. Names are identifiers (letters, digits, `_`,
/// `-`, `.`), so other text in double braces is left alone.
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}").expect("placeholder regex")
});

/// Variable names used in `text`, first use first, without repeats.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for cap in PLACEHOLDER.captures_iter(text) {
        let name = &cap[1];
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Replace each placeholder whose value `lookup` knows; others stay as written. One pass:
/// values are not themselves expanded.
pub fn fill(text: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    PLACEHOLDER
        .replace_all(text, |cap: &regex::Captures| {
            lookup(&cap[1]).unwrap_or_else(|| cap[0].to_string())
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_fills_placeholders() {
        let t = "A {{lang}} tutor for {{ level }} ({{lang}}); {{not a var}} {x}";
        assert_eq!(placeholders(t), vec!["lang", "level"]);
        let out = fill(t, |k| (k == "lang").then(|| "{{level}}".to_string()));
        assert_eq!(
            out,
            "A {{level}} tutor for {{ level }} ({{level}}); {{not a var}} {x}"
        );
    }
}
