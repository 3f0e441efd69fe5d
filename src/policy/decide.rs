//! The allow/deny decision for one resolved command (DESIGN §2). Pure.
//!
//! Order: master switch, then denied patterns (which win), then allowed patterns; anything not
//! allowed is denied. The patterns are parsed once, by [`ScriptPolicy::compile`]; a policy with a
//! pattern that does not parse never compiles, so nothing can run under it.
//!
//! A deny pattern also sees through programs that run their arguments as a command
//! ([`wrapper`]: `env touch x`, `env -S 'touch x'`, `nice -n 5 rm y`, `setarch x86_64 rm y`,
//! `xargs rm`, `find … -exec rm`, `watch 'ls; rm y'`): under `--allow '*' --deny rm` each of
//! these is denied too. Every later argument of a wrapper is tried as the start of a command,
//! which can deny a harmless call (`find -name rm`): the safe side. What a deny list cannot see is code in a string — `sh -c '…'`, `python3 -c '…'`,
//! `perl -e '…'` — so with `*` allowed, deny the shells and interpreters as well; a deny list is
//! not a sandbox.

use super::{PolicyError, ScriptPolicy};
use crate::command::wrapper::{self, Started};
use crate::command::{Pattern, Target, escape_controls};

/// The policy's refusal ([`super::Decision::Denied`]): what was refused and why. Its `Display`
/// is one line naming the command and the pattern, in the policy's terms (no command-line
/// flags: the `skillpipe` binary adds its own where it prints). Commands and patterns are shown
/// with control characters escaped (they may be model text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Denied {
    /// `allow_scripts` is off: nothing runs.
    #[error("scripts are not allowed (allow_scripts is off)")]
    ScriptsOff,
    /// The command matches a denied pattern.
    #[error("`{command}` matches denied pattern `{pattern}`")]
    Pattern {
        /// The command, as one quoted line.
        command: String,
        /// The denied pattern, as written in the policy.
        pattern: String,
    },
    /// The command would start another (`env`, `xargs`, `find -exec` …) that matches a denied
    /// pattern.
    #[error("`{command}` would run `{inner}`, which matches denied pattern `{pattern}`")]
    Wrapped {
        /// The command, as one quoted line.
        command: String,
        /// The command it would start.
        inner: String,
        /// The denied pattern, as written in the policy.
        pattern: String,
    },
    /// No allowed pattern matches.
    #[error("{}", not_allowed(command, suggestion.as_deref()))]
    NotAllowed {
        /// The command, as one quoted line.
        command: String,
        /// A pattern that would allow it (the program, or `SKILL:SCRIPT`); `None` when code is
        /// given to an interpreter, which no pattern short of the interpreter itself covers, or
        /// the program is a placeholder (`...`, `<command>`) that names none.
        suggestion: Option<String>,
    },
}

impl Denied {
    /// What was refused, without what would lift it: the model's wording, as changing the
    /// policy is the user's to do.
    pub fn refused(&self) -> String {
        match self {
            Denied::ScriptsOff => "scripts are not allowed".to_string(),
            Denied::NotAllowed {
                command,
                suggestion: Some(_),
            } => format!("`{command}` is not in allowed_commands"),
            other => other.to_string(),
        }
    }
}

fn not_allowed(command: &str, suggestion: Option<&str>) -> String {
    let program = crate::command::parse_argv(command)
        .ok()
        .and_then(|argv| argv.into_iter().next())
        .unwrap_or_default();
    match suggestion {
        Some(p) => format!(
            "`{command}` is not in allowed_commands (the pattern `{}` would allow it)",
            escape_controls(p)
        ),
        None if crate::command::is_placeholder(&program) => format!(
            "`{command}` is a placeholder, not a command (to show the syntax, put it in backticks)"
        ),
        None if crate::command::interpreter::is_wrapper(&program) => format!(
            "`{command}` is not in allowed_commands (`{}` runs the command after it: no pattern \
             short of this whole command covers it; write the command without it)",
            escape_controls(&program)
        ),
        None => format!(
            "`{command}` is not in allowed_commands (code given to an interpreter: no pattern short of allowing the interpreter itself covers it)"
        ),
    }
}

