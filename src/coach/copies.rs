//! Directives copied from the worked examples, and a user's words about not running them
//! (DESIGN §7): coaching for a small model (`coach = "small-model"`). Pure.
//!
//! Measured on a 0.5B model: asked how directives work, it wrote the few-shot example's directive
//! verbatim (`!{scripts/calc.py "287 / 3.5"}`) and so ran it; asked for a poem, it wrote that
//! example with another example's directive stuck to it (`!{scripts/calc.py "287 / 3.5"
//! %{scripts/notify.sh …}}`). A directive of an example's script whose arguments hold that
//! example's arguments whole, which nobody in the conversation wrote, is a copy, not a request:
//! it is not run.

use crate::model::Message;
use crate::scan::{Directive, Event, ScanOptions, Scanner};
use crate::skills::SkillSet;

/// Why a copy is not run, for the model, the status line and the audit log.
pub const COPIED: &str = "a copy of a worked example, not the user's request";

/// Why nothing runs in a turn whose user asked to be shown a directive without running it.
pub const NOT_TO_RUN: &str = "the user asked not to run it";

/// True when `user` says in so many words that nothing is to run ("do not run it", "without
/// running anything", "don't play it"). Measured on a 0.5B model: asked to show the directive
/// for 2+2 "but do not run it", it wrote it bare and it ran. Only a negated verb with an object
/// of its own counts: "do not run before you can walk" asks for nothing of the kind.
pub fn asked_not_to_run(user: &str) -> bool {
    const OBJECTS: [&str; 13] = [
        "it", "anything", "them", "this", "that", "one", "the", "a", "an", "any", "these", "those",
        "your",
    ];
    let user = user.to_lowercase().replace(['\u{2019}', '`'], "'");
    let words: Vec<&str> = user
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let object_after = |i: usize| words.get(i + 1).is_none_or(|w| OBJECTS.contains(w));
    // "do not run it twice", "without running anything else": one run is wanted, only not
    // more, or not another.
    let limited = |i: usize| {
        words
            .get(i + 2)
            .is_some_and(|w| matches!(*w, "twice" | "else" | "other" | "more"))
    };
    let verbs = ["run", "execute", "play"];
    (0..words.len()).any(|i| {
        let w = words[i];
        let negated = |v: &str| {
            w == v
                && i > 0
                && (matches!(words[i - 1], "don't" | "dont" | "never")
                    || (words[i - 1] == "not" && i > 1 && words[i - 2] == "do"))
        };
        let without = |v: &str| w == gerund(v) && i > 0 && words[i - 1] == "without";
        verbs.iter().any(|v| negated(v) || without(v)) && object_after(i) && !limited(i)
    })
}

/// Why nothing runs in a turn whose user talks about directives themselves.
pub const ABOUT_DIRECTIVES: &str = "the user asked about directives, not for one to run";

/// True when `user` names directives ("how do I write a directive?", "the two kinds of
/// directives"): a question about the syntax, whose answer shows directives rather than runs
/// them. Measured on a 0.5B model: asked how to write a directive, it wrote one bare and it ran.
/// A message that opens with a request to act ("use the say directive …", "please run …") asks
/// for one to run, so it is not about them.
pub fn about_directives(user: &str) -> bool {
    const ACT: [&str; 6] = ["use", "run", "execute", "call", "invoke", "try"];
    let lower = user.to_lowercase();
    let mut words = lower
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty());
    let first = words.clone().find(|w| *w != "please");
    if first.is_some_and(|w| ACT.contains(&w)) {
        return false;
    }
    words.any(|w| w == "directive" || w == "directives")
}

/// Why a directive (or tool call, given its arguments' text) of this turn is not to run, when
/// its user's message says so: asked not to run anything ([`asked_not_to_run`]); or asked about
/// directives ([`about_directives`]) and the arguments are not the user's own words ("look up
/// ubiquitous with a directive" runs `lookup "ubiquitous"`; the example a model copies to
/// explain the syntax does not run).
pub fn nothing_to_run(user: &str, args: &str) -> Option<&'static str> {
    if asked_not_to_run(user) {
        Some(NOT_TO_RUN)
    } else if about_directives(user) && !holds_args(user, args) {
        Some(ABOUT_DIRECTIVES)
    } else {
        None
    }
}

