//! The chat loop (DESIGN §7): stream, scan, run, loop back for captures.
