//! The built-in guide to the directive syntax, and the few-shot exchange that goes with it
//! (DESIGN §4). Pure.
//!
//! Rules alone rarely made a small model write a directive, and worked examples written into the
//! system prompt were imitated line by line; sent as prior messages they were followed. So the
//! guide is the rules in a few lines, and the examples are a few-shot exchange of messages: one
//! per skill, from the skills' own `## Example` sections, plus one that shows a directive in
//! backticks. What each piece was measured to do is in docs/model-fit-and-evaluation.md.

use crate::model::Message;
use crate::scan::CONTINUE;
use crate::scan::{Event, Kind, ScanOptions, Scanner};

/// One worked exchange from a skill's `## Example` section:
/// `User: …`, `You: … directive …`, optionally `Output: …` and the final `You: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// What the user asks.
    pub user: String,
    /// The answer up to and including the directive (a side effect: the whole answer).
    pub reply: String,
    /// The directive as written, e.g. `!{scripts/calc.py "23 * 4"}`.
    pub directive: String,
    /// A capture's `(output, answer)`: what the script gave back and the answer after it;
    /// `None` for a side effect.
    pub capture: Option<(String, String)>,
}

/// Splits a SKILL.md body into the text the prompt shows and its worked example, when it has an
/// `## Example` section in the `User:` / `You:` form with a directive. The example then goes to
/// the guide (once, not twice); any other body is returned whole.
pub fn split_example(body: &str) -> (String, Option<Example>) {
    let lines: Vec<&str> = body.lines().collect();
    let Some(start) = lines.iter().position(|l| is_example_heading(l)) else {
        return (body.to_string(), None);
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("# ") || l.starts_with("## "))
        .map_or(lines.len(), |i| start + 1 + i);
    let Some(example) = parse_exchange(&lines[start + 1..end]) else {
        return (body.to_string(), None);
    };
    let rest = [&lines[..start], &lines[end..]].concat();
    (format!("{}\n", rest.join("\n").trim_end()), Some(example))
}

fn is_example_heading(line: &str) -> bool {
    let l = line.trim().to_ascii_lowercase();
    l == "## example" || l == "## examples"
}

fn parse_exchange(lines: &[&str]) -> Option<Example> {
    let mut user = None;
    let mut replies = Vec::new();
    let mut output = None;
    for line in lines.iter().map(|l| l.trim()) {
        if let Some(t) = line.strip_prefix("User:") {
            if user.is_some() {
                break;
            }
            user = Some(t.trim().to_string());
        } else if let Some(t) = line.strip_prefix("You:") {
            replies.push(t.trim().to_string());
        } else if let Some(t) = line.strip_prefix("Output:") {
            output = Some(t.trim().to_string());
        }
    }
    let user = user?;
    let reply = replies.first()?.clone();
    let (kind, directive) = first_directive(&reply)?;
    let capture = match kind {
        Kind::Capture => Some((output?, replies.get(1)?.clone())),
        Kind::SideEffect => None,
    };
    Some(Example {
        user,
        reply,
        directive,
        capture,
    })
}

/// The first directive in `text`, read by the real scanner so the guide shows only what runs.
fn first_directive(text: &str) -> Option<(Kind, String)> {
    let mut scanner = Scanner::new(ScanOptions::default());
    let mut events = Vec::new();
    scanner.feed(text.as_bytes(), &mut events);
    scanner.finish(&mut events);
    events.into_iter().find_map(|e| match e {
        Event::Directive(d) => Some((d.kind, String::from_utf8_lossy(&d.raw).into_owned())),
        Event::Text(_) => None,
    })
}

/// The answer that ends a [`load_example`]: it only promises to follow the instructions, so a
/// model that copies it promises no content it would then have to invent.
const LOAD_ANSWER: &str = "Here is my plan, step by step, as the skill says.";

/// Characters of a skill's description its [`load_example`] asks with, and of its body shown
/// as the output: enough to read as a request and a result, short enough to cost little.
const LOAD_REQUEST_CHARS: usize = 120;
const LOAD_OUTPUT_CHARS: usize = 160;

