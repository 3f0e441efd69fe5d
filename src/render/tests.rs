use super::*;

/// Unicode without colour; [`COLOURED`] with 24-bit colour.
pub(super) const PLAIN: Options = Options {
    color: false,
    truecolor: false,
    unicode: true,
};
const COLOURED: Options = Options {
    color: true,
    truecolor: true,
    ..PLAIN
};

/// Renders `text` fed in pieces of `every` bytes.
fn render_in(text: &str, width: usize, opts: Options, every: usize) -> String {
    let mut r = Renderer::new(opts);
    let mut out = String::new();
    for piece in text.as_bytes().chunks(every) {
        out.push_str(&r.push(piece, width));
    }
    out.push_str(&r.finish(width));
    out
}

fn render(text: &str, width: usize) -> String {
    render_in(text, width, PLAIN, usize::MAX)
}

#[test]
fn long_lines_wrap_at_word_boundaries_and_line_breaks_stay() {
    let out = render("The quick brown fox jumps\nover the lazy dog.\n", 20);
    assert_eq!(out, "The quick brown fox\njumps\nover the lazy dog.\n");
    let out = render("> one two three four\n> five\n", 12);
    assert_eq!(out, "│ one two\n│ three four\n│ five\n");
}

#[test]
fn the_same_output_for_every_split() {
    let text = "# Title\n\nSome **bold** text and `code` here, wrapped.\n\n- one item\n- two\n\n> a quote\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    // The same screen: styles may be cut into more SGR runs, a word shown early may be rubbed
    // out and moved down, but what the reader sees is identical.
    let whole = screen(&render_in(text, 24, COLOURED, usize::MAX), 24);
    for every in [1, 2, 3, 5, 7, 13] {
        assert_eq!(
            screen(&render_in(text, 24, COLOURED, every), 24),
            whole,
            "pieces of {every}"
        );
    }
}

#[test]
fn structure_without_colour() {
    let out = render(
        "## Steps\n\n1. first\n2. second\n\n- *a*\n\n> quoted **text**\n\n---\n",
        40,
    );
    assert!(!out.contains('\x1b'), "{out:?}");
    assert_eq!(
        out,
        "## Steps\n\n1. first\n2. second\n\n• *a*\n\n│ quoted **text**\n\n────────────────────────────────────────\n"
    );
}

#[test]
fn a_quote_never_looks_like_the_prompt() {
    for opts in [
        PLAIN,
        Options {
            unicode: false,
            ..PLAIN
        },
    ] {
        let out = render_in("> a quote\n", 40, opts, usize::MAX);
        assert!(!out.starts_with('>'), "{out:?}");
        assert!(out.contains("a quote"));
    }
}

#[test]
fn list_items_wrap_with_a_hanging_indent() {
    let out = render("- alpha beta gamma delta\n", 14);
    assert_eq!(out, "• alpha beta\n  gamma delta\n");
}

#[test]
fn code_is_highlighted_and_kept_verbatim() {
    let out = render_in(
        "```rust\nlet x = 1; // *not emphasis*\n```\n",
        80,
        COLOURED,
        4,
    );
    assert!(out.contains("\x1b[38;2;"), "no colour in {out:?}");
    let stripped = strip(&out);
    assert_eq!(stripped, "```rust\nlet x = 1; // *not emphasis*\n```\n");
    let out = render("```\nno   wrap    here\n```\n", 8);
    assert!(out.contains("no   wrap    here"));
}

#[test]
fn an_escape_in_the_answer_comes_out_visible() {
    let evil = "# Title \x1b]52;c;ZXZpbA==\x07\n\ntext \x1b[2J here\n\n```sh\necho \x1b[31m\n```\n";
    for opts in [PLAIN, COLOURED] {
        let out = render_in(evil, 80, opts, 3);
        let text = strip(&out);
        assert!(text.contains("␛]52;c;ZXZpbA==␇"), "{out:?}");
        assert!(text.contains("␛[2J"), "{out:?}");
        assert!(text.contains("␛[31m"), "{out:?}");
        // The only escapes left are the renderer's own SGR styles.
        let mut rest = out.as_str();
        while let Some(i) = rest.find('\x1b') {
            let tail = &rest[i + 1..];
            assert!(tail.starts_with('['), "foreign escape in {out:?}");
            let end = tail.find('m').expect("SGR ends with m");
            assert!(tail[1..end].chars().all(|c| c.is_ascii_digit() || c == ';'));
            rest = &tail[end..];
        }
    }
}

#[test]
fn words_show_before_the_line_ends() {
    let mut r = Renderer::new(PLAIN);
    // A plain word shows as it arrives, even unfinished.
    assert_eq!(r.push(b"Hello there wor", 80), "Hello there wor");
    // Emphasis waits for its closing marker.
    assert_eq!(r.push(b"ld, with **bo", 80), "ld, with");
    // Without colour the markers stay, as text.
    assert_eq!(r.push(b"ld** en", 80), " **bold** en");
    // The line's newline is owed until the next line shows it is no setext underline.
    assert_eq!(r.push(b"d\n", 80), "d");
    assert_eq!(r.push(b"Next", 80), "\nNext");
    assert_eq!(r.finish(80), "\n");
}

