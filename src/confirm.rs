//! The confirmation prompt on the terminal (DESIGN §2, confirm = "ask").
