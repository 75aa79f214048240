//! The HTTP API (axum): one handler per endpoint, each reading its query and body, calling the
//! library (the same functions as `classify`, `filter` and `learn`) and answering; errors are
//! `{"error": "..."}` with a 4xx or 5xx status that fits.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::json;

use super::metrics::Metrics;
use super::served::{LearnError, Reload, ServedModel};
use crate::jobs::batch::classify_bytes_with;
use crate::jobs::classify_output::{self, OutputFormat, OutputOptions};
use crate::jobs::filter::{filter_message_with, FilterOptions, Verdict};
use crate::learn::probability::{Method, DEFAULT_SAMPLES};

/// What every handler shares.
pub struct AppState {
    pub models: Vec<Arc<ServedModel>>,
    /// The model of classify, learn and reload requests without `model=`.
    pub default_model: usize,
    /// The model of filter requests without `model=` (the built-in spam model when the server
    /// serves the built-in models, as `cwtext filter` does).
    pub filter_model: usize,
    pub token: Option<String>,
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
    pub metrics: Metrics,
    /// Requests being worked on (classified, filtered, learned) at once: a permit is taken once
    /// the body is in, so a client that sends its body slowly holds no worker (`--max-concurrent`).
    pub work: Arc<tokio::sync::Semaphore>,
    /// The bytes of bodies being received or held at once, in KiB ([`body_budget_kib`]): a
    /// request reserves its declared length (a chunked one, the body limit) before its body is
    /// read, so a thousand slow uploads cannot hold a thousand bodies' worth of memory.
    pub body_budget: Arc<tokio::sync::Semaphore>,
}

/// The bodies' memory budget in KiB: four of the largest body, and at least 256 MiB.
pub fn body_budget_kib(max_body_bytes: usize) -> usize {
    (max_body_bytes.saturating_mul(4))
        .max(256 << 20)
        .div_ceil(1024)
}

/// What a request holds while it is worked on: its share of the bodies' memory budget and a
/// worker's permit.
pub struct Admitted {
    _body: tokio::sync::OwnedSemaphorePermit,
    _work: tokio::sync::OwnedSemaphorePermit,
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

/// Every error answer's body: `{"error": "..."}` and a newline.
pub fn error_body(message: &str) -> String {
    format!("{}\n", json!({ "error": message }))
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            error_body(&self.message),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// The router with every endpoint.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/classify", post(classify))
        .route("/filter", post(filter))
        .route("/learn", post(learn))
        .route("/reload", post(reload))
        .route("/models", get(models))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such endpoint: POST /classify, /filter, /learn, /reload; GET /models, /health, /metrics",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed: POST /classify, /filter, /learn, /reload; GET /models, /health, /metrics",
    )
}

/// A request's query parameters, or why they cannot be read: left to the handler, which
/// answers (and counts) the error as it answers every other.
struct Params(Result<HashMap<String, String>, ApiError>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Params(decode_query(&parts.uri)))
    }
}

/// The query of `uri` as names and values. axum's parser decodes a percent-encoded byte that
/// is not UTF-8 as U+FFFD, so a parameter whose bytes are not UTF-8 is refused first, named.
fn decode_query(uri: &axum::http::Uri) -> Result<HashMap<String, String>, ApiError> {
    use percent_encoding::percent_decode_str;
    for pair in uri.query().unwrap_or("").split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if [name, value]
            .iter()
            .any(|part| percent_decode_str(part).decode_utf8().is_err())
        {
            return Err(ApiError::bad(format!(
                "bad query string: parameter {} is not UTF-8 once percent-decoded",
                percent_decode_str(name).decode_utf8_lossy()
            )));
        }
    }
    let Query(map) =
        Query::try_from_uri(uri).map_err(|e| ApiError::bad(format!("bad query string: {e}")))?;
    Ok(map)
}

/// The query's parameters, refusing any not in `allowed`.
fn params(q: Params, allowed: &[&str]) -> Result<HashMap<String, String>, ApiError> {
    let map = q.0?;
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::bad(format!(
            "unknown parameter {k:?} (this endpoint takes: {})",
            allowed.join(", ")
        )));
    }
    Ok(map)
}