#[test]
fn what_markers_hold_back_is_released_before_a_prompt() {
    let mut r = Renderer::new(PLAIN);
    assert_eq!(r.push(b"I will *compute it now: ", 80), "");
    // A prompt is about to be drawn: the text that led there shows as written.
    assert_eq!(r.release(80), "I will *compute it now:");
    assert_eq!(r.release(80), "", "nothing twice");
    assert_eq!(r.push(b"done\n", 80), " done");
    // A code span's markers never held anything back.
    let mut r = Renderer::new(PLAIN);
    assert_eq!(
        r.push(b"I will compute `365*24` for you now: ", 80),
        "I will compute `365*24` for you now:"
    );
}

#[test]
fn tables_wait_for_their_last_row() {
    let mut r = Renderer::new(PLAIN);
    assert_eq!(r.push(b"| k | v |\n|---|---|\n| a | 1 |\n", 80), "");
    let out = r.push(b"\nafter\n", 80);
    assert!(out.starts_with("k │ v\n──┼──\na │ 1\n"), "{out:?}");
}

#[test]
fn a_narrower_window_applies_to_the_next_words() {
    let mut r = Renderer::new(PLAIN);
    let mut out = r.push(b"aaa bbb ccc ", 40);
    out.push_str(&r.push(b"ddd eee fff\n", 8));
    out.push_str(&r.finish(8));
    assert_eq!(out, "aaa bbb ccc\nddd eee\nfff\n");
}

