//! Behaviour of the scanner, rule by rule. Every case is also checked under every split into up
//! to three chunks and byte-at-a-time feeding.

use super::*;

const DEFAULT: ScanOptions = ScanOptions {
    max_directive_bytes: 8192,
    exec_in_code: false,
};

fn feed_chunks(input: &[u8], cuts: &[usize], opts: ScanOptions) -> Vec<Event> {
    let mut s = Scanner::new(opts);
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        s.feed(&input[prev..c], &mut out);
        assert!(s.held_back() <= opts.max_directive_bytes.max(2) + 1);
        prev = c;
    }
    s.finish(&mut out);
    coalesce(out)
}

/// Events for `input`, asserting that every chunking agrees.
fn scan_checked(input: &[u8], opts: ScanOptions) -> Vec<Event> {
    let whole = scan_all(input, opts);
    let n = input.len();
    let bytewise: Vec<usize> = (1..n).collect();
    assert_eq!(feed_chunks(input, &bytewise, opts), whole, "byte-wise");
    for a in 0..=n {
        for b in a..=n {
            assert_eq!(feed_chunks(input, &[a, b], opts), whole, "cuts {a} {b}");
        }
    }
    whole
}

/// Compact form: text as `T:…` (lossy), directives as `%body` / `!body`.
fn show(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            Event::Text(t) => format!("T:{}", String::from_utf8_lossy(t)),
            Event::Directive(d) => format!("{}{}", d.kind.sigil(), d.body),
        })
        .collect()
}

fn check(cases: &[(&str, &[&str])], opts: ScanOptions) {
    for (input, want) in cases {
        let got = show(&scan_checked(input.as_bytes(), opts));
        assert_eq!(got, *want, "input {input:?}");
    }
}

#[test]
fn recognises_directives() {
    check(
        &[
            (
                "Hi %{echo x} !{echo there}",
                &["T:Hi ", "%echo x", "T: ", "!echo there"],
            ),
            ("%<say hi>!<ls -l>", &["%say hi", "!ls -l"]),
            ("%{  spaced out \t}", &["%spaced out"]),
            ("%%{x}", &["T:%", "%x"]),
            ("!%{x}!", &["T:!", "%x", "T:!"]),
            ("a%{x}b", &["T:a", "%x", "T:b"]),
            ("%{x}\r\n", &["%x", "T:\r\n"]),
            ("%{é ü}", &["%é ü"]),
        ],
        DEFAULT,
    );
}

#[test]
fn prose_punctuation_is_untouched() {
    check(
        &[
            (
                "100% sure, wow! {} {x} <b> a\\b",
                &["T:100% sure, wow! {} {x} <b> a\\b"],
            ),
            ("100%", &["T:100%"]),
            ("wow!", &["T:wow!"]),
            ("50%} !} %( !>", &["T:50%} !} %( !>"]),
            ("", &[]),
        ],
        DEFAULT,
    );
}

