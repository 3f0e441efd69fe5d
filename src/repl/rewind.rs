//! `/retry`: the conversation as it was before the last question was asked (pure).

use crate::model::Message;

/// Drops the last question and everything after it (its answer, captures, tool results) from
/// the history and the transcript; returns the question to ask again. `None` before any question.
pub fn last_question(
    history: &mut Vec<Message>,
    transcript: &mut Vec<(String, String)>,
) -> Option<String> {
    let t = transcript.iter().rposition(|(role, _)| role == "user")?;
    let question = transcript[t].1.clone();
    // Capture results are user messages too; the question is the last one with its text. A
    // question whose request failed is no longer in the history (the chat loop took it out).
    if let Some(h) = history
        .iter()
        .rposition(|m| matches!(m, Message::User(text) if *text == question))
    {
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
            last_question(&mut history, &mut transcript).as_deref(),
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
            last_question(&mut history, &mut transcript).as_deref(),
            Some("second")
        );
        assert_eq!(history.len(), 2);
        assert_eq!(transcript.len(), 2);
    }

    #[test]
    fn nothing_to_retry_at_the_start() {
        assert_eq!(last_question(&mut Vec::new(), &mut Vec::new()), None);
    }
}