/// A worked exchange that loads a catalog skill: the first clause of its description as the
/// request, `!{skill NAME}`, the opening lines of its body as the output, then a short answer.
/// For a catalog whose skills bring no `## Example` (real collections have none), so that
/// `!{skill NAME}` is shown once; `None` when the description gives no request.
pub fn load_example(name: &str, description: &str, body: &str) -> Option<Example> {
    let request = first_clause(description);
    if request.is_empty() || name.is_empty() {
        return None;
    }
    let directive = format!("!{{skill {name}}}");
    // Only a name the scanner reads back as this one directive is shown.
    if first_directive(&directive) != Some((Kind::Capture, directive.clone())) {
        return None;
    }
    let opening: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("---"))
        .take(2)
        .collect();
    let output = match crate::skills::excerpt(&opening.join(" "), LOAD_OUTPUT_CHARS) {
        o if o.is_empty() => "(no instructions)".into(),
        o => o,
    };
    Some(Example {
        user: crate::skills::excerpt(&request, LOAD_REQUEST_CHARS),
        reply: directive.clone(),
        directive,
        capture: Some((output, LOAD_ANSWER.into())),
    })
}

/// `text` on one line up to its first sentence or clause end (`.`, `;` or `:` before a space or
/// the end, or a dash between spaces), without quotes around it.
fn first_clause(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = one_line.trim_matches(|c| c == '"' || c == '\'' || c == ' ');
    let chars: Vec<(usize, char)> = t.char_indices().collect();
    let end = chars
        .iter()
        .enumerate()
        .find(|&(i, &(_, c))| {
            let next = chars.get(i + 1).map(|&(_, n)| n);
            let ends = matches!(c, '.' | ';' | ':') && next.is_none_or(char::is_whitespace);
            let dash = matches!(c, '—' | '–') && i > 0 && chars[i - 1].1 == ' ';
            ends || dash
        })
        .map_or(t.len(), |(_, &(at, _))| at);
    t[..end].trim_end().to_string()
}

impl Example {
    /// A read of a skill's instructions (`!{skill NAME}`, `!<skill NAME>`) rather than a run.
    fn reads_a_skill(&self) -> bool {
        self.directive
            .get(2..)
            .and_then(|body| body.split_whitespace().next())
            == Some(crate::scan::SKILL_READ)
    }

    /// The example with its reply opened by the skill's name (`Using calc: !{…}`) when the
    /// reply is the bare directive: fewer directives where none was needed, and the name matches
    /// the `## NAME` heading the model chooses from. A reply with words of its own, and a skill
    /// read, stay as written.
    pub fn introduced_by(mut self, skill: &str) -> Example {
        if self.reply == self.directive && !self.reads_a_skill() && !skill.is_empty() {
            self.reply = format!("Using {skill}: {}", self.reply);
        }
        self
    }
}

/// Most worked exchanges in the few-shot: each costs prompt bytes a small model must read.
pub const MAX_EXAMPLES: usize = 3;

/// The guide: the rules, and how to show a directive without running it (with a real one).
pub fn guide(examples: &[Example]) -> String {
    let shown = examples
        .first()
        // Without a real one, the bare form: a word like `command` would be copied and run.
        .map_or("!{…}", |e| e.directive.as_str());
    format!(
        "# Running scripts\n\
         You run a script of your skills by writing a directive in your answer:\n\
         - `!{{…}}`, with the script and its arguments inside, when you need its output. Stop right after it: the output comes back in the next message. Then finish your answer with it.\n\
         - `%{{…}}` to run it only for its effect (a sound, a notification). Keep writing: nothing comes back.\n\
         Write a directive only when the request needs the script. Put each argument in double quotes; no shell syntax.\n\
         To show a directive without running it, put it in backticks: `{shown}`. Asked about directives, explain them in words and show them only in backticks.\n"
    )
}

/// The exchange that opens the few-shot: a message answered in words, with no directive.
const PLAIN: (&str, &str) = (
    "Thanks, that is all I needed.",
    "You're welcome! Ask any time.",
);

/// Questions anyone can answer, asked right after a worked capture and answered in words: one
/// after each of the first two captures that run a script, so that a small model does not take
/// every question for one a script must answer.
const KNOWN: [(&str, &str); 2] = [
    ("And how many hours are in a day?", "A day has 24 hours."),
    (
        "Who painted the Mona Lisa?",
        "Leonardo da Vinci painted it.",
    ),
];

/// One worked exchange as messages: the request, the reply, and for a capture its output in
/// the message the chat loop sends and the answer after it.
pub fn exchange(e: &Example) -> Vec<Message> {
    let mut out = vec![
        Message::user(e.user.clone()),
        Message::assistant(e.reply.clone()),
    ];
    if let Some((output, answer)) = &e.capture {
        out.push(Message::user(format!("Output: {output} {CONTINUE}")));
        out.push(Message::assistant(answer.clone()));
    }
    out
}