fn parse<T: std::str::FromStr>(
    map: &HashMap<String, String>,
    key: &str,
    what: &str,
) -> Result<Option<T>, ApiError> {
    map.get(key)
        .map(|v| {
            v.parse()
                .map_err(|_| ApiError::bad(format!("{key} must be {what}, but is {v:?}")))
        })
        .transpose()
}

/// A flag: absent, `false` or `0` is off; `true`, `1` or empty is on.
fn bool_param(map: &HashMap<String, String>, key: &str) -> Result<bool, ApiError> {
    match map.get(key).map(String::as_str) {
        None | Some("false") | Some("0") => Ok(false),
        Some("") | Some("true") | Some("1") => Ok(true),
        Some(other) => Err(ApiError::bad(format!(
            "{key} must be true or false, but is {other:?}"
        ))),
    }
}

fn min_prob(map: &HashMap<String, String>) -> Result<Option<f64>, ApiError> {
    let p: Option<f64> = parse(map, "min_prob", "a probability")?;
    match p {
        Some(p) if !(0.0..=1.0).contains(&p) => Err(ApiError::bad(format!(
            "min_prob must be a probability in [0, 1], but is {p}"
        ))),
        p => Ok(p),
    }
}

/// `unsure_label=`, by default the commands' `_unsure`.
fn unsure_label(map: &HashMap<String, String>) -> String {
    map.get("unsure_label")
        .cloned()
        .unwrap_or_else(|| crate::jobs::route::UNSURE.into())
}

/// `samples`, `sample_seed` and `probabilities`, as `--samples`, `--sample-seed` and
/// `--probabilities` (default: Gibbs, 1,000 samples, seed 0).
fn method(map: &HashMap<String, String>) -> Result<Method, ApiError> {
    let samples: u64 = parse(map, "samples", "a whole number")?.unwrap_or(DEFAULT_SAMPLES as u64);
    if !(1..=10_000_000).contains(&samples) {
        return Err(ApiError::bad(format!(
            "samples must be in 1..=10000000, but is {samples}"
        )));
    }
    let seed: u64 = parse(map, "sample_seed", "a whole number")?.unwrap_or(0);
    match map.get("probabilities").map(String::as_str) {
        None | Some("gibbs") => Ok(Method::Gibbs {
            samples: samples as usize,
            seed,
        }),
        Some("exact") => Ok(Method::Exact),
        Some(other) => Err(ApiError::bad(format!(
            "probabilities must be gibbs or exact, but is {other:?}"
        ))),
    }
}

impl AppState {
    fn model(
        &self,
        map: &HashMap<String, String>,
        default: usize,
    ) -> Result<&Arc<ServedModel>, ApiError> {
        match map.get("model") {
            None => Ok(&self.models[default]),
            // By name, or by the model file's path (what `-m FILE --server URL` sends).
            Some(name) => self
                .models
                .iter()
                .find(|m| &m.name == name)
                .or_else(|| {
                    self.models.iter().find(|m| {
                        m.canonical
                            .as_ref()
                            .is_some_and(|f| f.as_os_str() == name.as_str())
                    })
                })
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::NOT_FOUND,
                        format!(
                            "no model {name:?} here (served: {})",
                            self.models
                                .iter()
                                .map(|m| m.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                }),
        }
    }

