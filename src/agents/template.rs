//! `{{var}}` placeholders in instructions and the `--var K=V` flags that fill them. Pure.

use super::AgentError;
use regex::Regex;
use std::sync::LazyLock;

/// `{{name}}`, with optional spaces inside the braces. Names are identifiers (letters, digits, `_`,
/// `-`, `.`), so other text in double braces is left alone.
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}").expect("placeholder regex")
});

/// Parse `--var K=V` arguments. A missing `=` or an empty key is an error naming the flag.
pub fn parse_vars(kv: &[String]) -> Result<Vec<(String, String)>, AgentError> {
    kv.iter()
        .map(|arg| match arg.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(AgentError::BadVar { arg: arg.clone() }),
        })
        .collect()
}

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
    fn parses_vars() {
        let v = parse_vars(&["lang=Spanish".into(), "x=a=b".into(), "e=".into()]).unwrap();
        assert_eq!(
            v,
            vec![
                ("lang".into(), "Spanish".into()),
                ("x".into(), "a=b".into()),
                ("e".into(), "".into())
            ]
        );
    }

    #[test]
    fn bad_var_names_the_flag() {
        let e = parse_vars(&["lang".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--var `lang`: expected K=V, e.g. --var lang=Spanish"
        );
        assert!(parse_vars(&["=x".into()]).is_err());
    }

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
