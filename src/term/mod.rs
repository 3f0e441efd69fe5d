//! What may reach a terminal. Everything skillpipe did not write itself (model text, script output,
//! tool names, directive bodies) passes [`sanitize`] or a [`Sanitizer`] before a terminal sees it,
//! so that foreign bytes can never move the cursor, set the clipboard or the title, hide a link or
//! draw a fake prompt.

mod sanitize;

pub use sanitize::{Sanitizer, sanitize};