/// The few-shot exchange sent before the conversation: a thank-you answered in words
/// ([`PLAIN`]), the first [`MAX_EXAMPLES`] examples (one per skill, in the agent's order; a
/// capture's output in the same message the chat loop sends, then a [`KNOWN`] question after
/// each of the first two that run a script), then a question about the syntax answered with
/// directives in backticks (last: first, its questions copied the skills' examples and ran them).
pub fn few_shot(examples: &[Example]) -> Vec<Message> {
    let mut out = Vec::new();
    if !examples.is_empty() {
        out.push(Message::user(PLAIN.0));
        out.push(Message::assistant(PLAIN.1));
    }
    let mut known = KNOWN.iter();
    for e in examples.iter().take(MAX_EXAMPLES) {
        out.extend(exchange(e));
        if e.capture.is_some() {
            // A skill read is left as measured: catalog loads are rare enough already.
            if let Some((q, a)) = (!e.reads_a_skill()).then(|| known.next()).flatten() {
                out.push(Message::user(*q));
                out.push(Message::assistant(*a));
            }
        }
    }
    if !examples.is_empty() {
        let shown = |capture: bool, generic: &'static str| {
            examples
                .iter()
                .take(MAX_EXAMPLES)
                .find(|e| e.capture.is_some() == capture && !e.reads_a_skill())
                .map_or(generic, |e| e.directive.as_str())
        };
        out.push(Message::user(
            "How do I write a directive? Show me, without running it.",
        ));
        out.push(Message::assistant(format!(
            "In backticks, as here, a directive is only shown: `{}` runs a script and brings back its output; `{}` runs one only for its effect. Without backticks it runs.",
            shown(true, "!{…}"),
            shown(false, "%{…}"),
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALC: &str = "# calc\n\nComputes.\n\n## Example\n\n    User: What is 23 times 4?\n    You: !{scripts/calc.py \"23 * 4\"}\n    Output: 92\n    You: 23 times 4 is 92.\n\n## Notes\n\nMore.\n";
    const SAY: &str = "# say\n\n## Example\n\nUser: Teach me the word for cat.\nYou: The word is *gato* %{scripts/say.sh \"gato\"} — it means cat.\n";

    #[test]
    fn example_section_is_taken_out_of_the_body() {
        let (body, ex) = split_example(CALC);
        assert_eq!(body, "# calc\n\nComputes.\n\n## Notes\n\nMore.\n");
        let ex = ex.expect("an example");
        assert_eq!(ex.user, "What is 23 times 4?");
        assert_eq!(ex.directive, "!{scripts/calc.py \"23 * 4\"}");
        assert_eq!(ex.capture, Some(("92".into(), "23 times 4 is 92.".into())));
        let (_, ex) = split_example(SAY);
        assert_eq!(ex.unwrap().capture, None);
    }

    #[test]
    fn bodies_without_a_usable_example_stay_whole() {
        for body in [
            "# x\n\nNo example here.\n",
            "# x\n\n## Example\n\nRun it like this: scripts/x.py\n",
            "# x\n\n## Example\n\nUser: hi\nYou: `!{scripts/x.py}` in backticks does not run\n",
            "# x\n\n## Example\n\nUser: hi\nYou: !{scripts/x.py}\n",
        ] {
            let (kept, ex) = split_example(body);
            assert_eq!(kept, body);
            assert!(ex.is_none(), "{body:?}");
        }
    }

    #[test]
    fn few_shot_is_examples_then_a_syntax_question() {
        let ex: Vec<Example> = [CALC, SAY, CALC, CALC]
            .iter()
            .filter_map(|b| split_example(b).1)
            .collect();
        let m = few_shot(&ex);
        // A plain exchange (2), then calc (4 messages) and a known fact (2), say (2), calc (4)
        // and the other fact (2), then the syntax question (2).
        assert_eq!(m.len(), 18, "{m:?}");
        assert_eq!(
            m[..2],
            [Message::user(PLAIN.0), Message::assistant(PLAIN.1)]
        );
        let m = &m[2..];
        assert_eq!(m[0], Message::user("What is 23 times 4?"));
        assert_eq!(m[1], Message::assistant("!{scripts/calc.py \"23 * 4\"}"));
        assert_eq!(m[2], Message::user("Output: 92 — continue your answer."));
        assert_eq!(m[3], Message::assistant("23 times 4 is 92."));
        assert_eq!(m[4], Message::user(KNOWN[0].0));
        assert_eq!(m[5], Message::assistant(KNOWN[0].1));
        assert_eq!(m[6], Message::user("Teach me the word for cat."));
        assert_eq!(m[12], Message::user(KNOWN[1].0));
        assert_eq!(
            m[15],
            Message::assistant(
                "In backticks, as here, a directive is only shown: `!{scripts/calc.py \"23 * 4\"}` runs a script and brings back its output; `%{scripts/say.sh \"gato\"}` runs one only for its effect. Without backticks it runs."
            )
        );
        // Only the first two captures are followed by a known fact.
        let three: Vec<Example> = [CALC, CALC, CALC]
            .iter()
            .filter_map(|b| split_example(b).1)
            .collect();
        let m = few_shot(&three);
        let facts = m
            .iter()
            .filter(|x| KNOWN.iter().any(|k| **x == Message::user(k.0)));
        assert_eq!(facts.count(), 2);
        assert_eq!(m.len(), 2 + 3 * 4 + 2 * 2 + 2);
        // Without an example of a kind, its form is shown bare of arguments.
        let only_say: Vec<Example> = split_example(SAY).1.into_iter().collect();
        let m = few_shot(&only_say);
        let Message::Assistant { content, .. } = &m[5] else {
            panic!("{m:?}")
        };
        assert!(content.contains("`!{…}` runs a script"), "{content}");
        assert!(few_shot(&[]).is_empty());
        let g = guide(&ex);
        assert!(g.contains("put it in backticks: `!{scripts/calc.py \"23 * 4\"}`"));
        assert!(!g.contains("User:") && !g.contains("Output"), "{g}");
        assert!(g.len() < 700, "guide is {} bytes", g.len());
    }

    #[test]
    fn a_bare_script_directive_is_opened_by_its_skill_name() {
        let (_, calc) = split_example(CALC);
        let calc = calc.unwrap().introduced_by("calc");
        assert_eq!(calc.reply, "Using calc: !{scripts/calc.py \"23 * 4\"}");
        assert_eq!(calc.directive, "!{scripts/calc.py \"23 * 4\"}");
        // A reply with words of its own stays the author's.
        let (_, say) = split_example(SAY);
        let say = say.unwrap();
        assert_eq!(say.clone().introduced_by("say").reply, say.reply);
        // A skill read stays bare: measured only as it is.
        let load = load_example("maps", "Find places on a map.", "Use the map.").unwrap();
        assert_eq!(load.clone().introduced_by("maps").reply, "!{skill maps}");
    }

    #[test]
    fn a_load_example_asks_with_the_description_and_loads_the_skill() {
        let ex = load_example(
            "tide-tables",
            "  \"Predicting tides for a harbour: heights and times.\nUse it for boats.\"",
            "---\n# Tide tables\n\n## Steps\nFind the harbour.\nRead the table.\nAnswer.\n",
        )
        .expect("an example");
        assert_eq!(ex.user, "Predicting tides for a harbour");
        assert_eq!(ex.reply, "!{skill tide-tables}");
        assert_eq!(ex.directive, ex.reply);
        let capture = (
            "Find the harbour. Read the table.".into(),
            LOAD_ANSWER.into(),
        );
        assert_eq!(ex.capture, Some(capture));
        assert!(ex.reads_a_skill());
        // Long text is cut; an empty body still gives an output line.
        let long = "word ".repeat(100);
        let ex = load_example("x", &long, "").unwrap();
        assert!(ex.user.chars().count() <= LOAD_REQUEST_CHARS, "{}", ex.user);
        assert_eq!(ex.capture.unwrap().0, "(no instructions)");
        // No request, or a name that is no directive: no example.
        assert!(load_example("x", " \"\" ", "body").is_none());
        assert!(load_example("", "Does things.", "body").is_none());
        assert!(load_example("a}b", "Does things.", "body").is_none());
    }

    #[test]
    fn the_first_clause_ends_at_a_sentence_clause_or_dash() {
        for (text, want) in [
            ("Reads PDFs. Use it always.", "Reads PDFs"),
            (
                "Reference for the API — ids, pricing",
                "Reference for the API",
            ),
            ("Toolkit for v1.2 files; and more", "Toolkit for v1.2 files"),
            ("Triggers: any mention", "Triggers"),
            ("No end at all", "No end at all"),
            ("'Quoted text.'", "Quoted text"),
        ] {
            assert_eq!(first_clause(text), want, "{text}");
        }
    }

    #[test]
    fn guide_without_examples_is_the_rules() {
        let g = guide(&[]);
        // No placeholder a model could echo as a directive; the forms are in backticks.
        assert!(g.contains("`!{…}`, with the script and its arguments inside"));
        assert!(g.contains("`%{…}` to run it only for its effect"));
        assert!(!g.contains("SCRIPT"));
        assert!(g.contains("put it in backticks: `!{…}`."));
        assert!(!g.contains("command \""));
        assert!(!g.contains("Example"));
    }
}
