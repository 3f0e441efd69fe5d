//! Properties of the directive scanner on random directive-rich inputs: chunking never changes the
//! events, nothing is lost, and every directive is one the grammar accepts.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use skillpipe::scan::{Event, ScanOptions, Scanner, coalesce, parse_directive, scan_all};

/// Pieces that exercise every rule: sigils, brackets, quotes, escapes, code markers, line starts,
/// multibyte and invalid UTF-8.
const PIECES: &[&[u8]] = &[
    b"%",
    b"!",
    b"{",
    b"}",
    b"<",
    b">",
    b"%{",
    b"!{",
    b"%<",
    b"!<",
    b"'",
    b"\"",
    b"\\",
    b"`",
    b"``",
    b"```",
    b"~~~",
    b"\n",
    b"\n\n",
    b"   ",
    b" ",
    b"\t",
    b"\r\n",
    b"echo x",
    b"say hi",
    b"100%",
    b"wow!",
    b"prose words ",
    b"\xc3\xa9",
    b"\xe6\x97\xa5",
    b"\xf0\x9f\x98\x80",
    b"\xff",
    b"\xe6\x97",
    b"%{echo hi}",
    b"!<ls>",
    b"%{a 'b}' c}",
    b"!{printf {x}}",
    b"%{say \"a\\\"}\"}",
    b"\\%{x}",
    // Placeholders (only dots and ellipses: text), and their pieces.
    b"!{\xe2\x80\xa6}",
    b"%{...}",
    b"\xe2\x80\xa6",
    b".",
    b"```sh\n",
    b"\n```\n",
    b"{a:1}",
    b"\"}\"",
];

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(PIECES).prop_map(|p| p.to_vec()),
            1 => prop::collection::vec(any::<u8>(), 0..4),
        ],
        0..48,
    )
    .prop_map(|pieces| pieces.concat())
}

fn options() -> impl Strategy<Value = ScanOptions> {
    (prop_oneof![Just(8192usize), 0usize..40], any::<bool>()).prop_map(|(max, exec_in_code)| {
        let mut opts = ScanOptions::default();
        opts.max_directive_bytes = max;
        opts.exec_in_code = exec_in_code;
        opts
    })
}

fn feed_split(input: &[u8], cuts: &[usize], opts: ScanOptions) -> Vec<Event> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut scanner = Scanner::new(opts);
    let mut out = Vec::new();
    let mut prev = 0;
    for c in cuts.into_iter().chain([input.len()]) {
        scanner.feed(&input[prev..c], &mut out);
        assert!(scanner.held_back() <= opts.max_directive_bytes.max(2) + 1);
        prev = c;
    }
    scanner.finish(&mut out);
    coalesce(out)
}

/// Output bytes: texts and directive raws in order.
fn reassemble(events: &[Event]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for e in events {
        match e {
            Event::Text(t) => bytes.extend_from_slice(t),
            Event::Directive(d) => bytes.extend_from_slice(&d.raw),
        }
    }
    bytes
}

/// `output` is `input` with some backslashes removed, each one right before sigil + bracket.
fn only_escape_backslashes_dropped(input: &[u8], output: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < input.len() {
        if j < output.len() && input[i] == output[j] {
            i += 1;
            j += 1;
        } else if input[i] == b'\\'
            && matches!(input.get(i + 1), Some(b'%' | b'!'))
            && matches!(input.get(i + 2), Some(b'{' | b'<'))
        {
            i += 1;
        } else {
            return false;
        }
    }
    j == output.len()
}

/// 2000 cases by default; `PROPTEST_CASES` raises it for a longer soak.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    // The regressions file sits beside this module (the default would look for it beside the
    // binary's main.rs, under tests/proptest-regressions/).
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn chunking_never_changes_events(
        input in input(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
        opts in options(),
    ) {
        let whole = scan_all(&input, opts);
        prop_assert_eq!(&feed_split(&input, &cuts, opts), &whole);
        let bytewise: Vec<usize> = (1..input.len()).collect();
        prop_assert_eq!(&feed_split(&input, &bytewise, opts), &whole);
    }

    #[test]
    fn nothing_is_lost(input in input(), opts in options()) {
        let events = scan_all(&input, opts);
        let out = reassemble(&events);
        prop_assert!(
            only_escape_backslashes_dropped(&input, &out),
            "input {:?} output {:?}", String::from_utf8_lossy(&input), String::from_utf8_lossy(&out)
        );
        if !input.contains(&b'\\') {
            prop_assert_eq!(out, input);
        }
    }

    #[test]
    fn directives_are_well_formed(input in input(), opts in options()) {
        for e in scan_all(&input, opts) {
            match e {
                Event::Text(t) => prop_assert!(!t.is_empty()),
                Event::Directive(d) => {
                    prop_assert!(d.raw.len() <= opts.max_directive_bytes);
                    prop_assert_eq!(d.body.trim(), d.body.as_str());
                    prop_assert!(!d.body.is_empty());
                    prop_assert!(!d.raw.contains(&b'\n') || d.raw.iter().any(|b| matches!(b, b'\'' | b'"')));
                    prop_assert_eq!(parse_directive(&d.raw), Some(d));
                }
            }
        }
    }
}

#[test]
fn reassembly_detects_a_lost_byte() {
    // Guard for the helper itself: it must reject outputs that lost anything but escapes.
    assert!(only_escape_backslashes_dropped(b"a\\%{x}", b"a%{x}"));
    assert!(!only_escape_backslashes_dropped(b"a\\%x", b"a%x"));
    assert!(!only_escape_backslashes_dropped(b"abc", b"ac"));
}
