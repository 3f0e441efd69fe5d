//! Programs that start their arguments as a command (`env`, `timeout`, `sudo` …), each with the
//! grammar of where that command is, and every command such a command line may start: what a
//! deny pattern is matched against besides the command itself. Pure.
//!
//! The grammar is read on the safe side: every later argument is tried as the start of a
//! command (`nice -n 5 rm x` starts `rm x`; a harmless `find -name rm` is tried too), and a word
//! that holds a whole command line (`env -S 'rm x'`, `su -c 'rm x'`, `watch 'ls; rm x'`) is
//! split at blanks and shell operators, each of its words tried as a start as well.

/// Where a wrapper's command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Starts {
    /// In its later arguments, as words (`nice -n 5 rm x`, `xargs rm`, `setarch x86_64 rm x`).
    Words,
    /// As [`Starts::Words`], and in the value of these options, one word holding a command
    /// line (`env -S 'rm x'`, `env --split-string='rm x'`, `su -c 'rm x'`). A one-letter
    /// option's value may follow it in the same word (`-S'rm x'`, `-iS'rm x'`).
    WordsOrLine(&'static [&'static str]),
    /// Each argument is (part of) a shell command line (`watch 'rm x'`, `parallel 'rm {}'`).
    Line,
}

/// The wrappers whose command is in their later arguments, as words ([`Starts::Words`]), by
/// file name (compared ignoring ASCII case, as deny patterns are).
const WORD_WRAPPERS: &[&str] = &[
    "command",
    "exec",
    "builtin",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "setsid",
    "time",
    "xargs",
    "find",
    "sudo",
    "doas",
    "run0",
    "pkexec",
    "setpriv",
    "setarch",
    "linux32",
    "linux64",
    "ionice",
    "chrt",
    "taskset",
    "chroot",
    "unshare",
    "nsenter",
    "prlimit",
    "busybox",
    "strace",
    "ltrace",
    "valgrind",
    "catchsegv",
    "systemd-run",
    "firejail",
    "bwrap",
    "fakeroot",
    "torsocks",
    "proxychains",
    "proxychains4",
    "eatmydata",
    "numactl",
    "cpulimit",
    "faketime",
    "chpst",
    "setuidgid",
    "gosu",
    "su-exec",
    "ccache",
    "rlwrap",
    "unbuffer",
    "tini",
    "dumb-init",
];

/// The wrappers with another grammar.
const OTHER_WRAPPERS: &[(&str, Starts)] = &[
    ("env", Starts::WordsOrLine(&["-S", "--split-string"])),
    ("runuser", Starts::WordsOrLine(SU_COMMAND)),
    ("su", Starts::WordsOrLine(SU_COMMAND)),
    ("sg", Starts::Line),
    ("flock", Starts::WordsOrLine(&["-c", "--command"])),
    ("watch", Starts::Line),
    ("parallel", Starts::Line),
    ("script", Starts::WordsOrLine(&["-c", "--command"])),
    ("capsh", Starts::WordsOrLine(&["-c"])),
];

/// The options of `su` and `runuser` whose value is a command line.
const SU_COMMAND: &[&str] = &["-c", "--command", "--session-command"];

/// The grammar of `program` (a name or a path) if it is a wrapper.
pub(crate) fn starts(program: &str) -> Option<Starts> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let is = |w: &&str| w.eq_ignore_ascii_case(name);
    (OTHER_WRAPPERS.iter().find(|(w, _)| is(w)).map(|(_, s)| *s))
        .or_else(|| WORD_WRAPPERS.iter().any(is).then_some(Starts::Words))
}

/// The commands a command line may start through its wrappers: `lines[s][i..]` for each
/// `(s, i)` in `starts` (a command, as a program and its arguments).
#[derive(Debug, Default)]
pub(crate) struct Started {
    /// The command line itself (`lines[0]`), then each command line found in one word, split.
    pub lines: Vec<Vec<String>>,
    /// Where each command starts: a line and a word in it.
    pub starts: Vec<(usize, usize)>,
}

/// Every command `argv` may start (see [`Started`]); none when its program is no wrapper.
pub(crate) fn started(argv: Vec<String>) -> Started {
    let mut out = Started::default();
    if argv.first().and_then(|p| starts(p)).is_none() {
        return out;
    }
    out.lines.push(argv);
    let mut next = 0;
    while next < out.lines.len() {
        let line = out.lines[next].clone();
        // The command line itself starts at its wrapper's first argument; one found in a word
        // may start at any of its words (`true; rm x`).
        let first = if next == 0 { 1 } else { 0 };
        out.starts.extend((first..line.len()).map(|i| (next, i)));
        for (k, word) in line.iter().enumerate() {
            let Some(grammar) = starts(word) else {
                continue;
            };
            for text in in_one_word(grammar, &line[k + 1..]) {
                let words = split_line(text);
                if !words.is_empty() {
                    out.lines.push(words);
                }
            }
        }
        next += 1;
    }
    out
}

