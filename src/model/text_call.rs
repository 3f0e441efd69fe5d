//! A tool call a server's chat template leaked as answer text instead of a structured call (a
//! fact of the server, whatever the model): how to recognise one. Pure.

/// An answer to a request with tools that holds no tool call but text shaped like one: a
/// `<tool_call>` tag (Qwen, Hermes templates), an answer opening with `functions.NAME` (the
/// OpenAI function namespace, as a chat format leaks it) for an offered NAME, or JSON with
/// arguments whose `"name"` is one of the `offered` functions (or the skill or script part of
/// one: `lookup` for `lookup__lookup`).
/// A JSON example about something else (`"name": "get_weather"` in an answer explaining tool
/// calls) is an answer, not a call.
pub(crate) fn looks_like_tool_call(text: &str, offered: &[String]) -> bool {
    if TAGS.iter().any(|tag| text.contains(tag)) {
        return true;
    }
    if let Some(name) = namespaced_name(text) {
        return offered.iter().any(|f| f == name);
    }
    let Some(open) = text.find('{') else {
        return false;
    };
    let json = &text[open..];
    if !(json.contains("\"arguments\"") || json.contains("\"parameters\"")) {
        return false;
    }
    // A call ends the answer: prose after it (an answer explaining what a call looks like)
    // makes it an answer.
    let after = &json[json.rfind('}').map_or(json.len(), |i| i + 1)..];
    if !after.trim().trim_start_matches("```").trim().is_empty() {
        return false;
    }
    let Some(name) = name_value(json) else {
        return false;
    };
    offered.iter().any(|f| {
        f == name
            || f.split_once("__")
                .is_some_and(|(skill, part)| skill == name || part == name)
    })
}

/// The NAME of an answer that opens with `functions.NAME` (after blank space).
pub(crate) fn namespaced_name(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix(FUNCTIONS)?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The tags a tool call written as text is wrapped in (Qwen, Hermes templates and the like).
pub(crate) const TAGS: [&str; 2] = ["<tool_call>", "<|tool_call"];

/// The namespace a chat format puts functions in.
pub(crate) const FUNCTIONS: &str = "functions.";

/// The string after the first `"name"` key: `"name": "calc__calc"` → `calc__calc`.
fn name_value(json: &str) -> Option<&str> {
    let at = json.find("\"name\"")? + "\"name\"".len();
    let rest = json[at..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    rest.find('"').map(|end| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_text_is_recognised() {
        let offered = ["calc__calc".to_string(), "lookup__lookup".to_string()];
        let call = |t: &str| looks_like_tool_call(t, &offered);
        assert!(call(
            "Sure. {\"name\": \"calc__calc\", \"arguments\": {\"args\": [\"1+1\"]}}"
        ));
        assert!(call("<tool_call>\n{}\n</tool_call>"));
        assert!(call(
            "```json\n{\"name\": \"lookup\", \"parameters\": {}}\n```"
        ));
        assert!(!call("The answer is 42."));
        assert!(call("functions.calc__calc:"));
        assert!(call(" functions.calc__calc:{\"args\": [1]}"));
        assert!(!call("functions.other:"));
        assert!(!call("See functions.calc__calc in the docs."));
        assert!(!call("Use {\"name\": \"x\"} as the key."));
        assert!(!call("\"name\" and \"arguments\" without JSON"));
        // An offered function's call shown in a fence with prose after it: an answer.
        assert!(!call(
            "Like this:\n```json\n{\"name\": \"calc__calc\", \"arguments\": {}}\n```\nYou never type it."
        ));
        // An example of some other function, in an answer about tool calls: an answer.
        assert!(!call(
            "Here is one:\n\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```"
        ));
    }
}
