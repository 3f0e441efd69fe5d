//! The built-in guide to the directive syntax, and the few-shot exchange that goes with it
//! (DESIGN §4). Pure.
//!
//! Measured on a small model (Qwen2.5-Coder-0.5B, temperature 0, `scripts/eval-model.sh`): rules
//! alone made it write a directive in about a third of the cases that needed one. Worked examples
//! written into the system prompt were imitated line by line (it wrote "the next message brings:
//! 1594323" and copied the example's definition); the same examples sent as prior messages, with
//! the result in a user message exactly as the chat loop sends it, made it write the right
//! directive and use the result. So the guide is the rules in a few lines, and the examples are a
//! few-shot exchange of messages: one per skill, from the skills' own `## Example` sections (their
//! authors pick a question and values that fit), plus one that shows a directive in backticks.
//! Telling it to answer "everything else (greetings, facts you know, writing) in plain text" was
//! tried and dropped: right directives fell from 13/16 to 11/16 and no false trigger stopped running.
//!
//! Measured next (26 cases, temperature 0): the syntax exchange showing both kinds in backticks
//! instead of one cut directives written for questions about the syntax from 4 to 2 (false
//! triggers 5/10 to 3/10) and kept right directives at 13–14/16; "asked about directives, explain
//! them in words and show them only in backticks" in the guide raised right directives from 13 to
//! 14/16 at no cost. Tried and dropped then: a plain question answered without a directive
//! as the first few-shot exchange (right directives 13 to 12/16; the false trigger it aimed at,
//! a lookup of "Paris" for "the capital of France", stayed) — measured again on 33 cases, with
//! catalog mode among them, a plain thank-you exchange cut false triggers written from 5 to 3
//! of 14 (run: 2 to 1) at no cost, so it opens the exchange now ([`PLAIN`]); "with the user's words and numbers
//! copied exactly" for arguments (the two misread arguments, 486.40 for 186.40 and "uniqueness"
//! for "ubiquitous", stayed; right directives 14 to 13/16); and the researcher agent told to
//! "answer anything else directly" instead of "never guess a definition or a number" (no false
//! trigger fewer, one result no longer used). Each of these cost one result used (10 to 9/12)
//! and gained nothing: dropping a skill body's `# NAME` line under its `## NAME` heading; calc's
//! function list cut to "functions such as sqrt and log"; results ending "— continue your answer
//! with it."; the researcher told "never guess what a word means or the result of a calculation".
//! One case either way is within the noise of repeated runs (a server's prompt cache changes a
//! word now and then), so only changes that held on the whole set were kept. Then (41 cases, four
//! runs each): replies opened by the skill's name ([`Example::introduced_by`]) cut false triggers
//! written from 5–7 to 3–5 of 22 and run from 3 to 1–2, right directives unchanged at 17/19; with
//! them, a plain fact exchange ("Which ocean is the largest?") before the syntax one was tried
//! again and dropped (right directives 17 to 15/19, false triggers run 1–2 to 1). Then (47
//! cases, first replies, two runs each): after the worked captures ([`KNOWN`]) a fact worked;
//! and tried and dropped: a second one that asks for writing ("two tips for sleeping well":
//! "capital of France" was looked up again), one after a side effect (a pronunciation lost), the
//! guide's or the syntax exchange's directive swapped for `!{…}` or another skill's (copies
//! of the calc example rose, two right directives lost), and the researcher told to answer
//! facts, writing and advice itself (no change). Then (same cases and harness) tried and
//! dropped: the syntax exchange moved before the last known fact (a spider's legs no longer
//! looked up, the difference between the kinds now written with the calc example: no change over
//! two runs); the guide's backticked example left out (one false trigger more, one right
//! directive less); known facts opened "Using what I know:" (right directives 19 to 7/19: every
//! calculation answered from memory); the agent's own directives put in backticks, "a
//! calculation" for "a number" in the researcher's instructions, and notify told to run only
//! when asked (no change). Then (the whole evaluation, six runs against three): the examples'
//! replies opened by what the directive is for ("To compute 287 / 3.5 exactly:", "To compute
//! the average speed exactly:", "To look up the word solitude:") instead of the skill's name.
//! Directives written where none was needed fell from 4–5 to 2–4 of 28 (a spider's legs no
//! longer looked up) and those run from 2 to 0–1, but right directives fell from 16–17 to
//! 15–17/19, under 80 % in half the runs: the model restated the question and then wrote the
//! restatement ("35 dollars every week" became `35 / 7`), and asked for a recipe it wrote a
//! recipe script that does not exist and answered with the refusal. Dropped; opened with
//! "Using calc to compute …" or "To use calc:" it was worse than either (5–7 written). Only
//! lookup's example opened so ("To look up the word solitude:", calc's bare) was kept: four
//! runs against three, written 4–5 to 2–3 of 28, run 1–2 to 0–1, right directives 16–17 to
//! 16–18/19. Being the skill's own text, it is in lookup's SKILL.md, not here.

