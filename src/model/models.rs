//! The endpoint's model list (`GET {base_url}/models`, OpenAI and Anthropic alike): completion of
//! `/model`, `doctor --online`, and the model of a local server chosen by `--base-url` alone.

use super::auth_headers;
use super::http::{client, error_chain, server_message};
use super::settings::{ProviderKind, Settings};
use std::time::Duration;

/// Why the list could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered {status}{}{}", super::detail(message), super::missing_v1(*status, url))]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} sent no model list ({reason})")]
    NotAList { url: String, reason: NotAList },
    #[error("a replay file has no model list")]
    Replay,
}

impl ListError {
    /// What the user can do about it, where the message alone does not say: a key for a server
    /// that refused (naming the variable, never the key), or a server to start.
    pub fn fix(&self, s: &Settings) -> Option<String> {
        match self {
            ListError::Status {
                status: 401 | 403, ..
            } => Some(super::auth_hint(&s.key_var_to_set(), s.api_key.is_some())),
            ListError::Unreachable { .. } => {
                Some("is the server running, and is base_url its address?".to_string())
            }
            _ => None,
        }
    }
}

/// Why a list response's body is not a model list.
#[derive(Debug, thiserror::Error)]
pub enum NotAList {
    /// The body is not JSON (an HTML error page, a proxy's answer): check `base_url`.
    #[error("the body is not JSON: {0}; check that base_url points at the API")]
    NotJson(#[from] serde_json::Error),
    /// JSON without the `data` array of `{"id": …}` objects both OpenAI and Anthropic send.
    #[error("no `data` array; check that base_url points at an OpenAI- or Anthropic-style API")]
    NoData,
}

/// The URL of the list for these settings.
pub fn list_url(s: &Settings) -> String {
    super::api_url(s.provider, &s.base_url, "models")
}

/// The ids in a list response (`{"data": [{"id": …}, …]}`), sorted.
pub fn parse(body: &[u8]) -> Result<Vec<String>, NotAList> {
    let v: serde_json::Value = serde_json::from_slice(body)?;
    let data = v
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or(NotAList::NoData)?;
    let mut ids: Vec<String> = data
        .iter()
        .filter_map(|m| m.get("id").and_then(|i| i.as_str()).map(str::to_string))
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Asks the endpoint for its models. Blocking, on a thread of its own (callable from anywhere,
/// also inside the chat's runtime), bounded by the connect timeout and `within`.
pub fn list(s: &Settings, within: Duration) -> Result<Vec<String>, ListError> {
    if s.provider == ProviderKind::Replay {
        return Err(ListError::Replay);
    }
    let url = list_url(s);
    let fetch = || -> Result<Vec<String>, ListError> {
        let u = &url;
        let unreachable = |reason: String| ListError::Unreachable {
            url: u.clone(),
            reason,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unreachable(e.to_string()))?;
        rt.block_on(async {
            let c = client(&s.options).map_err(|e| unreachable(e.to_string()))?;
            let headers = auth_headers(s.provider, s.api_key.as_deref());
            let req = c.get(u).timeout(within).headers(headers);
            let resp = req.send().await.map_err(|e| unreachable(error_chain(&e)))?;
            let status = resp.status().as_u16();
            let body = resp
                .bytes()
                .await
                .map_err(|e| unreachable(error_chain(&e)))?;
            if status != 200 {
                return Err(ListError::Status {
                    url: u.clone(),
                    status,
                    message: server_message(&body),
                });
            }
            parse(&body).map_err(|reason| ListError::NotAList {
                url: u.clone(),
                reason,
            })
        })
    };
    std::thread::scope(|scope| {
        scope.spawn(fetch).join().unwrap_or_else(|_| {
            Err(ListError::Unreachable {
                url: url.clone(),
                reason: "the request thread failed".into(),
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_without_a_message_says_only_the_status() {
        let e = |message: &str| ListError::Status {
            url: "http://h/v1/models".into(),
            status: 404,
            message: message.into(),
        };
        assert_eq!(e("").to_string(), "http://h/v1/models answered 404");
        assert_eq!(
            e("not found").to_string(),
            "http://h/v1/models answered 404: not found"
        );
    }

    #[test]
    fn ids_from_an_openai_style_list() {
        let body = br#"{"object":"list","data":[{"id":"qwen2.5:7b"},{"id":"llama3.2"},{"x":1}]}"#;
        assert_eq!(parse(body).unwrap(), ["llama3.2", "qwen2.5:7b"]);
        assert!(matches!(parse(b"{}"), Err(NotAList::NoData)));
        let html = parse(b"<html>").unwrap_err();
        assert!(matches!(html, NotAList::NotJson(_)));
        assert!(html.to_string().contains("base_url"), "{html}");
    }
}
