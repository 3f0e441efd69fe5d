//! Directive body → argv with POSIX shell-word rules, and no shell.
//!
//! The split itself is `shell_words::split`, which only does quote removal and reads operators
//! as literal text. That is exactly wrong for model output: `echo hi; rm x` would become the
//! harmless-looking argv `["echo", "hi;", "rm", "x"]` while the model (and the user reading it)
//! meant two commands. So a pre-scan with the same quoting rules rejects everything a shell
//! would treat specially before the split runs.
//!
//! Decisions where POSIX leaves room:
//! - `#` unquoted at the start of a word starts a comment in a shell: rejected as shell syntax.
//! - `~` unquoted at the start of a word would be tilde-expanded by a shell: rejected, so a
//!   model learns to write the path out instead of silently getting a file literally named `~`.
//!   (`HEAD~1` and `'~'` are plain text.)
//! - `{a,b}`, `*`, `?`, `[` are passed literally; skillpipe does no expansion of any kind.
//! - Backslash-newline outside single quotes is a line continuation (removed), as in a shell.
//!   A trailing lone backslash is rejected.
//! - A first word that looks like `NAME=value` would be an environment assignment: rejected.
//! - Control characters (C0 except tab and newline, DEL, C1) and the Unicode bidirectional
//!   overrides/isolates are rejected anywhere, quoted or not: they have no business in a command
//!   line and can make the confirmation prompt show something other than what would run.
//!   A newline is allowed inside quotes only.

/// Why a directive body is not a runnable command. Offsets are byte offsets into the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidBody {
    /// Nothing but whitespace, or an empty program name (`""`).
    #[error("empty command")]
    Empty,
    /// Something a shell would interpret: an operator, an expansion, a comment, a newline.
    #[error(
        "shell syntax is not supported; commands run without a shell (found {})",
        shown(found)
    )]
    ShellSyntax {
        /// The character(s) found.
        found: String,
        /// Byte offset in the body.
        offset: usize,
    },
    /// A control or bidi-override character.
    #[error("control character U+{:04X} at byte {offset} is not allowed in a command", *ch as u32)]
    ControlChar {
        /// The character.
        ch: char,
        /// Byte offset in the body.
        offset: usize,
    },
    /// A quote (`'` or `"`) that is never closed.
    #[error(
        "unbalanced {} quote: the quote at byte {offset} is never closed",
        if *quote == '\'' { "single" } else { "double" }
    )]
    UnbalancedQuote {
        /// `'` or `"`.
        quote: char,
        /// Byte offset of the opening quote.
        offset: usize,
    },
    /// A backslash with nothing after it.
    #[error("trailing backslash at byte {offset} escapes nothing")]
    TrailingBackslash {
        /// Byte offset of the backslash.
        offset: usize,
    },
    /// `NAME=value cmd`: a shell would set an environment variable.
    #[error(
        "environment assignments are not supported; commands run without a shell (found `{word}`)"
    )]
    EnvAssignment {
        /// The word.
        word: String,
    },
}

impl InvalidBody {
    /// The byte offset of the offending character, when there is one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            InvalidBody::ShellSyntax { offset, .. }
            | InvalidBody::ControlChar { offset, .. }
            | InvalidBody::UnbalancedQuote { offset, .. }
            | InvalidBody::TrailingBackslash { offset } => Some(*offset),
            InvalidBody::Empty | InvalidBody::EnvAssignment { .. } => None,
        }
    }
}

/// A [`InvalidBody::ShellSyntax`] token as its message names it.
fn shown(found: &str) -> String {
    match found {
        "\n" => "an unquoted newline".to_string(),
        "`" => "a backtick".to_string(),
        s => format!("`{s}`"),
    }
}

/// Split a directive body into argv. Fails closed: anything a shell would treat specially is
/// an error, never silently passed on.
pub fn parse_argv(body: &str) -> Result<Vec<String>, InvalidBody> {
    prescan(body)?;
    // The pre-scan has already proven the quotes balanced; map the error anyway, never panic.
    let argv = shell_words::split(body).map_err(|_| InvalidBody::UnbalancedQuote {
        quote: '"',
        offset: 0,
    })?;
    let Some(program) = argv.first() else {
        return Err(InvalidBody::Empty);
    };
    if program.is_empty() {
        return Err(InvalidBody::Empty);
    }
    if looks_like_assignment(program) {
        return Err(InvalidBody::EnvAssignment {
            word: program.clone(),
        });
    }
    Ok(argv)
}

