//! The text of an answer to a request with tools that may still be a tool call written as text,
//! held back (DESIGN §6). Such an answer is dropped and the question asked again without tools,
//! so the call must not have reached the screen: the answer's start is held while it may be a
//! call, and later a `<tool_call>` tag from its first `<` (a tag ends the answer's showing) or a
//! JSON object whose first key is `"name"` (bare or in a fence) from its `{` or fence, until it
//! closes. Every other answer streams as before, held at most until a few characters show it is
//! no call. Pure.

use super::text_call::{FUNCTIONS, TAGS, looks_like_tool_call, namespaced_name};

/// How a tool call written as text begins (after leading whitespace).
const OPENERS: [&str; 6] = [TAGS[0], TAGS[1], "{", "```json", "```\n{", FUNCTIONS];

/// Holds what of one answer may be a tool call.
#[derive(Debug, Default)]
pub(crate) struct CallHold {
    held: String,
    /// The functions offered: only a call of one of them is held as a call (none: nothing is).
    offered: Vec<String>,
    /// Past the answer's start (it is no call); a tag may still come.
    started: bool,
}

impl CallHold {
    /// For an answer to a request offering the functions `offered`; with none it holds nothing.
    pub(crate) fn new(offered: Vec<String>) -> CallHold {
        CallHold {
            offered,
            ..CallHold::default()
        }
    }

    /// `text` arrived: what may be shown now.
    pub(crate) fn push(&mut self, text: &str) -> String {
        if self.offered.is_empty() {
            return text.to_string();
        }
        self.held.push_str(text);
        if !self.started {
            if may_be_call(&self.held, &self.offered) {
                return String::new();
            }
            self.started = true;
        }
        let keep = call_start(&self.held, &self.offered).unwrap_or(self.held.len());
        let rest = self.held.split_off(keep);
        std::mem::replace(&mut self.held, rest)
    }

    /// The answer ended (or broke off): what is still held. The caller drops it when the
    /// answer turned out to be a tool call.
    pub(crate) fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

/// Where in `text`, past the answer's start, a call may begin: a tag, or may begin as more text
/// comes (a tag cut at the end), or a JSON call (see [`may_be_json_call`]).
fn call_start(text: &str, offered: &[String]) -> Option<usize> {
    text.match_indices(['<', '{', '`'])
        .map(|(i, _)| i)
        .find(|&i| {
            let t = &text[i..];
            TAGS.iter()
                .any(|tag| t.starts_with(tag) || tag.starts_with(t))
                || may_be_json_call(t, offered)
        })
}

/// Fences a JSON call written mid-answer may be wrapped in.
const FENCES: [&str; 2] = ["```json\n", "```\n"];

/// Whether `t`, from a `{` or a fence in the middle of an answer, is or may still become a
/// tool call: an object whose first key is `"name"`, held until it closes and is judged. A
/// narrower test than at the answer's start, so code and other JSON in prose keep streaming.
fn may_be_json_call(t: &str, offered: &[String]) -> bool {
    let mut body = t;
    if t.starts_with('`') {
        if FENCES.iter().any(|f| f.starts_with(t)) {
            return true;
        }
        match FENCES.iter().find_map(|f| t.strip_prefix(f)) {
            Some(rest) => body = rest,
            None => return false,
        }
    }
    if body.is_empty() {
        return true;
    }
    let Some(inner) = body.strip_prefix('{') else {
        return false;
    };
    const KEY: &str = "\"name\"";
    let key = inner.trim_start();
    if key.len() < KEY.len() {
        return KEY.starts_with(key);
    }
    key.starts_with(KEY) && may_be_call(t, offered)
}

/// Whether `text`, the start of an answer, may still be (or is) a tool call written as text.
fn may_be_call(text: &str, offered: &[String]) -> bool {
    let t = text.trim_start();
    if t.is_empty() {
        return true;
    }
    OPENERS.iter().any(|opener| {
        if opener.starts_with(t) {
            // Too short to tell.
            return true;
        }
        let Some(rest) = t.strip_prefix(opener) else {
            return false;
        };
        match *opener {
            "{" => object_end(t).is_none_or(|end| looks_like_tool_call(&t[..end], offered)),
            "```json" | "```\n{" => {
                (rest.find("\n```")).is_none_or(|end| looks_like_tool_call(&rest[..end], offered))
            }
            FUNCTIONS => {
                let name = namespaced_name(t).unwrap_or("");
                if name.len() == rest.len() {
                    // The name is still arriving.
                    offered.iter().any(|f| f.starts_with(name))
                } else {
                    looks_like_tool_call(t, offered)
                }
            }
            // A tag is a call whatever follows.
            _ => true,
        }
    })
}

/// Where the JSON object `text` starts with ends (the byte after its closing brace), or `None`
/// while it is still open.
fn object_end(text: &str) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What shows of `pieces`, piece by piece, and what is still held at the end.
    fn run(on: bool, pieces: &[&str]) -> (Vec<String>, String) {
        let offered = ["calc__calc", "x__x"].map(String::from).to_vec();
        let mut hold = CallHold::new(if on { offered } else { Vec::new() });
        let shown = pieces.iter().map(|p| hold.push(p)).collect();
        (shown, hold.finish())
    }

