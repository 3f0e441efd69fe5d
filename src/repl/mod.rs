//! The interactive REPL (DESIGN §8).
