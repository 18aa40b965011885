//! Every error the API returns: a status and `{"error": {"code", "message"}}`, where the code is
//! stable for programs and the message says what to do.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::{ToResponse, ToSchema};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds, for 429.
    pub retry_after: Option<u64>,
}

/// The body of every error response.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `unauthorized`, `read_only`, `not_found`, `method_not_allowed`,
    /// `bad_request`, `invalid_request`, `too_large`, `unsupported_media_type`, `in_progress`,
    /// `idempotency_conflict`, `rate_limited`, `unavailable`.
    pub code: String,
    pub message: String,
}

// The errors every `/v1` operation may answer, as shared responses of the document.

/// The token is missing, not `Bearer <token>`, unknown or revoked.
#[derive(ToResponse)]
#[response(headers(("WWW-Authenticate" = String, description = "`Bearer realm=\"trawl\"`")))]
#[allow(dead_code)] // documentation only: ApiError writes the response
pub struct Unauthorized(ErrorBody);

/// The token is read-only (`trawl token create --read-only`): it reads batches, and submits and
/// cancels none.
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct ReadOnly(ErrorBody);

/// More than `api.rate_per_sec` requests in the last second with this token.
#[derive(ToResponse)]
#[response(headers(("Retry-After" = u64, description = "Seconds to wait before retrying")))]
#[allow(dead_code)]
pub struct RateLimited(ErrorBody);

/// The fleet (store, broker or object store) did not answer; worth retrying.
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct Unavailable(ErrorBody);

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", what)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// The fleet (store, broker, object store) failed: worth retrying.
    pub fn unavailable(e: impl std::fmt::Display) -> Self {
        tracing::warn!(error = %e, "request failed on the fleet");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            format!(
                "the fleet could not answer, try again: {}",
                trawl_telemetry::scrub(&e.to_string())
            ),
        )
    }
}

impl From<trawl_store::StoreError> for ApiError {
    fn from(e: trawl_store::StoreError) -> Self {
        ApiError::unavailable(e)
    }
}

impl From<trawl_pipeline::StageError> for ApiError {
    fn from(e: trawl_pipeline::StageError) -> Self {
        ApiError::unavailable(e)
    }
}

impl From<trawl_store::ObjectError> for ApiError {
    /// The store's own words (its URL, a local path, a bucket's answer) go to the log only:
    /// they describe the server's storage, not the request.
    fn from(e: trawl_store::ObjectError) -> Self {
        match e {
            trawl_store::ObjectError::BadKey(_) => ApiError::not_found("no such work product"),
            other => {
                tracing::warn!(error = %other, "object store request failed");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "the object store could not answer, try again",
                )
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message,
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"trawl\""),
            );
        }
        response
    }
}