    #[test]
    fn a_call_written_as_text_is_held_to_the_end() {
        for pieces in [
            &[
                "<tool",
                "_call>\n{\"name\": \"x\",",
                " \"arguments\": {}}\n</tool_call>",
            ][..],
            &[
                "  {\"na",
                "me\": \"calc\", \"arguments\": {\"a\": \"}\"}}",
                "\n",
            ],
            &[
                "```",
                "json\n{\"name\": \"x\", \"parameters\": {}}\n",
                "```\n",
            ],
            &["<|tool_call|>", "x"],
        ] {
            let (shown, left) = run(true, pieces);
            assert!(shown.iter().all(String::is_empty), "{pieces:?}: {shown:?}");
            assert_eq!(left, pieces.concat());
        }
    }

    #[test]
    fn other_answers_show_as_soon_as_they_cannot_be_a_call() {
        // Plain text at once; a look-alike start only until it differs.
        let (shown, left) = run(true, &["Hello", " there"]);
        assert_eq!(
            (shown, left),
            (vec!["Hello".into(), " there".into()], "".into())
        );
        let (shown, _) = run(true, &["<t", "able> no", " more"]);
        assert_eq!(shown, ["", "<table> no", " more"]);
        let (shown, _) = run(true, &["```", "python\nx = 1\n"]);
        assert_eq!(shown, ["", "```python\nx = 1\n"]);
        // JSON that is no call shows once its object closes.
        let (shown, _) = run(true, &["{\"a\": ", "1} is JSON", "."]);
        assert_eq!(shown, ["", "{\"a\": 1} is JSON", "."]);
        let (shown, _) = run(true, &["```json\n{\"a\": 1}\n", "```\nok"]);
        assert_eq!(shown, ["", "```json\n{\"a\": 1}\n```\nok"]);
        // Without tools nothing is held.
        let (shown, _) = run(false, &["<tool_call>", "{}"]);
        assert_eq!(shown, ["<tool_call>", "{}"]);
    }

    #[test]
    fn a_tag_after_some_text_is_held_from_its_start() {
        let (shown, left) = run(
            true,
            &[
                "I will compute it. <",
                "tool_call>{\"name\": \"x\"",
                "} more",
            ],
        );
        assert_eq!(shown, ["I will compute it. ", "", ""]);
        assert_eq!(left, "<tool_call>{\"name\": \"x\"} more");
        // A `<` that starts no tag waits only until it is clear.
        let (shown, left) = run(true, &["a <", "= b and <", "|t", "x|> c"]);
        assert_eq!(shown, ["a ", "<= b and ", "", "<|tx|> c"]);
        assert_eq!(left, "");
    }

    #[test]
    fn a_json_call_after_some_text_is_held_from_its_brace_or_fence() {
        let (shown, left) = run(
            true,
            &[
                "Let me compute it. {",
                "\"name\": \"calc__calc\", ",
                "\"arguments\": {\"args\": [\"1+1\"]}}",
            ],
        );
        assert_eq!(shown, ["Let me compute it. ", "", ""]);
        assert_eq!(
            left,
            "{\"name\": \"calc__calc\", \"arguments\": {\"args\": [\"1+1\"]}}"
        );
        let (shown, left) = run(
            true,
            &[
                "Here:\n``",
                "`json\n{ \"name\": \"x\", \"arguments\": {}}\n```\n",
            ],
        );
        assert_eq!(shown, ["Here:\n", ""]);
        assert!(left.starts_with("```json\n{"), "{left}");
        // A name-first object that is no call shows once it closes; other JSON and code at once.
        let (shown, left) = run(true, &["See {\"name\": \"Ann\"", ", \"age\": 3} ok"]);
        assert_eq!(shown, ["See ", "{\"name\": \"Ann\", \"age\": 3} ok"]);
        assert_eq!(left, "");
        let (shown, _) = run(true, &["f() { return 1; }", " and {\"a\": 1}"]);
        assert_eq!(shown, ["f() { return 1; }", " and {\"a\": 1}"]);
        let (shown, _) = run(true, &["x ```", "python\nprint(1)\n"]);
        assert_eq!(shown, ["x ", "```python\nprint(1)\n"]);
    }

    #[test]
    fn an_answer_that_ends_while_undecided_is_all_given_back() {
        let (shown, left) = run(true, &["  {\"name\": \"x\""]);
        assert_eq!(shown, [""]);
        assert_eq!(left, "  {\"name\": \"x\"");
    }
}
