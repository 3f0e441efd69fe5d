//! `/retry`: the conversation as it was before the last question was asked (pure).

use crate::model::Message;

/// Drops the last question and everything after it (its answer, captures, tool results) from
/// the history and the transcript; returns the question to ask again. `None` before any question.
/// `start` is where the session put that question in the history ([`Session::turn_start`]), when
/// it knows.
///
/// [`Session::turn_start`]: crate::chat::Session::turn_start
pub fn last_question(
    history: &mut Vec<Message>,
    transcript: &mut Vec<(String, String)>,
    start: Option<usize>,
) -> Option<String> {
    // A `/continue` is no question: the one asked before it is (with its continuations).
    let t = transcript
        .iter()
        .rposition(|(role, text)| role == "user" && text != super::commands::CONTINUE)?;
    let continued = transcript[t + 1..].iter().any(|(role, _)| role == "user");
    let question = transcript[t].1.clone();
    // Where the question went in: there still, or (its request failed, so the chat loop took it
    // out) the end. Searching by text instead would find an earlier identical question after a
    // failed request and drop the turns between.
    // After continuations, where the last turn began is where the `/continue` went in.
    let start = start.filter(|_| !continued);
    let known = start.filter(|&s| {
        s == history.len()
            || matches!(history.get(s), Some(Message::User(text)) if *text == question)
    });
    // Without it (a resumed session), capture results are user messages too: the question is
    // the last one with its text.
    if let Some(h) = known.or_else(|| {
        history
            .iter()
            .rposition(|m| matches!(m, Message::User(text) if *text == question))
    }) {
        history.truncate(h);
    }
    transcript.truncate(t);
    Some(question)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(role, text)` pairs from `u:`/`a:` entries split at `|`, as the session keeps them.
    fn turns(entries: &str) -> Vec<(String, String)> {
        let role = |prefix: &str| if prefix == "u:" { "user" } else { "assistant" };
        let turn = |(prefix, text): (&str, &str)| (role(prefix).into(), text.into());
        entries.split('|').map(|e| turn(e.split_at(2))).collect()
    }

    fn messages(entries: &str) -> Vec<Message> {
        let message = |(role, text): (String, String)| match role.as_str() {
            "user" => Message::user(text),
            _ => Message::assistant(text),
        };
        turns(entries).into_iter().map(message).collect()
    }

    /// Retries the question of `transcript`: the question, and the history and transcript left.
    fn retry(
        history: &str,
        transcript: &str,
        start: Option<usize>,
    ) -> (String, Vec<Message>, usize) {
        let (mut h, mut t) = (messages(history), turns(transcript));
        let question = last_question(&mut h, &mut t, start).expect("a question");
        (question, h, t.len())
    }

    #[test]
    fn the_last_question_goes_with_all_that_followed_it() {
        let captured = "u:first|a:one|u:second|a:!{x}|u:Output: 2 — continue your answer.|a:two";
        let left = ("second".into(), messages("u:first|a:one"), 2);
        assert_eq!(
            retry(captured, "u:first|a:one|u:second|a:2 two", None),
            left
        );
        // Its request failed: the chat loop took it out of the history already.
        assert_eq!(
            retry("u:first|a:one", "u:first|a:one|u:second|a:", None),
            left
        );
        // A `/continue` is retried as the question before it (the index is the continue's).
        let cont = format!(
            "u:first|a:one|u:long one|a:cut|u:{}|a:rest",
            super::super::commands::CONTINUE
        );
        assert_eq!(
            retry(&cont, &cont, Some(4)),
            ("long one".into(), messages("u:first|a:one"), 2)
        );
        assert_eq!(last_question(&mut Vec::new(), &mut Vec::new(), None), None);
    }

    #[test]
    fn a_failed_repeat_of_an_earlier_question_keeps_that_earlier_turn() {
        // "continue" answered, then "continue" again whose request failed: the session knows
        // the failed one went in at index 2 (and was taken out), so turn one stays.
        let (history, transcript) = ("u:continue|a:one", "u:continue|a:one|u:continue|a:");
        let kept = retry(history, transcript, Some(2));
        assert_eq!(kept, ("continue".into(), messages(history), 2));
        // Without the index the text search would have dropped turn one: the control.
        assert!(retry(history, transcript, None).1.is_empty());
    }
}
