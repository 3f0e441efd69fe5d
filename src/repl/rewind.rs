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

    #[test]
    fn drops_the_last_turn_with_its_captures() {
        let mut history = vec![
            Message::user("first"),
            Message::assistant("one"),
            Message::user("second"),
            Message::assistant("!{x}"),
            Message::user("Output: 2 — continue your answer."),
            Message::assistant("two"),
        ];
        let mut transcript = vec![
            ("user".into(), "first".into()),
            ("assistant".into(), "one".into()),
            ("user".into(), "second".into()),
            ("assistant".into(), "2 two".into()),
        ];
        assert_eq!(
            last_question(&mut history, &mut transcript, None).as_deref(),
            Some("second")
        );
        assert_eq!(history, [Message::user("first"), Message::assistant("one")]);
        assert_eq!(transcript.len(), 2);
    }

    #[test]
    fn a_question_whose_request_failed_can_be_retried() {
        let mut history = vec![Message::user("first"), Message::assistant("one")];
        let mut transcript = vec![
            ("user".into(), "first".into()),
            ("assistant".into(), "one".into()),
            ("user".into(), "second".into()),
            ("assistant".into(), String::new()),
        ];
        assert_eq!(
            last_question(&mut history, &mut transcript, None).as_deref(),
            Some("second")
        );
        assert_eq!(history.len(), 2);
        assert_eq!(transcript.len(), 2);
    }

    #[test]
    fn a_failed_repeat_of_an_earlier_question_keeps_that_earlier_turn() {
        // "continue" answered, then "continue" again whose request failed: the session knows
        // the failed one went in at index 2 (and was taken out), so turn one stays.
        let mut history = vec![Message::user("continue"), Message::assistant("one")];
        let mut transcript = vec![
            ("user".into(), "continue".into()),
            ("assistant".into(), "one".into()),
            ("user".into(), "continue".into()),
            ("assistant".into(), String::new()),
        ];
        assert_eq!(
            last_question(&mut history, &mut transcript, Some(2)).as_deref(),
            Some("continue")
        );
        assert_eq!(history.len(), 2);
        assert_eq!(transcript.len(), 2);
        // Without the index the text search would have dropped turn one: the control.
        let mut h = history.clone();
        let mut t = transcript.clone();
        t.extend([
            ("user".into(), "continue".into()),
            ("assistant".into(), String::new()),
        ]);
        last_question(&mut h, &mut t, None);
        assert!(h.is_empty());
    }

    #[test]
    fn a_continue_is_retried_as_the_question_before_it() {
        let cont = crate::repl::commands::CONTINUE;
        let mut history = vec![
            Message::user("first"),
            Message::assistant("one"),
            Message::user("long one"),
            Message::assistant("cut"),
            Message::user(cont),
            Message::assistant("rest"),
        ];
        let mut transcript = vec![
            ("user".into(), "first".into()),
            ("assistant".into(), "one".into()),
            ("user".into(), "long one".into()),
            ("assistant".into(), "cut".into()),
            ("user".into(), cont.to_string()),
            ("assistant".into(), "rest".into()),
        ];
        // The session's index is the `/continue`'s; the question is asked again from before it.
        assert_eq!(
            last_question(&mut history, &mut transcript, Some(4)).as_deref(),
            Some("long one")
        );
        assert_eq!(history, [Message::user("first"), Message::assistant("one")]);
        assert_eq!(transcript.len(), 2);
    }

    #[test]
    fn nothing_to_retry_at_the_start() {
        assert_eq!(last_question(&mut Vec::new(), &mut Vec::new(), None), None);
    }
}
