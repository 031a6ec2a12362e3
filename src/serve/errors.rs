//! Every refusal the API gives is a status and a sentence: `{"error": "column 4 is full"}`.
//! [`ApiError`] is what handlers return; [`json_errors`] gives the same shape to the answers
//! that axum and tower-http write themselves (malformed JSON, an oversized body, an unknown
//! route, a wrong method, a timeout), so a client always finds a message to show, in plain
//! words that name the field ([`super::rejections`]).

use axum::body::{to_bytes, Body};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Request bodies are a few fields; anything larger is refused.
pub const BODY_LIMIT: usize = 16 * 1024;

/// A refused request: its status and what to tell the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }
    /// 400: the request asks for something that does not exist or is not allowed.
    pub fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    /// 404: no such game (or route).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
    /// 409: fine in itself, but not now (the engine is thinking, it is not your turn).
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }
    /// 500: the server's own failure, with what it knows.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.status)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_error(self.status, &self.message)
    }
}

fn json_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::to_string(&ErrorBody { error: message })
        .unwrap_or_else(|_| r#"{"error":"unknown error"}"#.into());
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Error bodies are short sentences; anything longer is cut rather than buffered.
const MAX_ERROR_BODY: usize = 16 * 1024;

/// Rewrites an error answer that is not JSON (axum's rejections and fallbacks, tower-http's
/// limits) as `{"error": ...}`, keeping its status; a body with no text gets the status's
/// own words.
pub async fn json_errors(method: Method, uri: Uri, response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = match to_bytes(Body::new(body), MAX_ERROR_BODY).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!("the request body is larger than the {BODY_LIMIT} bytes allowed")
    } else if status == StatusCode::METHOD_NOT_ALLOWED {
        // The `Allow` header is added after this layer, so it is not known here.
        format!(
            "{method} is not allowed for {} (the Allow header lists what is)",
            uri.path()
        )
    } else if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_string()
    } else {
        super::rejections::plain_words(&text)
    };
    let mut rewritten = json_error(status, &message);
    // Headers such as `Allow` on a 405 still help the client.
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}