/// The arguments (after a wrapper with `grammar`) that hold a command line in one word.
fn in_one_word(grammar: Starts, args: &[String]) -> Vec<&str> {
    match grammar {
        Starts::Words => Vec::new(),
        Starts::Line => args.iter().map(String::as_str).collect(),
        Starts::WordsOrLine(options) => {
            let mut found = Vec::new();
            for (i, arg) in args.iter().enumerate() {
                let next = args.get(i + 1).map(String::as_str);
                for opt in options {
                    if arg == opt {
                        found.extend(next);
                    } else if let Some(long) = opt.strip_prefix("--") {
                        if let Some(v) = arg
                            .strip_prefix("--")
                            .and_then(|a| a.strip_prefix(long))
                            .and_then(|a| a.strip_prefix('='))
                        {
                            found.push(v);
                        }
                    } else if let Some(letter) = opt.strip_prefix('-')
                        && arg.starts_with('-')
                        && !arg.starts_with("--")
                        && let Some(at) = arg[1..].find(letter)
                    {
                        // `-S'rm x'`, `-iS 'rm x'`: the value follows the letter, or is the
                        // next word.
                        match &arg[1 + at + letter.len()..] {
                            "" => found.extend(next),
                            value => found.push(value),
                        }
                    }
                }
            }
            found
        }
    }
}

/// A command line's words: split at blanks and shell operators, quotes and backslashes
/// dropped (`env -S`'s `\_` is a blank). Wider than any one reading, which is the safe side.
fn split_line(text: &str) -> Vec<String> {
    text.replace("\\_", " ")
        .split(|c: char| c.is_whitespace() || ";&|()<>`$".contains(c))
        .map(|w| {
            w.chars()
                .filter(|c| !"'\"\\{}".contains(*c))
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(argv: &[&str]) -> Vec<String> {
        let s = started(argv.iter().map(|w| w.to_string()).collect());
        s.starts
            .iter()
            .map(|&(l, i)| s.lines[l][i..].join(" "))
            .collect()
    }

    /// Every wrapper in the table, written the way its grammar says, starts `rm x`.
    #[test]
    fn every_wrapper_is_seen_through_by_its_grammar() {
        let words = WORD_WRAPPERS.iter().map(|w| (w, Starts::Words));
        for (name, grammar) in words.chain(OTHER_WRAPPERS.iter().map(|(w, s)| (w, *s))) {
            let lines: Vec<Vec<String>> = match grammar {
                Starts::Words => vec![vec![name.to_string(), "rm".into(), "x".into()]],
                Starts::Line => vec![vec![name.to_string(), "true; rm x".into()]],
                Starts::WordsOrLine(options) => options
                    .iter()
                    .flat_map(|o| {
                        let mut forms = vec![
                            vec![name.to_string(), o.to_string(), "rm x".into()],
                            vec![name.to_string(), "rm".into(), "x".into()],
                        ];
                        if o.starts_with("--") {
                            forms.push(vec![name.to_string(), format!("{o}=rm x")]);
                        } else {
                            forms.push(vec![name.to_string(), format!("{o}rm x")]);
                        }
                        forms
                    })
                    .collect(),
            };
            for line in lines {
                let shown = line.join(" ");
                let s = started(line);
                let found = s
                    .starts
                    .iter()
                    .any(|&(l, i)| s.lines[l][i..] == ["rm".to_string(), "x".to_string()]);
                assert!(found, "{shown}: {:?}", s);
            }
        }
    }

    #[test]
    fn split_strings_nested_wrappers_and_plain_commands() {
        let all = commands(&["env", "-iS", "nice rm\\_x"]);
        assert!(all.contains(&"rm x".to_string()), "{all:?}");
        let all = commands(&["timeout", "5", "env", "--split-string=env -S 'touch y'"]);
        assert!(all.contains(&"touch y".to_string()), "{all:?}");
        // Not a wrapper: nothing it starts.
        assert!(commands(&["git", "status", "env", "-S", "x"]).is_empty());
        assert_eq!(commands(&["linux64", "touch", "x"]), ["touch x", "x"]);
    }
}
