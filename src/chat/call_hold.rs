//! The start of an answer to a request with tools, held back while it may still be a tool call
//! written as text (DESIGN §6). Such an answer is dropped and the question asked again without
//! tools, so its text must not have reached the screen; every other answer streams as before,
//! held at most until its first characters show it is no call. Pure.

use super::tools::looks_like_tool_call;

/// How a tool call written as text begins (after leading whitespace).
const OPENERS: [&str; 5] = ["<tool_call>", "<|tool_call", "{", "```json", "```\n{"];

/// Holds the start of one answer.
#[derive(Debug, Default)]
pub(crate) struct CallHold {
    held: String,
    /// Nothing more is held: the answer is known not to start with a tool call.
    released: bool,
}

impl CallHold {
    /// For an answer to a request with tools (`on`); otherwise it holds nothing.
    pub(crate) fn new(on: bool) -> CallHold {
        CallHold {
            held: String::new(),
            released: !on,
        }
    }

    /// `text` arrived: what may be shown now.
    pub(crate) fn push(&mut self, text: &str) -> String {
        if self.released {
            return text.to_string();
        }
        self.held.push_str(text);
        if may_be_call(&self.held) {
            return String::new();
        }
        self.released = true;
        std::mem::take(&mut self.held)
    }

    /// The answer ended (or broke off): what is still held. The caller drops it when the whole
    /// answer turned out to be a tool call.
    pub(crate) fn finish(&mut self) -> String {
        self.released = true;
        std::mem::take(&mut self.held)
    }
}

/// Whether `text`, the start of an answer, may still be (or is) a tool call written as text.
fn may_be_call(text: &str) -> bool {
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
            "{" => match object_end(t) {
                None => true,
                Some(end) => looks_like_tool_call(&t[..end]),
            },
            "```json" | "```\n{" => match rest.find("\n```") {
                None => true,
                Some(end) => looks_like_tool_call(&rest[..end]),
            },
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
        let mut hold = CallHold::new(on);
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
    fn an_answer_that_ends_while_undecided_is_all_given_back() {
        let (shown, left) = run(true, &["  {\"name\": \"x\""]);
        assert_eq!(shown, [""]);
        assert_eq!(left, "  {\"name\": \"x\"");
    }
}