    /// The models served from files (the built-in ones have nothing to reload or learn into).
    pub fn file_models(&self) -> Vec<Arc<ServedModel>> {
        self.models
            .iter()
            .filter(|m| m.file.is_some())
            .cloned()
            .collect()
    }

    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        // Compared in constant time.
        let same = given.len() == token.len()
            && given
                .bytes()
                .zip(token.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "this endpoint needs the server's token: Authorization: Bearer TOKEN (the file given to --token-file)",
            ))
        }
    }

    /// The whole body, within the size limit and the read timeout (which also bounds the wait
    /// for room in the bodies' memory budget), and then a worker's permit.
    async fn body(&self, headers: &HeaderMap, body: Body) -> Result<(Bytes, Admitted), ApiError> {
        let too_large = || {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the body is larger than {} bytes (--max-body-bytes)",
                    self.max_body_bytes
                ),
            )
        };
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body_bytes as u64) {
            return Err(too_large());
        }
        let limited = http_body_util::Limited::new(body, self.max_body_bytes);
        let reserve = declared.map_or(self.max_body_bytes as u64, |n| n.max(1));
        let kib = u32::try_from(reserve.div_ceil(1024)).unwrap_or(u32::MAX);
        let budget = self.body_budget.clone();
        let received = async move {
            let permit = budget
                .acquire_many_owned(kib)
                .await
                .expect("the budget is never closed");
            limited.collect().await.map(|c| (c.to_bytes(), permit))
        };
        let (bytes, body_permit) = match tokio::time::timeout(self.body_timeout, received).await {
            Err(_) => Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} s (--body-timeout)",
                    self.body_timeout.as_secs_f64()
                ),
            )),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
            Ok(Err(e)) => Err(ApiError::bad(format!("cannot read the body: {e}"))),
            Ok(Ok(received)) => Ok(received),
        }?;
        let work = self
            .work
            .clone()
            .acquire_owned()
            .await
            .expect("the worker permits are never closed");
        Ok((
            bytes,
            Admitted {
                _body: body_permit,
                _work: work,
            },
        ))
    }

    fn finish(
        &self,
        endpoint: &str,
        model: &str,
        start: Instant,
        result: Result<Response, ApiError>,
    ) -> Response {
        let response = result.unwrap_or_else(IntoResponse::into_response);
        self.metrics
            .request(endpoint, model, response.status().as_u16(), start.elapsed());
        response
    }
}