/// What a terminal `width` columns wide shows: SGR removed, trailing spaces ignored, a row the
/// terminal wrapped (autowrap) shown as two. Strict about the last column, as xterm is: a
/// character written there leaves the cursor on it with the wrap pending (the next printable
/// character wraps first; a backspace moves to the column before it; `\r` and `\n` cancel it).
/// A wide character that does not fit in the row wraps whole; writing over either half of one
/// blanks the other half.
fn screen(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    /// The second half of a wide character.
    const HALF: char = '\0';
    let mut rows: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col, mut pending) = (0usize, 0usize, false);
    let new_row = |rows: &mut Vec<Vec<char>>, row: &mut usize| {
        *row += 1;
        if rows.len() <= *row {
            rows.push(Vec::new());
        }
    };
    for c in strip(s).chars() {
        match c {
            // The tty's output processing (ONLCR) makes it CR LF.
            '\n' => {
                new_row(&mut rows, &mut row);
                (col, pending) = (0, false);
            }
            '\r' => (col, pending) = (0, false),
            '\u{8}' => (col, pending) = (col.saturating_sub(1), false),
            c => {
                let cw = c.width().unwrap_or(0);
                if cw == 0 {
                    continue;
                }
                if pending || col + cw > width {
                    new_row(&mut rows, &mut row);
                    (col, pending) = (0, false);
                }
                let cells = &mut rows[row];
                if cells.len() < col + cw {
                    cells.resize(col + cw, ' ');
                }
                // Overwriting half of a wide character blanks its other half.
                if cells[col] == HALF {
                    cells[col - 1] = ' ';
                }
                if cells.get(col + cw) == Some(&HALF) {
                    cells[col + cw] = ' ';
                }
                cells[col] = c;
                if cw == 2 {
                    cells[col + 1] = HALF;
                }
                if col + cw >= width {
                    (col, pending) = (width - 1, true);
                } else {
                    col += cw;
                }
            }
        }
    }
    rows.iter()
        .map(|r| {
            r.iter()
                .filter(|&&c| c != HALF)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn setext_headings_are_headings_for_every_split() {
    let text = "Title\n=====\n\nSub title\n---\n\nPlain line\nstays\n";
    for every in [1, 2, 3, 7, usize::MAX] {
        assert_eq!(
            screen(&render_in(text, 40, PLAIN, every), 40),
            "# Title\n\n## Sub title\n\nPlain line\nstays\n",
            "pieces of {every}"
        );
        let out = render_in(text, 40, COLOURED, every);
        assert_eq!(
            screen(&out, 40),
            "Title\n\nSub title\n\nPlain line\nstays\n",
            "pieces of {every}"
        );
        // Drawn again in the heading's style: bold and underlined (level 1).
        assert!(out.contains("\r\x1b["), "{out:?}");
    }
    // A paragraph of two lines keeps its text; `---` under it stays a rule.
    let out = screen(&render("one\ntwo\n---\n", 20), 20);
    assert_eq!(out, "one\ntwo\n────────────────────\n");
}

#[test]
fn indented_code_is_kept_verbatim_but_not_inside_a_list() {
    let text = "Run this:\n\n    let x = *a* +  b;\n    x   *= 2;\n\nDone.\n";
    for every in [1, 3, usize::MAX] {
        let out = render_in(text, 12, PLAIN, every);
        assert!(
            out.contains("    let x = *a* +  b;\n    x   *= 2;\n"),
            "{out:?}"
        );
        // Not wrapped by the renderer: the terminal wraps it.
        assert_eq!(
            screen(&out, 12),
            "Run this:\n\n    let x =\n*a* +  b;\n    x   *= 2\n;\n\nDone.\n",
            "pieces of {every}"
        );
    }
    // Four spaces inside a list, or continuing a paragraph, are text.
    let out = screen(&render("- item\n\n    more *text*\n", 40), 40);
    assert_eq!(out, "• item\n\n    more *text*\n");
    let out = screen(&render("a line\n    goes on\n", 40), 40);
    assert_eq!(out, "a line\ngoes on\n");
}

/// The text without SGR sequences.
fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn an_owed_newline_can_be_paid_before_a_status_line() {
    let mut r = Renderer::new(PLAIN);
    assert_eq!(r.push(b"Here you go:\n", 40), "Here you go:");
    assert_eq!(r.end_open_line(), "\n");
    assert_eq!(r.end_open_line(), "");
    // Paid: the next line is a line of its own, and an underline no longer makes a heading.
    assert_eq!(r.push(b"===\n", 40), "===\n");
    assert_eq!(r.finish(40), "");
}

#[test]
fn wrap_plain_breaks_at_words_with_a_hanging_indent() {
    assert_eq!(
        super::wrap_plain(
            "pdf [catalog] — Fill in and read PDF forms quickly",
            24,
            "",
            "    "
        ),
        "pdf [catalog] — Fill in\n    and read PDF forms\n    quickly\n"
    );
    assert_eq!(super::wrap_plain("short", 80, "  ", "  "), "  short\n");
}

#[test]
fn a_word_shown_early_is_rubbed_out_cleanly_at_the_last_column() {
    // Streamed a character at a time, a word shown before it was complete may have to move to
    // the next row; what it leaves behind must be blank on a terminal that keeps the cursor on
    // the last column after writing there (xterm), for every width and with wide characters.
    let texts = [
        "The quick brown fox jumps over the lazy dog and keeps running across the wide green \
         field until the sun goes down behind the distant hills.",
        "Party 🎉🎉 time with 🎉🎉🎉 emoji a🎉 everywhere 🎉 and more 🎉🎉words here 🎉🎉🎉🎉 ok.",
        "中文 文字 测试 这是一个 很长的 句子 用来 测试 宽字符 a中 在 行尾 的 情况 好的。",
        "- alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n\n> quoted words \
         wrap here too at the edge of the window\n",
    ];
    for text in texts {
        for width in 10..=40 {
            let whole = screen(&render_in(text, width, PLAIN, usize::MAX), width);
            for every in [1, 2, 3] {
                let streamed = screen(&render_in(text, width, PLAIN, every), width);
                assert_eq!(streamed, whole, "{width} columns, pieces of {every}");
            }
        }
    }
    // 30 columns, one character at a time.
    let text = texts[0];
    assert_eq!(
        screen(&render_in(text, 30, PLAIN, 1), 30),
        "The quick brown fox jumps over\nthe lazy dog and keeps running\nacross the wide green field\n\
         until the sun goes down behind\nthe distant hills.\n"
    );
}

#[test]
fn emphasis_across_a_soft_line_break_is_rendered() {
    let text = "Here **bold across\nlines** ok\nand *it\nspans ~~three\nlines~~ too* done\n";
    for every in [1, 2, 3, 7, usize::MAX] {
        let out = render_in(text, 40, COLOURED, every);
        assert_eq!(
            strip(&out),
            "Here bold across\nlines ok\nand it\nspans three\nlines too done\n",
            "pieces of {every}: {out:?}"
        );
        assert!(
            out.contains("\x1b[1mbold\x1b[0m \x1b[1macross\x1b[0m"),
            "{out:?}"
        );
        assert!(out.contains("\x1b[1mlines\x1b[0m"), "{out:?}");
    }
    // Without colour the markers stay as written, on the same lines.
    let out = render_in("**bold across\nlines** ok\n", 40, PLAIN, 1);
    assert_eq!(out, "**bold across\nlines** ok\n");
}

#[test]
fn an_emphasis_that_never_closes_is_shown_as_written_without_holding_the_paragraph() {
    // Closed by the paragraph's end: the held line goes out as written, before what follows.
    let out = render_in("a **open\n\nnext\n", 40, COLOURED, 2);
    assert_eq!(strip(&out), "a **open\n\nnext\n");
    // A stray marker holds at most a few lines.
    let text = "x *y\nline two\nline three\nline four\nline five\nline six\n";
    let mut r = Renderer::new(COLOURED);
    let shown = r.push(text.as_bytes(), 40);
    assert!(strip(&shown).starts_with("x *y\nline two\n"), "{shown:?}");
    // A lone `*` between spaces opens nothing: the line goes out at once.
    let mut r = Renderer::new(COLOURED);
    assert!(strip(&r.push(b"5 * 3 = 15\nnext", 40)).starts_with("5 * 3 = 15\n"));
    // What is held shows when the screen needs it (a confirmation prompt below it).
    let mut r = Renderer::new(PLAIN);
    assert_eq!(r.push(b"see **this\n", 40), "");
    assert_eq!(r.release(40), "see **this\n");
}
