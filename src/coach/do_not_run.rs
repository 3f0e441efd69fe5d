//! A user's words about not running directives (DESIGN §7), the `do-not-run` coaching piece.
//! Pure.

use crate::scan::Directive;
use crate::skills::SkillSet;

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
    runs(d, skills).1
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

/// A directive's words, read as the dispatcher reads them: what it runs
/// ([`SkillSet::canonical`]: `python3 -u scripts/calc.py` runs `calc/scripts/calc.py`) and the
/// arguments it gives that.
fn runs(d: &Directive, skills: &SkillSet) -> (String, String) {
    let words = shell_words::split(&d.body).unwrap_or_default();
    let mut argv = skills.canonical(&words).into_iter();
    let program = argv.next().unwrap_or_default();
    (program, argv.collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Event, Kind, ScanOptions, Scanner};
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
}