/// Checks one argument that did not come through [`parse_argv`] (a native tool call's `args`,
/// `skillpipe run -- ARGS`): the characters refused in a directive body are refused here too,
/// so nothing can disguise what the confirmation prompt and the audit log show.
pub fn check_word(word: &str) -> Result<(), InvalidBody> {
    match word.char_indices().find(|&(_, c)| is_forbidden_char(c)) {
        Some((offset, ch)) => Err(InvalidBody::ControlChar { ch, offset }),
        None => Ok(()),
    }
}

/// Characters refused anywhere in a body.
fn is_forbidden_char(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Characters that start a shell operator when unquoted.
fn is_operator(c: char) -> bool {
    matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')')
}

fn syntax(found: impl Into<String>, offset: usize) -> InvalidBody {
    InvalidBody::ShellSyntax {
        found: found.into(),
        offset,
    }
}

/// What a `$` at `i` starts, for the error message: `$(`, `${` or `$`.
fn dollar_token(body: &str, i: usize) -> String {
    match body[i + 1..].chars().next() {
        Some(c @ ('(' | '{')) => format!("${c}"),
        _ => "$".to_string(),
    }
}

enum Quote {
    None,
    Single(usize),
    Double(usize),
}

/// Walk the body with the same quoting rules as `shell_words::split` and reject shell syntax.
fn prescan(body: &str) -> Result<(), InvalidBody> {
    if let Some((offset, ch)) = body.char_indices().find(|&(_, c)| is_forbidden_char(c)) {
        return Err(InvalidBody::ControlChar { ch, offset });
    }
    let mut quote = Quote::None;
    // True where a new word would begin: a shell gives `#` and `~` meaning only there.
    let mut word_start = true;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match quote {
            Quote::Single(_) => {
                if c == '\'' {
                    quote = Quote::None;
                }
            }
            Quote::Double(_) => match c {
                '"' => quote = Quote::None,
                // Whatever follows is not special: either an escaped `$ ` " \` or newline, or a
                // plain character with the backslash kept.
                '\\' => {
                    chars.next();
                }
                '$' => return Err(syntax(dollar_token(body, i), i)),
                '`' => return Err(syntax("`", i)),
                _ => {}
            },
            Quote::None => match c {
                ' ' | '\t' => {
                    word_start = true;
                    continue;
                }
                '\n' => return Err(syntax("\n", i)),
                '\'' => quote = Quote::Single(i),
                '"' => quote = Quote::Double(i),
                '\\' => match chars.next() {
                    None => return Err(InvalidBody::TrailingBackslash { offset: i }),
                    // Line continuation: removed, so it neither ends nor starts a word.
                    Some((_, '\n')) => continue,
                    Some(_) => {}
                },
                // `<skill-path>/scripts/x.py`, as SKILL.md files write a skill's folder: a
                // placeholder the skill's scripts resolve, not a redirection (nothing here
                // redirects: a shell would read `<name` as input and `>/…` as output).
                '<' if word_start && placeholder_len(&body[i..]).is_some() => {
                    let len = placeholder_len(&body[i..]).unwrap_or(1);
                    while chars.peek().is_some_and(|&(j, _)| j < i + len) {
                        chars.next();
                    }
                }
                c if is_operator(c) => {
                    let mut found = c.to_string();
                    if let Some(&(_, next)) = chars.peek()
                        && is_operator(next)
                    {
                        found.push(next);
                    }
                    return Err(syntax(found, i));
                }
                '$' => return Err(syntax(dollar_token(body, i), i)),
                '`' => return Err(syntax("`", i)),
                '#' | '~' if word_start => return Err(syntax(c.to_string(), i)),
                _ => {}
            },
        }
        word_start = false;
    }
    match quote {
        Quote::None => Ok(()),
        Quote::Single(offset) => Err(InvalidBody::UnbalancedQuote {
            quote: '\'',
            offset,
        }),
        Quote::Double(offset) => Err(InvalidBody::UnbalancedQuote { quote: '"', offset }),
    }
}

/// The length of a folder placeholder `<name>` at the start of `rest` when a `/` follows it
/// (`<skill-creator-path>/eval-viewer/x.py`): letters, digits, `-` and `_` inside.
fn placeholder_len(rest: &str) -> Option<usize> {
    let inner = rest.strip_prefix('<')?;
    let end = inner.find('>')?;
    let name = &inner[..end];
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    (named && inner[end + 1..].starts_with('/')).then_some(end + 2)
}