/// A policy's command patterns, parsed once ([`ScriptPolicy::compile`]).
#[derive(Debug, Clone)]
pub struct CompiledPolicy {
    allow_scripts: bool,
    denied: Vec<Pattern>,
    allowed: Vec<Pattern>,
}

impl ScriptPolicy {
    /// Checks the policy and parses its patterns for [`decide`].
    pub fn compile(&self) -> Result<CompiledPolicy, PolicyError> {
        self.validate()?;
        let parse = |t: &String| Pattern::parse(t).expect("validated above");
        Ok(CompiledPolicy {
            allow_scripts: self.allow_scripts,
            denied: self.denied_commands.iter().map(parse).collect(),
            allowed: self.allowed_commands.iter().map(parse).collect(),
        })
    }
}

impl CompiledPolicy {
    /// The first denied pattern that matches `target` itself (as written in the policy).
    pub fn denied_by(&self, target: &Target) -> Option<&str> {
        self.denied
            .iter()
            .find(|p| p.denies(target))
            .map(Pattern::text)
    }

    /// Whether some call of `target`'s program or script (its `args` are not looked at) could
    /// be allowed: an allowed pattern matches it with some arguments, and no denied pattern
    /// refuses it whatever the arguments. The master switch is not looked at. For offering only
    /// what may run (`skillpipe mcp`'s tools); each call is still judged by [`decide`].
    pub fn could_allow(&self, target: &Target) -> bool {
        let alone = target.alone();
        !self.denied.iter().any(|p| p.denies(&alone))
            && self.allowed.iter().any(|p| p.matches_some_call(&alone))
    }
}

/// Judges `target` against the policy: denied patterns win, then an allowed pattern must
/// match.
pub fn decide(policy: &CompiledPolicy, target: &Target) -> Result<(), Denied> {
    if !policy.allow_scripts {
        return Err(Denied::ScriptsOff);
    }
    let command = target.display();
    let started = started_by(target);
    let wrapped: Vec<Target> = started
        .starts
        .iter()
        .map(|&(l, i)| Target::System {
            program: &started.lines[l][i],
            args: &started.lines[l][i + 1..],
        })
        .collect();
    for p in &policy.denied {
        if p.denies(target) {
            let pattern = escape_controls(p.text());
            return Err(Denied::Pattern { command, pattern });
        }
        if let Some(inner) = wrapped.iter().find(|t| p.denies(t)) {
            let pattern = escape_controls(p.text());
            let inner = inner.display();
            return Err(Denied::Wrapped {
                command,
                inner,
                pattern,
            });
        }
    }
    if policy.allowed.iter().any(|p| p.matches(target)) {
        return Ok(());
    }
    let suggestion = Some(target.suggest_pattern()).filter(|s| !s.is_empty());
    Err(Denied::NotAllowed {
        command,
        suggestion,
    })
}