/// The words and numbers of `text`, lower-case: runs of letters and digits, a `.` or `,` between
/// digits kept (`3.5`). Operators, quotes and spacing are not compared: "287 divided by 3.5"
/// holds the arguments of `calc "287 / 3.5"`.
fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.to_lowercase().chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let inner_mark = (c == '.' || c == ',')
            && i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if c.is_alphanumeric() || inner_mark {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// True when `args` has words or numbers and the user wrote every one that carries meaning:
/// each number and each word of three letters or more ("Remind me the meeting starts at 3 pm"
/// holds `"Meeting" "It starts at 3 pm."`), or every word when none is that long (`"ja"`).
fn holds_args(user: &str, args: &str) -> bool {
    let user = tokens(user);
    let args = tokens(args);
    let meaningful: Vec<&String> = args
        .iter()
        .filter(|a| a.chars().count() >= 3 || a.chars().any(|c| c.is_ascii_digit()))
        .collect();
    let needed = if meaningful.is_empty() {
        args.iter().collect()
    } else {
        meaningful
    };
    !needed.is_empty() && needed.iter().all(|a| user.contains(a))
}

/// A directive's arguments as one text: what it gives the program or skill script it runs
/// (`python3 scripts/lookup.py ubiquitous` gives `ubiquitous`), read as the dispatcher reads it.
pub fn args_of(d: &Directive, skills: &SkillSet) -> String {
    Written::of(d).runs(skills).1
}

/// `!{skill …}`: skillpipe's own read of a skill, no process.
fn is_skill_read(d: &Directive) -> bool {
    d.body.split_whitespace().next() == Some(crate::dispatch::BUILTIN_SKILL)
}

fn gerund(verb: &str) -> String {
    match verb {
        "run" => "running".into(),
        v => format!("{}ing", v.strip_suffix('e').unwrap_or(v)),
    }
}

/// `raw` as inline code: fenced by more backticks than any run inside it, so it cannot close
/// early, and read back by the scanner as text, never as a directive.
pub fn as_code(raw: &str) -> String {
    let longest = raw.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest > 0 {
        format!("{fence} {raw} {fence}")
    } else {
        format!("{fence}{raw}{fence}")
    }
}

/// The directives of the few-shot exchange.
#[derive(Debug, Default, Clone)]
pub struct Examples(Vec<Written>);

/// One directive as written: its bytes and its words.
#[derive(Debug, Clone)]
struct Written {
    raw: Vec<u8>,
    words: Vec<String>,
}

impl Written {
    fn of(d: &Directive) -> Written {
        Written {
            raw: d.raw.clone(),
            words: shell_words::split(&d.body).unwrap_or_default(),
        }
    }

    /// What it runs, named as the dispatcher resolves it ([`SkillSet::canonical`]: `python3
    /// -u scripts/calc.py` runs `calc/scripts/calc.py`), and the arguments it gives that.
    fn runs(&self, skills: &SkillSet) -> (String, String) {
        let mut argv = skills.canonical(&self.words).into_iter();
        let program = argv.next().unwrap_or_default();
        (program, argv.collect::<Vec<_>>().join(" "))
    }
}

/// True when `inner`'s words and numbers stand, in order and side by side, among `outer`'s.
fn holds_run(outer: &str, inner: &str) -> bool {
    let (outer, inner) = (tokens(outer), tokens(inner));
    !inner.is_empty() && outer.windows(inner.len()).any(|w| w == inner.as_slice())
}

impl Examples {
    /// The directives the assistant messages of `few_shot` would run.
    pub fn from_messages(few_shot: &[Message]) -> Examples {
        let mut found = Vec::new();
        for m in few_shot {
            let Message::Assistant { content, .. } = m else {
                continue;
            };
            let mut scanner = Scanner::new(ScanOptions::default());
            let mut events = Vec::new();
            scanner.feed(content.as_bytes(), &mut events);
            scanner.finish(&mut events);
            for e in events {
                if let Event::Directive(d) = e {
                    found.push(Written::of(&d));
                }
            }
        }
        Examples(found)
    }

    /// True when `d` copies an example that nobody asked for: written exactly as it, or running
    /// its script with its arguments whole among more (their words and numbers, side by side:
    /// `calc "287 / 3.5 …"` holds `"287 / 3.5"`, `calc "3 * 3"` holds nothing of it), while
    /// `asked` (the conversation's user messages and results) does not hold those arguments
    /// ("287 divided by 3.5" asks for `calc "287 / 3.5"`).
    /// An example with no words or numbers in its arguments (`!{scripts/date.sh}`) is never a
    /// copy: written as the user wants it, it would look the same. Nor is a read of a skill's
    /// instructions (`!{skill NAME}`): it runs no process, and a user rarely names the skill
    /// they want ("handle the review comments on my pull request" for `gh-address-comments`),
    /// so blocking a wanted read costs more than allowing a copied one.
    pub fn is_copy(&self, d: &Directive, asked: &str, skills: &SkillSet) -> bool {
        !is_skill_read(d) && self.holds_copy(&Written::of(d), asked, skills)
    }

    /// A native tool call's command (`calc/scripts/calc.py`, `287 / 3.5`), judged as the
    /// directive of the same words would be: a model that calls tools copies the worked
    /// examples' values as readily as one that writes directives.
    pub fn is_copied_call(&self, argv: &[String], asked: &str, skills: &SkillSet) -> bool {
        let written = Written {
            raw: Vec::new(),
            words: argv.to_vec(),
        };
        self.holds_copy(&written, asked, skills)
    }

    fn holds_copy(&self, written: &Written, asked: &str, skills: &SkillSet) -> bool {
        let (runs, given) = written.runs(skills);
        self.0.iter().any(|ex| {
            let (program, args) = ex.runs(skills);
            let same_run = !program.is_empty() && program == runs && holds_run(&given, &args);
            (ex.raw == written.raw || same_run)
                && !tokens(&args).is_empty()
                && !holds_args(asked, &args)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Kind;
    use std::sync::LazyLock;

    /// The skills the examples below run, as the dispatcher would load them.
    fn skills() -> &'static SkillSet {
        static SKILLS: LazyLock<(tempfile::TempDir, SkillSet)> = LazyLock::new(|| {
            let dir = tempfile::tempdir().unwrap();
            let scripts = "calc.py notify.sh say.sh lookup.py date.py date.sh";
            for (name, script) in scripts
                .split(' ')
                .filter_map(|s| Some((s.split_once('.')?.0, s)))
            {
                let file = format!("scripts/{script}");
                crate::skills::write_test_skill(dir.path(), name, &[(&file, "")]);
            }
            let set = SkillSet::load(&[dir.path().to_path_buf()]);
            (dir, set)
        });
        &SKILLS.1
    }

    /// Whether `raw` copies an example of `ex` in a conversation that asked `asked`.
    fn copy(ex: &Examples, raw: &str, asked: &str) -> bool {
        ex.is_copy(&directive(raw), asked, skills())
    }

    fn directive(raw: &str) -> Directive {
        let kind = if raw.starts_with('!') {
            Kind::Capture
        } else {
            Kind::SideEffect
        };
        Directive {
            kind,
            body: raw[2..raw.len() - 1].to_string(),
            raw: raw.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_user_who_says_not_to_run_is_heard() {
        for yes in [
            "Show me the directive for 2+2, but do not run it.",
            "Give an example of the syntax without running anything.",
            "Just show it, don't play it.",
            "Show it without executing it",
        ] {
            assert!(asked_not_to_run(yes), "{yes}");
        }
        for no in [
            "Use the say directive to pronounce hola.",
            "please run the lookup directive for 'candid'",
            "What is 17 times 23?",
            "Run the tests",
            "Play the word again",
            "a runner",
            // A negated verb about something else asks for nothing to be held back.
            "What does the proverb 'do not run before you can walk' mean? Look up walk.",
            "How do I stay fit without running marathons?",
            // One run is wanted, only not more, or not another.
            "What is 17*23? Do not run it twice, once is enough.",
            "My script keeps failing, so without running anything else, what is 17 * 23?",
        ] {
            assert!(!asked_not_to_run(no), "{no}");
        }
        assert!(asked_not_to_run(
            "Show the command; please don\u{2019}t run."
        ));
        assert!(asked_not_to_run(
            "Write the directive but do not execute the command."
        ));
    }

    #[test]
    fn a_question_about_directives_runs_nothing() {
        for yes in [
            "How do I write a directive that runs a command only for its effect?",
            "Explain the two kinds of Directives.",
            "Please explain what a directive is.",
        ] {
            // The example a model copies to explain them has arguments the user never wrote.
            assert_eq!(
                nothing_to_run(yes, "287 / 3.5"),
                Some(ABOUT_DIRECTIVES),
                "{yes}"
            );
            assert_eq!(nothing_to_run(yes, ""), Some(ABOUT_DIRECTIVES), "{yes}");
        }
        assert_eq!(
            nothing_to_run("Show it but do not run it", "2 + 2"),
            Some(NOT_TO_RUN)
        );
        // Naming directives while asking for the user's own words or numbers asks for a run.
        for (user, args) in [
            (
                "Can you use the lookup directive for ubiquitous?",
                "ubiquitous",
            ),
            ("Look up ubiquitous with a directive.", "ubiquitous"),
            (
                "Could you compute 2**10 for me? I know how directives work.",
                "2**10",
            ),
        ] {
            assert_eq!(nothing_to_run(user, args), None, "{user}");
        }
        // The arguments are the script's, behind an interpreter too.
        let d = directive("!{python3 scripts/lookup.py ubiquitous}");
        assert_eq!(args_of(&d, skills()), "ubiquitous");
        assert_eq!(
            nothing_to_run(
                "Look up ubiquitous with a directive.",
                &args_of(&d, skills())
            ),
            None
        );
        for no in [
            "Use the say directive to pronounce hola.",
            "please run the lookup directive for 'candid'",
            "What is 17 times 23?",
            "Who is the director?",
            "directed by whom?",
        ] {
            assert_eq!(nothing_to_run(no, "x"), None, "{no}");
        }
    }

    #[test]
    fn a_directive_as_code_stays_code() {
        assert_eq!(as_code("!{calc \"2 + 2\"}"), "`!{calc \"2 + 2\"}`");
        assert_eq!(as_code("%{say `x`}"), "`` %{say `x`} ``");
        for raw in ["!{calc \"2 + 2\"}", "%{say ``x``}"] {
            let mut scanner = Scanner::new(ScanOptions::default());
            let mut events = Vec::new();
            scanner.feed(as_code(raw).as_bytes(), &mut events);
            scanner.finish(&mut events);
            assert!(
                events.iter().all(|e| matches!(e, Event::Text(_))),
                "{raw}: {events:?}"
            );
        }
    }

    #[test]
    fn only_a_verbatim_example_the_user_did_not_ask_for_is_a_copy() {
        let ex = Examples::from_messages(&[
            Message::user("A train covers 287 km in 3.5 hours?"),
            Message::assistant("!{scripts/calc.py \"287 / 3.5\"}"),
            Message::assistant(
                "Shown only: `!{scripts/calc.py \"1 + 1\"}`; %{scripts/say.sh \"quay\"}",
            ),
        ]);
        let calc = "!{scripts/calc.py \"287 / 3.5\"}";
        assert!(copy(&ex, calc, "How do I write a directive?"));
        assert!(
            !copy(&ex, calc, "What is 287 / 3.5?"),
            "the user asked for it"
        );
        // The same numbers in words: still the user's request.
        assert!(!copy(&ex, calc, "What is 287 divided by 3.5?"));
        assert!(!copy(
            &ex,
            calc,
            "A train covers 287 km in 3.5 hours. How fast is it?"
        ));
        assert!(copy(&ex, calc, "What is 287 divided by 3?"));
        assert!(!copy(&ex, "!{scripts/calc.py \"17 * 23\"}", "17 times 23?"));
        let say = "%{scripts/say.sh \"quay\"}";
        assert!(copy(&ex, say, "Show me how you make me hear a word"));
        assert!(!copy(&ex, say, "How is QUAY pronounced?"));
        // A directive shown in backticks in the examples is no example directive.
        assert!(!copy(&ex, "!{scripts/calc.py \"1 + 1\"}", "hi"));
        assert!(!copy(&Examples::default(), calc, "hi"));
    }

    /// A tool call's command is judged by its words: the example's script, named as the tool
    /// names it (`calc/scripts/calc.py`), with the example's arguments.
    #[test]
    fn a_tool_call_with_an_examples_values_is_a_copy() {
        let ex = Examples::from_messages(&[Message::assistant("!{scripts/calc.py \"287 / 3.5\"}")]);
        let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let copied = argv(&["calc/scripts/calc.py", "287 / 3.5"]);
        assert!(ex.is_copied_call(&copied, "A recipe for pancakes?", skills()));
        assert!(
            !ex.is_copied_call(&copied, "What is 287 / 3.5?", skills()),
            "asked for"
        );
        let other = argv(&["calc/scripts/calc.py", "17 * 23"]);
        assert!(!ex.is_copied_call(&other, "A recipe for pancakes?", skills()));
        let elsewhere = argv(&["notes/scripts/add.py", "287 / 3.5"]);
        assert!(!ex.is_copied_call(&elsewhere, "A recipe for pancakes?", skills()));
    }

    /// Measured: asked for a poem, a 0.5B model wrote the calc example with the notify example
    /// stuck inside it. An example's arguments whole among more are still a copy; the same
    /// script with other values, or the example's values for another script, are not.
    #[test]
    fn an_example_with_more_stuck_to_it_is_a_copy() {
        let ex = Examples::from_messages(&[
            Message::assistant("!{scripts/calc.py \"287 / 3.5\"}"),
            Message::assistant("Sent. %{scripts/notify.sh \"Meeting\" \"It starts at 3 pm.\"}"),
        ]);
        let poem = "Write two lines of poetry about the sea.";
        let stuck = "!{scripts/calc.py \"287 / 3.5\" %{scripts/notify.sh \"Meeting\" \"It starts at 3 pm.\"}}";
        assert!(copy(&ex, stuck, poem));
        assert!(copy(&ex, "!{scripts/calc.py \"287 / 3.5 * 2\"}", poem));
        assert!(
            !copy(
                &ex,
                "!{scripts/calc.py \"287 / 3.5 * 2\"}",
                "287 / 3.5, doubled?"
            ),
            "the user asked for those values"
        );
        // Other values of the same script: the user's request, even where a number recurs.
        for other in [
            "!{scripts/calc.py \"3 * 3\"}",
            "!{scripts/calc.py \"287 + 1\"}",
        ] {
            assert!(!copy(&ex, other, "three times three?"), "{other}");
        }
        // The example's values for another script are no copy of it.
        assert!(!copy(&ex, "!{scripts/lookup.py \"287 / 3.5\"}", poem));
        assert!(!copy(&ex, "!{myscripts/calc.py \"287 / 3.5\"}", poem));
        assert!(!copy(
            &ex,
            "!{python -m scripts.lookup \"287 / 3.5\"}",
            poem
        ));
        // The example's script started another way the dispatcher runs it is still the
        // example's script.
        for started in [
            "!{python3 scripts/calc.py \"287 / 3.5\"}",
            "!{calc/scripts/calc.py \"287 / 3.5\"}",
            "!{<path-to-skill>/scripts/calc.py \"287 / 3.5\"}",
            "!{python3 -u scripts/calc.py \"287 / 3.5\"}",
            "!{python -m scripts.calc \"287 / 3.5\"}",
        ] {
            assert!(copy(&ex, started, poem), "{started}");
            assert!(!copy(&ex, started, "287 / 3.5?"), "{started}");
        }
        // A wrapper or an interpreter's path in front runs no skill script (the dispatcher
        // runs the command as written): no copy of one.
        for other in [
            "!{/usr/bin/python3 calc/scripts/calc.py \"287 / 3.5\"}",
            "!{env python3 scripts/calc.py \"287 / 3.5\"}",
            "!{uv run scripts/calc.py \"287 / 3.5\"}",
        ] {
            assert!(!copy(&ex, other, poem), "{other}");
        }
        // An example written with its interpreter, or its folder, is its script too.
        let long = Examples::from_messages(&[Message::assistant(
            "!{python3 calc/scripts/calc.py \"287 / 3.5\"}",
        )]);
        assert!(copy(&long, "!{scripts/calc.py \"287 / 3.5\"}", poem));
        assert!(!copy(&long, "!{scripts/calc.py \"3 * 3\"}", poem));
        // An example with no arguments looks the same asked for or copied: never a copy, with
        // an interpreter in front of it too.
        let dated = Examples::from_messages(&[Message::assistant("!{python3 scripts/date.py}")]);
        assert!(!copy(&dated, "!{python3 scripts/date.py}", "The date?"));
        let bare = Examples::from_messages(&[Message::assistant("!{scripts/date.sh}")]);
        assert!(!copy(&bare, "!{scripts/date.sh}", "What's today's date?"));
        assert!(!copy(&bare, "!{scripts/date.sh \"+%Y\"}", "hi"));
    }

    /// Short filler words of an example's arguments need not be the user's: "it", "at" and "pm"
    /// are not what the user asks for, the meeting, the start and the 3 are.
    #[test]
    fn the_user_holds_an_example_by_its_meaningful_words() {
        let ex = Examples::from_messages(&[Message::assistant(
            "Sent. %{scripts/notify.sh \"Meeting\" \"It starts at 3 pm.\"}",
        )]);
        let long = "%{scripts/notify.sh \"Meeting\" \"It starts at 3 pm. Bring slides.\"}";
        assert!(!copy(
            &ex,
            long,
            "Remind me the meeting starts at 3 pm, bring slides"
        ));
        assert!(copy(
            &ex,
            long,
            "Remind me the meeting starts at 4, bring slides"
        ));
        // Arguments of short words only: every one is needed.
        let ja = Examples::from_messages(&[Message::assistant("%{scripts/say.sh \"ja\"}")]);
        assert!(!copy(&ja, "%{scripts/say.sh \"ja\"}", "How is ja said?"));
        assert!(copy(
            &ja,
            "%{scripts/say.sh \"ja\"}",
            "How is yes said in German?"
        ));
    }

    /// A read of a skill is never a copy, even written as the example's: it runs no process,
    /// and the skill it reads may be the one the user wants without naming it.
    #[test]
    fn a_skill_read_is_never_a_copy() {
        let ex = Examples::from_messages(&[
            Message::user("Help address review or issue comments on the open GitHub PR"),
            Message::assistant("!{skill gh-address-comments}"),
            Message::assistant("!{scripts/calc.py \"287 / 3.5\"}"),
        ]);
        let read = "!{skill gh-address-comments}";
        for user in [
            "Please handle the reviewer feedback on my pull request",
            "yes",
            "What is 2+2?",
        ] {
            assert!(!copy(&ex, read, user), "{user}");
        }
        // The control: a script example in the same exchange still needs all its arguments.
        assert!(copy(&ex, "!{scripts/calc.py \"287 / 3.5\"}", "yes"));
    }
}