/// `NAME=...` with NAME a shell variable name.
fn looks_like_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> Vec<String> {
        parse_argv(body).unwrap_or_else(|e| panic!("{body:?} should parse: {e}"))
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn single_words_are_checked_like_bodies() {
        assert_eq!(check_word("plain 'word' $x; | tab\there\nnewline"), Ok(()));
        assert_eq!(
            check_word("a\u{1b}[2K"),
            Err(InvalidBody::ControlChar {
                ch: '\u{1b}',
                offset: 1
            })
        );
        assert!(check_word("x\u{202E}y").is_err());
        assert!(check_word("nul\0").is_err());
    }

    #[test]
    fn plain_words_and_quotes() {
        assert_eq!(ok("say \"hello\""), argv(&["say", "hello"]));
        assert_eq!(ok("  say   hi\tthere "), argv(&["say", "hi", "there"]));
        assert_eq!(ok("echo \"a;b\""), argv(&["echo", "a;b"]));
        assert_eq!(ok("jq '{a:1}' f"), argv(&["jq", "{a:1}", "f"]));
        assert_eq!(ok("printf {x}"), argv(&["printf", "{x}"]));
        assert_eq!(ok("echo {a,b}"), argv(&["echo", "{a,b}"]));
        assert_eq!(ok("ls *.txt ? [ab]"), argv(&["ls", "*.txt", "?", "[ab]"]));
        assert_eq!(ok("echo 'a b'\"c d\"e"), argv(&["echo", "a bc de"]));
        assert_eq!(ok("echo ''"), argv(&["echo", ""]));
    }

    #[test]
    fn escapes_make_shell_characters_literal() {
        assert_eq!(ok("echo \\$HOME"), argv(&["echo", "$HOME"]));
        assert_eq!(ok("echo a\\;b \\|"), argv(&["echo", "a;b", "|"]));
        assert_eq!(
            ok("echo \"\\$x \\` \\\" \\\\\""),
            argv(&["echo", "$x ` \" \\"])
        );
        assert_eq!(ok("echo \"\\n\""), argv(&["echo", "\\n"]));
        assert_eq!(ok("echo \\#x \\~"), argv(&["echo", "#x", "~"]));
    }

    #[test]
    fn a_folder_placeholder_before_a_path_is_a_word_not_a_redirection() {
        assert_eq!(
            ok("python <skill-creator-path>/eval-viewer/generate_review.py --out x"),
            argv(&[
                "python",
                "<skill-creator-path>/eval-viewer/generate_review.py",
                "--out",
                "x"
            ])
        );
        assert_eq!(ok("<path_2>/x.sh"), argv(&["<path_2>/x.sh"]));
        // Anything else with `<` or `>` is still refused: input, output, a placeholder not
        // followed by a path, one inside a word, a name with other characters.
        for body in [
            "cat <in",
            "cat <in>/out",
            "echo <name>",
            "echo a<b>/c",
            "echo <a b>/c",
            "echo <>/c",
            "echo <a>/x >y",
        ] {
            if body == "cat <in>/out" {
                // Shaped like a placeholder: read as one (and resolved, or not found, later).
                assert_eq!(ok(body), argv(&["cat", "<in>/out"]));
                continue;
            }
            assert!(
                matches!(parse_argv(body), Err(InvalidBody::ShellSyntax { .. })),
                "{body}"
            );
        }
    }

    #[test]
    fn single_quotes_make_everything_plain() {
        assert_eq!(
            ok("echo '$(id) `id` ; | & < > ( ) # ~ ${IFS}'"),
            argv(&["echo", "$(id) `id` ; | & < > ( ) # ~ ${IFS}"])
        );
    }

    #[test]
    fn newlines_inside_quotes_only() {
        assert_eq!(ok("echo 'a\nb' \"c\nd\""), argv(&["echo", "a\nb", "c\nd"]));
        assert_eq!(parse_argv("echo a\nb"), Err(syntax("\n", 6)));
    }

    #[test]
    fn backslash_newline_is_a_continuation() {
        assert_eq!(ok("echo a\\\nb"), argv(&["echo", "ab"]));
        assert_eq!(ok("echo \\\nb"), argv(&["echo", "b"]));
        // A continuation does not turn the next character into a word start, nor hide one.
        assert!(parse_argv("echo \\\n#x").is_err());
        assert_eq!(ok("echo a\\\n#x"), argv(&["echo", "a#x"]));
    }

    #[test]
    fn hash_and_tilde_only_at_word_start() {
        assert_eq!(ok("echo a#b HEAD~1"), argv(&["echo", "a#b", "HEAD~1"]));
        assert_eq!(parse_argv("echo #x"), Err(syntax("#", 5)));
        assert_eq!(parse_argv("cat ~/x"), Err(syntax("~", 4)));
        assert_eq!(ok("echo '#' \"~\""), argv(&["echo", "#", "~"]));
    }

    #[test]
    fn shell_syntax_reports_the_token_and_offset() {
        let e = parse_argv("echo hi; touch x").unwrap_err();
        assert_eq!(e, syntax(";", 7));
        assert_eq!(
            e.to_string(),
            "shell syntax is not supported; commands run without a shell (found `;`)"
        );
        assert_eq!(e.offset(), Some(7));
        assert_eq!(parse_argv("true && x"), Err(syntax("&&", 5)));
        assert_eq!(parse_argv("echo $(id)"), Err(syntax("$(", 5)));
        assert_eq!(parse_argv("echo \"${IFS}\""), Err(syntax("${", 6)));
        assert_eq!(parse_argv("echo $HOME"), Err(syntax("$", 5)));
        assert!(
            parse_argv("echo `id`")
                .unwrap_err()
                .to_string()
                .contains("backtick")
        );
        assert!(
            parse_argv("a\nb")
                .unwrap_err()
                .to_string()
                .contains("newline")
        );
    }

    #[test]
    fn structural_errors() {
        assert_eq!(parse_argv(""), Err(InvalidBody::Empty));
        assert_eq!(parse_argv(" \t "), Err(InvalidBody::Empty));
        assert_eq!(parse_argv("\"\" x"), Err(InvalidBody::Empty));
        assert_eq!(
            parse_argv("echo 'abc"),
            Err(InvalidBody::UnbalancedQuote {
                quote: '\'',
                offset: 5
            })
        );
        assert_eq!(
            parse_argv("echo \"a\\\""),
            Err(InvalidBody::UnbalancedQuote {
                quote: '"',
                offset: 5
            })
        );
        assert_eq!(
            parse_argv("echo \\"),
            Err(InvalidBody::TrailingBackslash { offset: 5 })
        );
        assert_eq!(
            parse_argv("A=1 sh").unwrap_err(),
            InvalidBody::EnvAssignment { word: "A=1".into() }
        );
        assert_eq!(ok("env A=1"), argv(&["env", "A=1"]));
    }

    #[test]
    fn control_characters_anywhere() {
        for (body, ch, offset) in [
            ("echo a\0b", '\0', 6),
            ("echo 'a\0b'", '\0', 7),
            ("echo a\rb", '\r', 6),
            ("echo \u{1b}[2J", '\u{1b}', 5),
            ("echo \u{7f}", '\u{7f}', 5),
            ("echo \u{85}", '\u{85}', 5),
            ("echo \u{202E}txt.exe", '\u{202E}', 5),
        ] {
            assert_eq!(
                parse_argv(body),
                Err(InvalidBody::ControlChar { ch, offset }),
                "{body:?}"
            );
        }
        let msg = parse_argv("a\0").unwrap_err().to_string();
        assert!(msg.contains("U+0000") && msg.contains("byte 1"), "{msg}");
    }

    /// Whatever parse_argv accepts, a POSIX shell (with globbing off) splits the same way: no
    /// accepted body hides an operator, expansion or comment. Words go after `printf` so that
    /// reserved words in first position do not matter.
    #[cfg(unix)]
    mod agrees_with_sh {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::TestRunner;

        fn sh_split(body: &str) -> Option<Vec<String>> {
            let script = format!("printf '%s\\0' X {body}");
            let out = std::process::Command::new("/bin/sh")
                .args(["-f", "-c", &script])
                .output()
                .ok()?;
            if !out.status.success() {
                return None;
            }
            let text = String::from_utf8(out.stdout).ok()?;
            let mut words: Vec<String> = text.split('\0').map(String::from).collect();
            words.pop(); // after the last NUL
            (words.first().map(String::as_str) == Some("X")).then(|| words.split_off(1))
        }

        /// Plain characters repeated so that most generated bodies are accepted and reach sh.
        const ALPHABET: &[char] = &[
            'a', 'a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', ' ', ' ', ' ', ' ', ' ', '\'', '\'', '"',
            '"', '\\', '\\', '\n', '\t', '-', '-', '.', '/', '#', '~', '*', '?', '{', '}', ',',
            '=', '!', '$', '`', ';', '|', '&', '(', '<', '-',
        ];

        #[test]
        fn accepted_bodies_split_like_sh() {
            let mut runner = TestRunner::new(ProptestConfig::with_cases(1000));
            let accepted = std::cell::Cell::new(0);
            let strategy = proptest::collection::vec(proptest::sample::select(ALPHABET), 1..14);
            runner
                .run(&strategy, |chars| {
                    let body: String = chars.into_iter().collect();
                    if let Ok(argv) = parse_argv(&body) {
                        accepted.set(accepted.get() + 1);
                        prop_assert_eq!(Some(argv), sh_split(&body), "body {:?}", body);
                    }
                    Ok(())
                })
                .unwrap();
            // The property says nothing if almost every body is rejected.
            let accepted = accepted.get();
            assert!(
                accepted >= 100,
                "only {accepted} of 1000 bodies were accepted"
            );
        }
    }
}