/// The commands a system command may start through its wrappers (see [`wrapper::started`]).
fn started_by(target: &Target) -> Started {
    let Target::System { program, args } = *target else {
        return Started::default();
    };
    wrapper::started(
        std::iter::once(program.to_string())
            .chain(args.iter().cloned())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::parse_argv;
    use crate::command::test_targets::{script, sys};

    /// The answer as the tests compare it. A policy that does not compile denies (at build).
    #[derive(Debug, PartialEq, Eq)]
    enum Decision {
        Allow,
        Deny(String),
    }

    impl Decision {
        fn is_allowed(&self) -> bool {
            matches!(self, Decision::Allow)
        }
    }

    fn decide(policy: &ScriptPolicy, target: &Target) -> Decision {
        match policy.compile() {
            Err(e) => Decision::Deny(e.to_string()),
            Ok(c) => match super::decide(&c, target) {
                Ok(()) => Decision::Allow,
                Err(d) => Decision::Deny(d.to_string()),
            },
        }
    }

    fn policy(allowed: &[&str], denied: &[&str]) -> ScriptPolicy {
        ScriptPolicy {
            allow_scripts: true,
            allowed_commands: allowed.iter().map(|s| s.to_string()).collect(),
            denied_commands: denied.iter().map(|s| s.to_string()).collect(),
            ..ScriptPolicy::default()
        }
    }

    /// Decide a directive body the way the dispatcher will: parse, classify, match.
    /// `Err` = invalid body. Skill scripts are resolved as if they exist in `skill`.
    fn run(policy: &ScriptPolicy, skill: &str, body: &str) -> Result<Decision, String> {
        let argv = parse_argv(body).map_err(|e| e.to_string())?;
        let (first, args) = argv.split_first().unwrap();
        let rel_path = first
            .split_once("scripts/")
            .map(|(_, r)| format!("scripts/{r}"));
        let target = match (crate::command::script_ref(first), &rel_path) {
            (Some(_), Some(rel_path)) => script(skill, rel_path, args),
            _ => sys(first, args),
        };
        Ok(decide(policy, &target))
    }

    /// A placeholder copied from an explanation gets no pattern to allow, and says what it is.
    #[test]
    fn a_placeholder_is_named_as_one() {
        let p = policy(&["echo"], &[]);
        for body in ["...", "…", "... x"] {
            let Ok(Decision::Deny(d)) = run(&p, "s", body) else {
                panic!("{body}: not denied");
            };
            assert!(
                d.to_string().contains("is a placeholder, not a command"),
                "{d}"
            );
        }
    }

    /// Every hostile body is either invalid or denied — never allowed — under a policy that
    /// allows the innocent-looking commands they try to smuggle past.
    #[test]
    fn hostile_bodies_never_run() {
        let p = policy(
            &[
                "echo",
                "true",
                "a",
                "cat",
                "touch",
                "git status",
                "good/scripts/*",
                "say",
            ],
            &[],
        );
        let cases: &[(&str, &str)] = &[
            ("echo hi; touch x", "invalid"),
            ("echo $(id)", "invalid"),
            ("echo ${IFS}x", "invalid"),
            ("echo `id`", "invalid"),
            ("echo \"$(id)\"", "invalid"),
            ("echo \"`id`\"", "invalid"),
            ("true && touch x", "invalid"),
            ("a || b", "invalid"),
            ("echo|sh", "invalid"),
            ("echo > f", "invalid"),
            ("echo >> f", "invalid"),
            ("cat < /etc/passwd", "invalid"),
            ("echo hi\ntouch x", "invalid"),
            ("echo a & touch b", "invalid"),
            ("echo $HOME", "invalid"),
            ("echo 'a'\"$HOME\"", "invalid"),
            ("(touch x)", "invalid"),
            ("echo #; touch x", "invalid"),
            ("cat ~/.ssh/id_rsa", "invalid"),
            ("PATH=/tmp echo", "invalid"),
            ("echo hi\0", "invalid"),
            ("\0echo", "invalid"),
            ("echo a\rtouch x", "invalid"),
            ("echo \u{202E}x", "invalid"),
            ("echo 'unterminated", "invalid"),
            ("/usr/bin/touch x", "denied"),
            ("./touch x", "denied"),
            ("../touch x", "denied"),
            ("bin/touch x", "denied"),
            ("e*o hi", "denied"),
            ("'e*o' hi", "denied"),
            ("ECHO hi", "denied"),
            ("Echo hi", "denied"),
            ("\u{435}cho hi", "denied"), // Cyrillic е
            ("\u{ff45}\u{ff43}\u{ff48}\u{ff4f} hi", "denied"), // fullwidth
            ("ech\u{200b}o hi", "denied"), // zero-width space
            ("\"echo \" hi", "denied"),
            ("git push", "denied"),
            ("git", "denied"),
            ("git statu", "denied"),
            ("sh -c 'echo hi'", "denied"),
            ("scripts/x.py", "denied"),
            ("evil/scripts/x.py", "denied"),
        ];
        for (body, expected) in cases {
            let got = run(&p, "evil", body);
            let kind = match &got {
                Err(_) => "invalid",
                Ok(Decision::Deny(_)) => "denied",
                Ok(Decision::Allow) => panic!("{body:?} was allowed"),
            };
            assert_eq!(kind, *expected, "{body:?}: {got:?}");
        }
    }

    #[test]
    fn plain_commands_are_allowed() {
        let p = policy(
            &["echo", "jq", "printf", "say", "git status", "scripts/*"],
            &[],
        );
        for body in [
            "echo \"a;b\"",
            "echo \\$HOME",
            "jq '{a:1}' f",
            "printf {x}",
            "say \"hello\"",
            "git status",
            "echo 'it''s $(fine)'",
            "scripts/lookup.py term",
        ] {
            assert_eq!(run(&p, "any", body), Ok(Decision::Allow), "{body}");
        }
    }

    #[test]
    fn scripts_of_another_skill_are_denied() {
        let p = policy(&["good/scripts/*"], &[]);
        assert_eq!(run(&p, "good", "scripts/x.py"), Ok(Decision::Allow));
        assert_eq!(run(&p, "good", "good/scripts/x.py"), Ok(Decision::Allow));
        let d = run(&p, "evil", "scripts/x.py").unwrap();
        assert_eq!(
            d,
            Decision::Deny(
                "`evil/scripts/x.py` is not in allowed_commands (the pattern `evil:x` would allow it)"
                    .into()
            )
        );
    }

    #[test]
    fn master_switch_comes_first() {
        let mut p = policy(&["*"], &[]);
        p.allow_scripts = false;
        assert_eq!(
            run(&p, "s", "echo hi"),
            Ok(Decision::Deny(Denied::ScriptsOff.to_string()))
        );
    }

    #[test]
    fn denied_wins_over_allowed() {
        let p = policy(&["git", "scripts/*"], &["git push", "scripts/rm*"]);
        assert_eq!(run(&p, "s", "git status"), Ok(Decision::Allow));
        assert_eq!(
            run(&p, "s", "git push origin"),
            Ok(Decision::Deny(
                "`git push origin` matches denied pattern `git push`".into()
            ))
        );
        assert!(!run(&p, "s", "scripts/rmall.sh").unwrap().is_allowed());
        assert!(run(&p, "s", "scripts/ok.sh").unwrap().is_allowed());
    }

    #[test]
    fn star_allows_everything_but_deny_still_wins() {
        let p = policy(&["*"], &["rm", "/usr/bin/curl", "evil/scripts/*"]);
        for body in ["echo hi", "/usr/bin/touch x", "./anything", "scripts/x.py"] {
            assert_eq!(run(&p, "good", body), Ok(Decision::Allow), "{body}");
        }
        for body in [
            "rm -rf x",
            "/bin/rm x",
            "./rm",
            "RM x",
            "/usr/bin/curl x",
            "/usr//bin/curl x",
            "scripts/x.py",
        ] {
            let d = run(&p, "evil", body).unwrap();
            assert!(
                matches!(&d, Decision::Deny(r) if r.contains("matches denied pattern")),
                "{body}: {d:?}"
            );
        }
    }

    #[test]
    fn deny_sees_through_wrappers() {
        let p = policy(&["*"], &["touch", "rm", "git push"]);
        for body in [
            "env touch x",
            "env -i PATH=/usr/bin touch x",
            "/usr/bin/env /usr/bin/touch x",
            "nice -n 5 touch x",
            "timeout 5 touch x",
            "TIMEOUT 5 TOUCH x",
            "env nice timeout 5 /usr/bin/touch x",
            "xargs -a list rm",
            "find . -name x -exec rm {} +",
            "sudo -u root rm -rf /",
            "env git push origin",
            "env -S 'touch x'",
            "env -S'touch x'",
            "env --split-string='touch x'",
            "env --split-string 'touch x'",
            "env -iS 'touch x'",
            "setarch x86_64 touch x",
            "setarch x86_64 -R touch x",
            "linux32 touch x",
            "linux64 touch x",
            "watch -n 1 'true; touch x'",
            "su -c 'touch x'",
        ] {
            let d = run(&p, "s", body).unwrap();
            assert!(
                matches!(&d, Decision::Deny(r) if r.contains("would run `") && r.contains("matches denied pattern")),
                "{body}: {d:?}"
            );
        }
        assert_eq!(
            run(&p, "s", "env touch x").unwrap(),
            Decision::Deny(
                "`env touch x` would run `touch x`, which matches denied pattern `touch`".into()
            )
        );
        // Not wrappers, or nothing denied inside: allowed as before.
        for body in [
            "env",
            "env FOO=1 echo hi",
            "echo touch x",
            "git pushx",
            "env git status",
        ] {
            assert_eq!(run(&p, "s", body), Ok(Decision::Allow), "{body}");
        }
        // Allowing a wrapper is still the user's choice: `--allow env` does not allow `env x`
        // to be anything but `env`, and the pattern `echo` never allows `env echo`.
        let p = policy(&["echo"], &[]);
        assert!(!run(&p, "s", "env echo hi").unwrap().is_allowed());
    }

    #[test]
    fn reasons_are_one_line_with_a_usable_hint() {
        let p = policy(&[], &[]);
        let args = vec!["a\nb".to_string()];
        let t = sys("it's", &args);
        let Decision::Deny(r) = decide(&p, &t) else {
            panic!()
        };
        assert!(!r.contains('\n'), "{r}");
        assert_eq!(
            r,
            r"`'it'\''s' 'a␊b'` is not in allowed_commands (the pattern `'it'\''s'` would allow it)"
        );
        // The suggested pattern, quoted for a shell (as the binary's `--allow` hint does), comes
        // back as itself and allows the target.
        let hint = t.suggest_pattern();
        let shell_arg = &parse_argv(&format!("x '{}'", hint.replace('\'', "'\\''"))).unwrap()[1];
        assert_eq!(shell_arg, &hint);
        let p = policy(&[hint.as_str()], &[]);
        assert_eq!(decide(&p, &t), Decision::Allow);
    }

    #[test]
    fn could_allow_looks_at_the_program_or_script_alone() {
        let could = |allowed: &[&str], denied: &[&str], t: &Target| {
            policy(allowed, denied).compile().unwrap().could_allow(t)
        };
        let tool = Target::Tool {
            skill: "t",
            id: "stats",
            args: &[],
        };
        let script = script("t", "scripts/ok.py", &[]);
        assert!(could(&["t:stats"], &[], &tool));
        assert!(!could(&["t:stats"], &[], &script));
        // A pattern with argument words allows some call; a deny with them refuses only some.
        assert!(could(&["t:ok --fast *"], &[], &script));
        assert!(could(&["scripts/*"], &["t:ok --danger"], &script));
        assert!(!could(&["scripts/*"], &["t:ok"], &script));
        assert!(!could(&["*"], &["scripts/*"], &tool));
        assert!(!could(&[], &[], &tool));
    }

    #[test]
    fn denied_pattern_is_shown_on_one_line() {
        let p = policy(&["*"], &["echo 'a\nb'"]);
        let args = vec!["a\nb".to_string()];
        let t = sys("echo", &args);
        assert_eq!(
            decide(&p, &t),
            Decision::Deny(r"`echo 'a␊b'` matches denied pattern `echo 'a␊b'`".into())
        );
    }

    #[test]
    fn bad_patterns_fail_closed() {
        let p = policy(&["*"], &["rm [oops"]);
        let d = run(&p, "s", "echo hi").unwrap();
        assert!(
            matches!(&d, Decision::Deny(r) if r.contains("invalid pattern `rm [oops`")),
            "{d:?}"
        );
        let p = policy(&["echo; true", "ls [x"], &[]);
        assert!(!run(&p, "s", "echo hi").unwrap().is_allowed());
    }
}