use crate::chat::result::CONTINUE;
use crate::model::Message;
use crate::scan::{Event, Kind, ScanOptions, Scanner};

/// One worked exchange from a skill's `## Example` section:
/// `User: …`, `You: … directive …`, optionally `Output: …` and the final `You: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// What the user asks.
    pub user: String,
    /// The answer up to and including the directive (a side effect: the whole answer).
    pub reply: String,
    /// Side effect or capture.
    pub kind: Kind,
    /// The directive as written, e.g. `!{scripts/calc.py "23 * 4"}`.
    pub directive: String,
    /// What the script gave back (captures only).
    pub output: Option<String>,
    /// The answer after the output (captures only).
    pub answer: Option<String>,
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
    let mut rest: Vec<&str> = lines[..start].to_vec();
    rest.extend_from_slice(&lines[end..]);
    let mut text = rest.join("\n").trim_end().to_string();
    text.push('\n');
    (text, Some(example))
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
    let directive = first_directive(&reply)?;
    let kind = directive.0;
    let (output, answer) = match kind {
        Kind::Capture => (Some(output?), Some(replies.get(1)?.clone())),
        Kind::SideEffect => (None, None),
    };
    Some(Example {
        user,
        reply,
        kind,
        directive: directive.1,
        output,
        answer,
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
    let output = crate::skills::excerpt(&opening.join(" "), LOAD_OUTPUT_CHARS);
    Some(Example {
        user: crate::skills::excerpt(&request, LOAD_REQUEST_CHARS),
        reply: directive.clone(),
        kind: Kind::Capture,
        directive,
        output: Some(if output.is_empty() {
            "(no instructions)".into()
        } else {
            output
        }),
        answer: Some(LOAD_ANSWER.into()),
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
            == Some(crate::dispatch::BUILTIN_SKILL)
    }

    /// The example with its reply opened by the skill's name (`Using calc: !{…}`) when the
    /// reply is the bare directive. Measured on a 0.5B model, first replies only, the 41 cases
    /// two or three times each: a directive written where none was needed fell from 27% to 14%
    /// (it answered jokes in words instead of looking them up), the right script still named
    /// in every reply that needed one; a lead-in naming the kind of need ("That needs a
    /// calculation:") or an intention ("Let me compute it.") cut false triggers too but named
    /// the wrong script or none in 11–18% of those replies: the skill's name matches the
    /// `## NAME` heading the model chooses from. A reply with words of its own, and a skill
    /// read, stay as written.
    pub fn introduced_by(mut self, skill: &str) -> Example {
        if self.reply == self.directive && !self.reads_a_skill() && !skill.is_empty() {
            self.reply = format!("{}{}", crate::chat::result::lead_in(skill), self.reply);
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
/// Measured (33 cases, temperature 0): false triggers written 5 → 3 of 14 and run 2 → 1, right
/// directives unchanged at 17/19, results used unchanged.
const PLAIN: (&str, &str) = (
    "Thanks, that is all I needed.",
    "You're welcome! Ask any time.",
);

/// Questions anyone can answer, asked right after a worked capture and answered in words: one
/// after each of the first two captures that run a script. A small model that sees every
/// question but the thank-you answered with a directive writes one for any question: measured
/// on a 0.5B model (47 cases, temperature 0), it looked up "capital of France", "Hamlet" and
/// "Second World War end" in the dictionary. With these, those came in words (three runs
/// against two): directives written where none was needed fell from 6 to 4–5 of 28, those run
/// from 4 to 1–2; right directives 16–17/19 (17 before). A fact exchange before the examples
/// instead cost right directives (17 to 14–15/19), and one after a side effect cost a
/// pronunciation.
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
    if let (Some(output), Some(answer)) = (&e.output, &e.answer) {
        out.push(Message::user(format!("Output: {output} {CONTINUE}")));
        out.push(Message::assistant(answer.clone()));
    }
    out
}

/// The few-shot exchange sent before the conversation: a thank-you answered in words
/// ([`PLAIN`]), the first [`MAX_EXAMPLES`] examples (one per skill, in the agent's order; a
/// capture's output in the same message the chat loop sends, then a [`KNOWN`] question after
/// each of the first two that run a script), then a question about the syntax answered with
/// directives in backticks. Measured both ways:
/// with the syntax exchange first, questions about the syntax copied the skills' examples and ran
/// them (4 runs in 5); last, they were answered in backticks, at a small cost in directives.
pub fn few_shot(examples: &[Example]) -> Vec<Message> {
    let mut out = Vec::new();
    if !examples.is_empty() {
        out.push(Message::user(PLAIN.0));
        out.push(Message::assistant(PLAIN.1));
    }
    let mut known = KNOWN.iter();
    for e in examples.iter().take(MAX_EXAMPLES) {
        out.extend(exchange(e));
        if e.output.is_some() && e.answer.is_some() {
            // A skill read is left as measured: catalog loads are rare enough already.
            if let Some((q, a)) = (!e.reads_a_skill()).then(|| known.next()).flatten() {
                out.push(Message::user(*q));
                out.push(Message::assistant(*a));
            }
        }
    }
    if !examples.is_empty() {
        let shown = |kind: Kind, generic: &'static str| {
            examples
                .iter()
                .take(MAX_EXAMPLES)
                .find(|e| e.kind == kind && !e.reads_a_skill())
                .map_or(generic, |e| e.directive.as_str())
        };
        out.push(Message::user(
            "How do I write a directive? Show me, without running it.",
        ));
        out.push(Message::assistant(format!(
            "In backticks, as here, a directive is only shown: `{}` runs a script and brings back its output; `{}` runs one only for its effect. Without backticks it runs.",
            shown(Kind::Capture, "!{…}"),
            shown(Kind::SideEffect, "%{…}"),
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
        assert_eq!(ex.kind, Kind::Capture);
        assert_eq!(ex.directive, "!{scripts/calc.py \"23 * 4\"}");
        assert_eq!(ex.output.as_deref(), Some("92"));
        assert_eq!(ex.answer.as_deref(), Some("23 times 4 is 92."));
        let (_, ex) = split_example(SAY);
        assert_eq!(ex.unwrap().kind, Kind::SideEffect);
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
        assert_eq!(ex.kind, Kind::Capture);
        assert_eq!(
            ex.output.as_deref(),
            Some("Find the harbour. Read the table.")
        );
        assert_eq!(ex.answer.as_deref(), Some(LOAD_ANSWER));
        assert!(ex.reads_a_skill());
        // Long text is cut; an empty body still gives an output line.
        let long = "word ".repeat(100);
        let ex = load_example("x", &long, "").unwrap();
        assert!(ex.user.chars().count() <= LOAD_REQUEST_CHARS, "{}", ex.user);
        assert_eq!(ex.output.as_deref(), Some("(no instructions)"));
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
