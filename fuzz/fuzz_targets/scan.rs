//! Fuzz target for the directive scanner. The first byte picks options, the next four pick chunk
//! boundaries, the rest is the input. Checks: every chunking gives the same events; held-back
//! bytes stay bounded; output re-assembles the input but for dropped escape backslashes; every
//! directive is well formed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillpipe::scan::{Event, ScanOptions, Scanner, coalesce, parse_directive, scan_all};

fn feed(input: &[u8], cuts: &[usize], opts: ScanOptions) -> Vec<Event> {
    let mut scanner = Scanner::new(opts);
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain([input.len()].iter()) {
        scanner.feed(&input[prev..c], &mut out);
        assert!(scanner.held_back() <= opts.max_directive_bytes.max(2));
        prev = c;
    }
    scanner.finish(&mut out);
    coalesce(out)
}

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

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let mut opts = ScanOptions::default();
    opts.max_directive_bytes = if data[0] & 0x80 != 0 {
        8192
    } else {
        (data[0] & 0x3f) as usize
    };
    opts.exec_in_code = data[0] & 0x40 != 0;
    let input = &data[5..];
    let mut cuts: Vec<usize> = data[1..5]
        .iter()
        .map(|&b| b as usize % (input.len() + 1))
        .collect();
    cuts.sort_unstable();

    let whole = scan_all(input, opts);
    assert_eq!(feed(input, &cuts, opts), whole);
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(feed(input, &bytewise, opts), whole);

    let mut out = Vec::new();
    for e in &whole {
        match e {
            Event::Text(t) => {
                assert!(!t.is_empty());
                out.extend_from_slice(t);
            }
            Event::Directive(d) => {
                assert!(d.raw.len() <= opts.max_directive_bytes);
                assert!(!d.body.is_empty() && d.body.trim() == d.body);
                assert_eq!(parse_directive(&d.raw).as_ref(), Some(d));
                out.extend_from_slice(&d.raw);
            }
        }
    }
    assert!(only_escape_backslashes_dropped(input, &out));
});
