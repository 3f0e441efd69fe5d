//! What may reach a terminal. Everything skillpipe did not write itself (model text, script output,
//! tool names, directive bodies) passes [`sanitize`] or a [`Sanitizer`] before a terminal sees it,
//! so that foreign bytes can never move the cursor, set the clipboard or the title, hide a link or
//! draw a fake prompt.

mod sanitize;

pub use sanitize::{Sanitizer, sanitize};

/// `bytes` as they may be shown: sanitized when `terminal`, else unchanged (a pipe or a file gets
/// the exact bytes).
pub fn for_terminal(bytes: &[u8], terminal: bool) -> std::borrow::Cow<'_, [u8]> {
    if !terminal {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut s = Sanitizer::default();
    s.push(bytes, &mut out);
    s.finish(&mut out);
    std::borrow::Cow::Owned(out)
}