#[test]
fn quotes_and_nesting() {
    // Long on purpose: one row per quoting and nesting case, read as a table.
    check(
        &[
            (r#"%{echo "}"}"#, &[r#"%echo "}""#]),
            (r#"%{echo '}'} x"#, &["%echo '}'", "T: x"]),
            (r#"!{a "x\"}" b}"#, &[r#"!a "x\"}" b"#]),
            (r"!{a 'x\'}", &[r"!a 'x\'"]),
            (r"!{a \} b}", &[r"!a \} b"]),
            (r"!{a \' b}", &[r"!a \' b"]),
            ("!{jq '{a:1}' f}", &["!jq '{a:1}' f"]),
            ("!{printf {x}}", &["!printf {x}"]),
            ("!{a {b {c}} d}e", &["!a {b {c}} d", "T:e"]),
            ("!<a <b> c>", &["!a <b> c"]),
            ("!<a {b> c>", &["!a {b", "T: c>"]),
            ("%{a <b} c}", &["%a <b", "T: c}"]),
            ("!{echo `date`} x", &["!echo `date`", "T: x"]),
        ],
        DEFAULT,
    );
}

#[test]
fn newlines_only_inside_quotes() {
    check(
        &[
            ("%{echo 'a\nb'}", &["%echo 'a\nb'"]),
            ("%{echo \"a\nb\"}", &["%echo \"a\nb\""]),
            ("%{echo\nhi} %{x}", &["T:%{echo\nhi} ", "%x"]),
            ("%{echo a\\\nb}", &["T:%{echo a\\\nb}"]),
            // Abandoned bytes are not rescanned: the inner directive stays literal.
            ("%{a %{b} c\n%{d}", &["T:%{a %{b} c\n", "%d"]),
            ("!{a\r\n}", &["T:!{a\r\n}"]),
        ],
        DEFAULT,
    );
}

#[test]
fn blank_or_invalid_bodies_are_literal() {
    check(
        &[
            ("%{} %{  } !<\t>", &["T:%{} %{  } !<\t>"]),
            ("%{}%{x}", &["T:%{}", "%x"]),
            // A placeholder in prose about the syntax is text; a real one next to it still runs.
            (
                "!{…} brings output back, %{...} does not: %{x}",
                &["T:!{…} brings output back, %{...} does not: ", "%x"],
            ),
            ("\\!{…}", &["T:\\!{…}"]),
        ],
        DEFAULT,
    );
    let got = scan_checked(b"%{echo \xff} ok", DEFAULT);
    assert_eq!(got, vec![Event::Text(b"%{echo \xff} ok".to_vec())]);
}

#[test]
fn escapes() {
    check(
        &[
            ("\\%{echo x} done", &["T:%{echo x} done"]),
            ("\\!<ls>", &["T:!<ls>"]),
            ("\\%{a %{b}} %{c}", &["T:%{a %{b}} ", "%c"]),
            ("\\\\%{x}", &["T:\\%{x}"]),
            ("\\%x \\! \\", &["T:\\%x \\! \\"]),
            ("\\%", &["T:\\%"]),
            ("\\%\\%{x}", &["T:\\%%{x}"]),
            ("\\%%{x}", &["T:\\%", "%x"]),
            ("\\%{open", &["T:\\%{open"]),
            ("\\%{a\nb", &["T:\\%{a\nb"]),
            // Escaping nothing, the backslash stays: `100\%{} of` in LaTeX.
            ("100\\%{} of", &["T:100\\%{} of"]),
            ("\\ %{x}", &["T:\\ ", "%x"]),
        ],
        DEFAULT,
    );
}

#[test]
fn code_is_literal() {
    check(
        &[
            ("`%{x}` %{y}", &["T:`%{x}` ", "%y"]),
            ("``a ` %{x}`` !{y}", &["T:``a ` %{x}`` ", "!y"]),
            ("```\n%{x}\n```\n%{y}", &["T:```\n%{x}\n```\n", "%y"]),
            (
                "```sh\n%{x}\n\n!{z}\n```\n%{y}",
                &["T:```sh\n%{x}\n\n!{z}\n```\n", "%y"],
            ),
            (
                "~~~\n!{x}\n```\n!{x}\n~~~\n!{y}",
                &["T:~~~\n!{x}\n```\n!{x}\n~~~\n", "!y"],
            ),
            (
                "````\n%{x}\n```\n%{x}\n````\n%{y}",
                &["T:````\n%{x}\n```\n%{x}\n````\n", "%y"],
            ),
            (
                "  ```\n%{x}\n   ```  \n%{y}",
                &["T:  ```\n%{x}\n   ```  \n", "%y"],
            ),
            ("```\n%{x}\n``` no\n%{x}", &["T:```\n%{x}\n``` no\n%{x}"]),
            ("```\n%{x}\n    ```\n%{x}", &["T:```\n%{x}\n    ```\n%{x}"]),
            ("    ```\n\n%{y}", &["T:    ```\n\n", "%y"]),
            ("a ```\n%{x}``` %{y}", &["T:a ```\n%{x}``` ", "%y"]),
            ("`\\%{x}`", &["T:`\\%{x}`"]),
            ("!{echo `x`} `%{y}`", &["!echo `x`", "T: `%{y}`"]),
            ("`%{x}\n%{x}` %{y}", &["T:`%{x}\n%{x}` ", "%y"]),
            // An unclosed span ends at a blank line.
            ("`oops\n%{x}\n\n%{y}", &["T:`oops\n%{x}\n\n", "%y"]),
            ("`oops\n \t\r\n%{y}", &["T:`oops\n \t\r\n", "%y"]),
            // A fence opener interrupts an unclosed span.
            (
                "`oops\n```\n\n%{x}\n```\n%{y}",
                &["T:`oops\n```\n\n%{x}\n```\n", "%y"],
            ),
            (
                "```\r\n%{x}\r\n```\r\n%{y}",
                &["T:```\r\n%{x}\r\n```\r\n", "%y"],
            ),
        ],
        DEFAULT,
    );
}

#[test]
fn exec_in_code_ignores_markdown() {
    let opts = ScanOptions {
        exec_in_code: true,
        ..DEFAULT
    };
    check(
        &[
            ("`%{x}`", &["T:`", "%x", "T:`"]),
            ("```\n!{y}\n```", &["T:```\n", "!y", "T:\n```"]),
            ("`\\%{x}`", &["T:`%{x}`"]),
        ],
        opts,
    );
}

#[test]
fn length_limit() {
    let opts = ScanOptions {
        max_directive_bytes: 10,
        ..DEFAULT
    };
    check(
        &[
            ("%{1234567}", &["%1234567"]),
            ("%{12345678}", &["T:%{12345678}"]),
            // Resumes at the byte that did not fit, which may start a directive.
            ("%{aaaaaaaa%{b}", &["T:%{aaaaaaaa", "%b"]),
            ("%{%{%{%{%{%{%{x}", &["T:%{%{%{%{%{%{%{x}"]),
            (
                "%{\"aaaaaaaaaaaaaaa\"} %{x}",
                &["T:%{\"aaaaaaaaaaaaaaa\"} ", "%x"],
            ),
        ],
        opts,
    );
    let tiny = ScanOptions {
        max_directive_bytes: 3,
        ..DEFAULT
    };
    check(&[("%{x}", &["T:%{x}"]), ("%{}", &["T:%{}"])], tiny);
    let zero = ScanOptions {
        max_directive_bytes: 0,
        ..DEFAULT
    };
    check(&[("%{x}", &["T:%{x}"])], zero);
}

#[test]
fn literal_candidates_still_feed_markdown() {
    // The quote swallows the fence opener; once the candidate is abandoned its bytes are text, the
    // fence is followed, and the directive inside it stays literal.
    let opts = ScanOptions {
        max_directive_bytes: 20,
        ..DEFAULT
    };
    let input = format!("%{{\"\n```\n{}\n%{{a}}\n```\n%{{b}}", "x".repeat(30));
    let got = show(&scan_checked(input.as_bytes(), opts));
    let text = format!("T:%{{\"\n```\n{}\n%{{a}}\n```\n", "x".repeat(30));
    assert_eq!(got, vec![text, "%b".to_string()]);
    // An escaped directive is literal text too: its backtick opens a code span.
    check(&[("\\%{a `b} %{c}", &["T:%{a `b} %{c}"])], DEFAULT);
}

#[test]
fn unterminated_at_end_is_literal() {
    check(
        &[
            ("x %{echo", &["T:x %{echo"]),
            ("x %{echo 'a}", &["T:x %{echo 'a}"]),
            ("x %", &["T:x %"]),
            ("x !", &["T:x !"]),
        ],
        DEFAULT,
    );
}

#[test]
fn text_bytes_pass_through() {
    let input = b"caf\xc3\xa9 \xff\xfe %{echo \xe6\x97\xa5} \xe6\x97";
    let got = scan_checked(input, DEFAULT);
    assert_eq!(
        got,
        vec![
            Event::Text(b"caf\xc3\xa9 \xff\xfe ".to_vec()),
            Event::Directive(Directive {
                kind: Kind::SideEffect,
                body: "echo \u{65e5}".into(),
                raw: b"%{echo \xe6\x97\xa5}".to_vec(),
            }),
            Event::Text(b" \xe6\x97".to_vec()),
        ]
    );
}

#[test]
fn releases_text_at_once_and_holds_only_candidates() {
    let mut s = Scanner::new(DEFAULT);
    let mut out = Vec::new();
    s.feed(b"hello ``x`` ~~~", &mut out);
    assert_eq!(out, vec![Event::Text(b"hello ``x`` ~~~".to_vec())]);
    assert_eq!(s.held_back(), 0);
    out.clear();
    s.feed(b"\n abc %", &mut out);
    assert_eq!(out, vec![Event::Text(b"\n abc ".to_vec())]);
    assert_eq!(s.held_back(), 1);
    out.clear();
    s.feed(b"{echo", &mut out);
    assert!(out.is_empty());
    assert_eq!(s.held_back(), 6);
    s.feed(b"} \\", &mut out);
    assert_eq!(show(&out), ["%echo", "T: "]);
    assert_eq!(s.held_back(), 1);
    out.clear();
    s.feed(b"%", &mut out);
    assert!(out.is_empty());
    assert_eq!(s.held_back(), 2);
    s.finish(&mut out);
    assert_eq!(show(&out), ["T:\\%"]);
    // Reusable after finish, from a fresh line and prose state.
    out.clear();
    s.feed(b"```\n%{x}", &mut out);
    s.finish(&mut out);
    assert_eq!(show(&coalesce(out)), ["T:```\n%{x}"]);
}

#[test]
fn memory_stays_bounded_without_a_close() {
    let opts = ScanOptions {
        max_directive_bytes: 1000,
        ..DEFAULT
    };
    let mut s = Scanner::new(opts);
    let mut out = Vec::new();
    let mut total = 0;
    s.feed(b"%{", &mut out);
    for _ in 0..300 {
        s.feed(&[b'a'; 4096], &mut out);
        total += 4096;
        assert!(s.held_back() <= 1000);
    }
    s.finish(&mut out);
    let text: usize = out
        .iter()
        .map(|e| match e {
            Event::Text(t) => t.len(),
            Event::Directive(_) => panic!("no directive expected"),
        })
        .sum();
    assert_eq!(text, total + 2);
}

#[test]
fn coalesce_merges_and_drops_empty_texts() {
    let d = Event::Directive(Directive {
        kind: Kind::Capture,
        body: "x".into(),
        raw: b"!{x}".to_vec(),
    });
    let events = vec![
        Event::Text(vec![]),
        Event::Text(b"a".to_vec()),
        Event::Text(b"b".to_vec()),
        d.clone(),
        Event::Text(vec![]),
        d.clone(),
    ];
    assert_eq!(
        coalesce(events),
        vec![Event::Text(b"ab".to_vec()), d.clone(), d]
    );
}

#[test]
fn feed_with_hands_out_slices_of_the_chunk() {
    let chunk: &[u8] = b"100% sure! a\\b `x` wow! %{echo hi} tail %";
    let mut s = Scanner::new(DEFAULT);
    let mut got = Vec::new();
    s.feed_with(chunk, |p| {
        got.push(match p {
            // Where the text lies in `chunk`, if it does.
            Piece::Text(t) => {
                let at = (t.as_ptr() as usize).wrapping_sub(chunk.as_ptr() as usize);
                assert!(at + t.len() <= chunk.len(), "text copied");
                format!("{at}+{}", t.len())
            }
            Piece::Directive(d) => d.body,
        })
    });
    let open = chunk.iter().position(|&b| b == b'{').unwrap() - 1;
    let close = chunk.iter().position(|&b| b == b'}').unwrap() + 1;
    // Sigils that start nothing do not split the text; the trailing `%` is held back.
    assert_eq!(
        got,
        [
            format!("0+{open}"),
            "echo hi".to_string(),
            format!("{close}+{}", chunk.len() - 1 - close),
        ]
    );
    assert_eq!(s.held_back(), 1);
}