fn status_of(e: &crate::Error) -> StatusCode {
    match e {
        crate::Error::Binary { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        crate::Error::EmptyDocument { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// `POST /classify?model=&format=json|text|tsv&top=&min_prob=&unsure_label=&samples=&sample_seed=&probabilities=`:
/// what `cwtext classify --format FORMAT` prints for the body on standard input (default json).
async fn classify(
    State(state): State<Arc<AppState>>,
    q: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let start = Instant::now();
    let allowed = [
        "model",
        "format",
        "top",
        "min_prob",
        "unsure_label",
        "samples",
        "sample_seed",
        "probabilities",
        "name",
        "several",
    ];
    let mut name = String::new();
    let result = async {
        let map = params(q, &allowed)?;
        let served = state.model(&map, state.default_model)?;
        name = served.name.clone();
        let format = match map.get("format").map(String::as_str) {
            None | Some("json") => OutputFormat::Json,
            Some("text") => OutputFormat::Text,
            Some("tsv") => OutputFormat::Tsv,
            Some(other) => {
                return Err(ApiError::bad(format!(
                    "format must be json, text or tsv, but is {other:?}"
                )))
            }
        };
        let options = OutputOptions {
            format,
            top: parse(&map, "top", "a whole number")?,
            min_prob: min_prob(&map)?,
            unsure_label: unsure_label(&map),
        };
        let method = method(&map)?;
        let (bytes, _admitted) = state.body(&headers, body).await?;
        // The document's name in the output (`classify FILE` prints the file's), and whether
        // it is one of several (a text block then starts with `==> NAME <==`).
        let doc_name = map.get("name").map_or("-", String::as_str);
        let several_asked = bool_param(&map, "several")?;
        let single_error_name = if doc_name == "-" { "<stdin>" } else { doc_name };
        let (out, skipped) = served
            .with_model(|model, pipeline| {
                let max_unpacked = model.pipeline().max_document_bytes;
                let (documents, _warnings) =
                    classify_output::documents(&bytes, doc_name, max_unpacked);
                let several = documents.len() > 1 || several_asked;
                let mut out = Vec::new();
                let mut skipped = 0usize;
                for (doc_name, doc) in &documents {
                    let error_name = if documents.len() > 1 {
                        doc_name.as_str()
                    } else {
                        single_error_name
                    };
                    match classify_bytes_with(
                        model,
                        pipeline,
                        doc,
                        std::path::Path::new(error_name),
                        method,
                    ) {
                        Ok(p) => {
                            // The decision the answer gives: the unsure label below min_prob.
                            state
                                .metrics
                                .predicted(&served.name, options.decision(model.labels(), &p));
                            classify_output::write_prediction(
                                &mut out,
                                model.labels(),
                                doc_name,
                                &p,
                                &options,
                                several,
                            )
                            .expect("writing to memory cannot fail");
                        }
                        Err(e) if documents.len() > 1 && e.is_skippable() => skipped += 1,
                        Err(e) => return Err(ApiError::new(status_of(&e), e.to_string())),
                    }
                }
                Ok((out, skipped))
            })
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
        let content_type = match format {
            OutputFormat::Json => "application/x-ndjson",
            OutputFormat::Text => "text/plain; charset=utf-8",
            OutputFormat::Tsv => "text/tab-separated-values; charset=utf-8",
        };
        let mut r = ([(header::CONTENT_TYPE, content_type)], out).into_response();
        r.headers_mut()
            .insert("x-cwtext-skipped", HeaderValue::from(skipped));
        Ok(r)
    }
    .await;
    state.finish("classify", &name, start, result)
}

/// `POST /filter?model=&min_prob=&unsure_label=&subject_tag=&samples=&sample_seed=&probabilities=`:
/// the message with the added header fields, as `cwtext filter` writes it; the exit code
/// `filter` would give in `X-Cwtext-Exit-Code`.
async fn filter(
    State(state): State<Arc<AppState>>,
    q: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let start = Instant::now();
    let allowed = [
        "model",
        "min_prob",
        "unsure_label",
        "subject_tag",
        "samples",
        "sample_seed",
        "probabilities",
    ];
    let mut name = String::new();
    let result = async {
        let map = params(q, &allowed)?;
        let served = state.model(&map, state.filter_model)?;
        name = served.name.clone();
        let subject_tag = bool_param(&map, "subject_tag")?;
        let options = FilterOptions {
            min_prob: min_prob(&map)?,
            unsure_label: unsure_label(&map),
            subject_tag,
            method: method(&map)?,
        };
        let (bytes, _admitted) = state.body(&headers, body).await?;
        let filtered = served
            .with_model(|model, pipeline| {
                let f = filter_message_with(Ok((model, pipeline)), &bytes, &options);
                if let Verdict::Label { label, .. } = &f.verdict {
                    state
                        .metrics
                        .predicted(&served.name, &model.labels()[*label]);
                } else if let Verdict::Unsure { .. } = &f.verdict {
                    state.metrics.predicted(&served.name, &options.unsure_label);
                }
                f
            })
            .unwrap_or_else(|e| filter_message_with(Err(e.to_string()), &bytes, &options));
        let code = filtered.verdict.exit_code();
        let mut r = ([(header::CONTENT_TYPE, "message/rfc822")], filtered.message).into_response();
        r.headers_mut()
            .insert("x-cwtext-exit-code", HeaderValue::from(u16::from(code)));
        Ok(r)
    }
    .await;
    state.finish("filter", &name, start, result)
}

/// `POST /learn?model=&label=L` (token when configured): the body learned as `cwtext learn
/// --label L` learns standard input; answered once journaled, synced and applied.
async fn learn(
    State(state): State<Arc<AppState>>,
    q: Params,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let start = Instant::now();
    let mut name = String::new();
    let result = async {
        state.authorize(&headers)?;
        let map = params(q, &["model", "label"])?;
        let served = state.model(&map, state.default_model)?.clone();
        name = served.name.clone();
        let label = match map.get("label") {
            Some(l) if !l.is_empty() => l.clone(),
            _ => {
                return Err(ApiError::bad(
                    "learn needs label=L, the document's correct label",
                ))
            }
        };
        if let Some(refusal) = crate::model::label_refusal(&label) {
            return Err(ApiError::bad(format!("{refusal}; nothing was learned")));
        }
        let (bytes, _admitted) = state.body(&headers, body).await?;
        match served.learn(label.clone(), bytes.to_vec()).await {
            Ok(learned) => {
                let c = &learned.corrections;
                Ok(axum::Json(json!({
                    "model": served.name,
                    "label": label,
                    "documents": c.documents,
                    "mistakes": c.mistakes,
                    // Of those, the refiles of a new folder learned on the raw variance.
                    "raw_variance": c.raw_variance,
                    "new_labels": c.new_labels,
                    "skipped": learned.skipped,
                    "journal_corrections": learned.journal_corrections,
                    "documents_trained": learned.documents_trained,
                    // What `learn` warns of: the model keeps far fewer documents a label for
                    // corrections to protect than `train` would now keep (null: it does not).
                    "outgrown": c.outgrown.map(|(kept, chosen)| json!({
                        "kept_per_label": kept,
                        "train_would_keep": chosen,
                    })),
                }))
                .into_response())
            }
            Err(e) => {
                let status = match &e {
                    LearnError::NotText(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    LearnError::Unlearnable(_) => StatusCode::UNPROCESSABLE_ENTITY,
                    LearnError::ReadOnly(_) | LearnError::Conflict(_) => StatusCode::CONFLICT,
                    LearnError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
                };
                Err(ApiError::new(status, e.to_string()))
            }
        }
    }
    .await;
    state.finish("learn", &name, start, result)
}

/// `POST /reload?model=` (token when configured): checks now whether model files were replaced
/// (the server also checks every second).
async fn reload(State(state): State<Arc<AppState>>, q: Params, headers: HeaderMap) -> Response {
    let start = Instant::now();
    let result = async {
        state.authorize(&headers)?;
        let map = params(q, &["model"])?;
        let chosen: Vec<Arc<ServedModel>> = match map.get("model") {
            Some(_) => vec![state.model(&map, state.default_model)?.clone()],
            None => state.file_models(),
        };
        let mut out = serde_json::Map::new();
        let mut refused = false;
        for m in chosen {
            let v = match m.reload().await {
                Reload::Unchanged => json!({"reloaded": false}),
                Reload::Reloaded { crc } => {
                    json!({"reloaded": true, "crc32": format!("{crc:08x}")})
                }
                Reload::Refused(why) => {
                    refused = true;
                    json!({"reloaded": false, "error": why})
                }
            };
            out.insert(m.name.clone(), v);
        }
        let status = if refused {
            StatusCode::CONFLICT
        } else {
            StatusCode::OK
        };
        Ok((status, axum::Json(serde_json::Value::Object(out))).into_response())
    }
    .await;
    state.finish("reload", "", start, result)
}

/// `GET /models`: every model's labels, pipeline, calibration and training counts.
async fn models(State(state): State<Arc<AppState>>) -> Response {
    use std::sync::atomic::Ordering;
    let start = Instant::now();
    let list: Vec<serde_json::Value> = state
        .models
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let s = &m.stats;
            m.with_model(|model, _| {
                let h = &model.header;
                json!({
                    "name": m.name,
                    "file": m.file.as_ref().map(|f| f.display().to_string()),
                    "default": i == state.default_model,
                    "learns": m.file.is_some(),
                    "labels": h.labels,
                    "training": h.training,
                    "pipeline": h.pipeline,
                    "learner": h.learner,
                    "calibration": h.calibration,
                    "probability_scale": h.probability_scale,
                    "label_shift": h.label_shift,
                    "file_crc32": m.file.as_ref().map(|_| format!("{:08x}", s.file_crc.load(Ordering::Relaxed))),
                    "journal_corrections": s.journal_corrections.load(Ordering::Relaxed),
                    "corrections_learned": s.corrections.load(Ordering::Relaxed),
                    "learning_suspended": s.conflict.load(Ordering::Relaxed),
                })
            })
            .unwrap_or_else(|e| json!({"name": m.name, "error": e.to_string()}))
        })
        .collect();
    let r = axum::Json(json!({ "models": list })).into_response();
    state.finish("models", "", start, Ok(r))
}

/// `GET /health`.
async fn health(State(state): State<Arc<AppState>>) -> Response {
    let start = Instant::now();
    let r = axum::Json(json!({"status": "ok", "models": state.models.len()})).into_response();
    state.finish("health", "", start, Ok(r))
}

/// `GET /metrics`: the Prometheus text format.
async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let start = Instant::now();
    let text = state.metrics.render(&state.models);
    let r = (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response();
    state.finish("metrics", "", start, Ok(r))
}

/// The answer to a panic inside a handler: a 500 with a JSON error, never a dropped connection.
pub fn panic_response(
    _: Box<dyn std::any::Any + Send + 'static>,
) -> Response<http_body_util::Full<Bytes>> {
    let body = error_body("internal error while answering (a bug: please report it)");
    Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .header(header::CONTENT_TYPE, "application/json")
        .body(http_body_util::Full::from(body))
        .expect("a valid response")
}
