//! Scanner throughput. `cargo bench --bench scan` runs the criterion groups (short measurements);
//! `prose_feed_with` scans as the filter does, without copying text into events.
//! `SCAN_LINEARITY=1 cargo bench --bench scan` instead times pathological shapes at 10 MB and
//! 100 MB, to check that work stays linear (the MB/s figures should match across sizes).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group};
use skillpipe::scan::{Event, Piece, ScanOptions, Scanner};

const SIZE: usize = 4 << 20;
const CHUNK: usize = 64 << 10;

/// Repeats `unit` until `size` bytes.
fn fill(unit: &[u8], size: usize) -> Vec<u8> {
    unit.iter().copied().cycle().take(size).collect()
}

fn prose(size: usize) -> Vec<u8> {
    let para = "The model streams its answer token by token, and most of what it writes is plain \
        prose: sentences, lists, the odd number like 42 or 3.14, names such as Zoë or Øresund, and \
        punctuation (commas, semicolons; colons: dashes - and quotes \"like this\"). Really!\n\
        Another line follows, a little shorter than the first one, but still ordinary text.\n\n";
    fill(para.as_bytes(), size)
}

fn dense(size: usize) -> Vec<u8> {
    let unit = "Say %{say hello} then !{scripts/lookup.py \"term\"} and %<notify 'done'> x \
        !{jq '{a:1}' file.json} %{echo \"}\"} !<printf {x}>\n";
    fill(unit.as_bytes(), size)
}

fn noise(size: usize) -> Vec<u8> {
    let unit = "100% sure! {braces} and <tags> wow!! 50%off a\\b `code` ``x ` y`` !important \
        %d {x} %s!\n```rust\nlet x = %{a}; if !{b} {}\n```\nmore % ! { } < > text `%{no}` \\%{esc}\n\n";
    fill(unit.as_bytes(), size)
}

fn scan_chunked(input: &[u8], opts: ScanOptions) -> usize {
    let mut scanner = Scanner::new(opts);
    let mut out = Vec::new();
    let mut directives = 0;
    for chunk in input.chunks(CHUNK) {
        scanner.feed(chunk, &mut out);
        directives += out
            .iter()
            .filter(|e| matches!(e, Event::Directive(_)))
            .count();
        out.clear();
    }
    scanner.finish(&mut out);
    directives
}

/// As the filter scans: pieces handed to a callback, text borrowed from the chunk.
fn scan_chunked_with(input: &[u8], opts: ScanOptions) -> usize {
    let mut scanner = Scanner::new(opts);
    let mut seen = 0;
    let mut count = |p: Piece<'_>| match p {
        Piece::Text(t) => seen += t.len(),
        Piece::Directive(d) => seen += d.raw.len(),
    };
    for chunk in input.chunks(CHUNK) {
        scanner.feed_with(chunk, &mut count);
    }
    scanner.finish_with(&mut count);
    seen
}

fn throughput(c: &mut Criterion) {
    let opts = ScanOptions::default();
    let mut group = c.benchmark_group("scan");
    group
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(2));
    let inputs = [
        ("prose", prose(SIZE)),
        ("directive_dense", dense(SIZE)),
        ("sigil_noise", noise(SIZE)),
    ];
    for (name, input) in &inputs {
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(*name, |b| b.iter(|| scan_chunked(black_box(input), opts)));
    }
    let (name, input) = &inputs[0];
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function(format!("{name}_feed_with"), |b| {
        b.iter(|| scan_chunked_with(black_box(input), opts))
    });
    group.finish();
}

criterion_group!(benches, throughput);

/// Shapes that would be quadratic if abandoned bytes were rescanned, or if runs were re-measured.
fn pathological(size: usize) -> Vec<(&'static str, Vec<u8>)> {
    let mut unclosed = b"%{".to_vec();
    unclosed.extend(fill(b"a", size - 2));
    let mut quoted = b"%{\"".to_vec();
    quoted.extend(fill(b"text with\nnewlines ", size - 3));
    vec![
        ("prose", prose(size)),
        ("unclosed %{", unclosed),
        ("%{%{%{...", fill(b"%{", size)),
        ("unclosed %{\" + newlines", quoted),
        ("{{{{ nesting", {
            let mut v = b"!{".to_vec();
            v.extend(fill(b"{", size - 2));
            v
        }),
        ("backticks", fill(b"`", size)),
        ("`a`b", fill(b"`a", size)),
        ("fence lines", fill(b"```\n", size)),
        ("\\%{ escapes", fill(b"\\%{", size)),
    ]
}

fn linearity() {
    let opts = ScanOptions::default();
    for mb in [10usize, 100] {
        for (name, input) in pathological(mb << 20) {
            let t = Instant::now();
            black_box(scan_chunked(&input, opts));
            let s = t.elapsed().as_secs_f64();
            println!(
                "{mb:>4} MB  {name:<26} {:>8.1} ms  {:>8.0} MB/s",
                s * 1e3,
                mb as f64 / s
            );
        }
    }
}

fn main() {
    if std::env::var_os("SCAN_LINEARITY").is_some() {
        linearity();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
