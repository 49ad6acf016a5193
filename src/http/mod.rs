//! The HTTP front end: the JSON API (`/v1/move`, `/v1/analyse` streamed as server-sent events,
//! `/v1/morpion/move`), `/healthz`, `/metrics` and the web board's files, on axum and hyper.
//! Move requests go through the same `session::answer` as the line protocol's: the same search
//! slots, memory budget, maximum budget, watchdog and instant move. docs/http.md is the contract.

pub mod api;
mod morpion;

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request as HttpRequest, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::engine::ProgressSink;
use crate::metrics::Front;
use crate::protocol::Request;
use crate::session::{self, Shared};
use api::{ApiError, MoveAnswer, ProgressJson, TimeField};

/// The largest request body: a 128×128 board's rows are 17 KB; a move list of every cell 200 KB.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// How often an analysis stream writes a comment line when the search has nothing new: a client
/// that left is noticed by the failed write, and its search stopped, within about this time.
const STREAM_KEEP_ALIVE: Duration = Duration::from_millis(500);

#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Connections served at once; further ones get a 503 and are closed.
    pub max_connections: usize,
    /// A request's headers must arrive within this, and then its body within this again; an
    /// idle connection is closed after it.
    pub header_timeout: Duration,
}

#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    stop: CancellationToken,
    lab: Arc<morpion::Lab>,
    /// A request's body must arrive within this, as its headers must.
    body_timeout: Duration,
}

/// The API's routes over `shared`; `stop` is the process's stop (a stopping server reports it
/// on `/healthz` and lets searches in flight finish within its grace).
pub fn router(shared: Arc<Shared>, stop: CancellationToken, body_timeout: Duration) -> Router {
    let app = App {
        shared,
        stop,
        lab: Arc::new(morpion::Lab::default()),
        body_timeout,
    };
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/style.css", get(page::style))
        .route("/v1/move", post(post_move))
        .route("/v1/analyse", post(post_analyse))
        .route("/v1/morpion/move", post(post_morpion_move))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(|| async { error_response(&ApiError::NotFound) })
        .method_not_allowed_fallback(|| async { error_response(&ApiError::MethodNotAllowed) })
        .layer(middleware::from_fn_with_state(app.clone(), count_responses))
        .with_state(app)
}

/// Counts every response by route and status for `/metrics` (unknown paths under one label, so
/// that a scan cannot grow the table).
async fn count_responses(State(app): State<App>, request: HttpRequest, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |path| path.as_str().to_string());
    let response = next.run(request).await;
    app.shared
        .metrics
        .http_response(route, response.status().as_u16());
    response
}

fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot write an answer as JSON");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

fn error_response(error: &ApiError) -> Response {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    json_response(status, &error.body())
}

/// The body, or the error that names why it could not be read: too large, or too slow to
/// arrive (a client that trickles its body would hold its connection for ever).
async fn read_body(body: Body, timeout: Duration) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, MAX_BODY_BYTES)).await {
        Err(_) => Err(ApiError::BodyTimeout(timeout)),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(error)) => {
            let too_large = std::error::Error::source(&error)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            if too_large {
                Err(ApiError::BodyTooLarge)
            } else {
                Err(ApiError::BadJson(format!("cannot read the body: {error}")))
            }
        }
    }
}

/// A move request's body read, checked and its budget clipped, with the instant it arrived (its
/// deadline runs from the body's last byte, as the line protocol's from the request's last line);
/// or the error response. `what` names the request in the log.
async fn move_request(
    app: &App,
    body: Body,
    time: TimeField,
    what: &str,
) -> Result<(Request, Instant), Response> {
    let body = read_body(body, app.body_timeout).await;
    let received = Instant::now();
    let parsed =
        body.and_then(|body| api::parse_position(&body, app.shared.config.overline_wins, time));
    match parsed {
        Ok(mut request) => {
            app.shared.clip_budget(&mut request);
            Ok((request, received))
        }
        Err(error) => {
            tracing::info!(error = %error.message(), "bad HTTP {what} request");
            Err(error_response(&error))
        }
    }
}

async fn post_move(State(app): State<App>, body: Body) -> Response {
    let (request, received) = match move_request(&app, body, TimeField::Required, "move").await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let shared = &app.shared;
    let (budget, side, rows) = (request.budget, request.side, request.board.rows());
    // A client that leaves drops this future, which stops the search (`session::answer`).
    let answered = session::answer(
        request,
        received,
        shared,
        &app.stop,
        std::future::pending(),
        None,
    )
    .await;
    let elapsed = received.elapsed();
    shared
        .metrics
        .reply(Front::Http, answered.outcome(), elapsed, elapsed > budget);
    match MoveAnswer::new(&answered, side, rows, elapsed) {
        Ok(answer) => json_response(StatusCode::OK, &answer),
        Err(error) => error_response(&error),
    }
}

async fn post_analyse(State(app): State<App>, body: Body) -> Response {
    let default_budget = app.shared.config.max_budget.as_millis() as u64;
    let time = TimeField::DefaultsTo(default_budget);
    let (request, received) = match move_request(&app, body, time, "analysis").await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let shared = Arc::clone(&app.shared);
    let (budget, side, rows) = (request.budget, request.side, request.board.rows());
    let (events, stream) = mpsc::unbounded_channel::<SseEvent>();
    let progress_events = events.clone();
    let progress = ProgressSink::new(move |progress| {
        let event = SseEvent::default()
            .event("progress")
            .json_data(ProgressJson::new(progress, rows));
        if let Ok(event) = event {
            let _ = progress_events.send(event);
        }
    });
    let stop = app.stop.clone();
    tokio::spawn(async move {
        // The stream's end (the client left, its connection closed) is the client gone.
        let gone = {
            let events = events.clone();
            async move { events.closed().await }
        };
        let answered =
            session::answer(request, received, &shared, &stop, gone, Some(progress)).await;
        let elapsed = received.elapsed();
        shared
            .metrics
            .reply(Front::Http, answered.outcome(), elapsed, elapsed > budget);
        let last = match MoveAnswer::new(&answered, side, rows, elapsed) {
            Ok(answer) => SseEvent::default().event("done").json_data(answer),
            Err(error) => SseEvent::default().event("error").json_data(error.body()),
        };
        if let Ok(event) = last {
            let _ = events.send(event);
        }
    });
    let stream = UnboundedReceiverStream::new(stream).map(Ok::<_, Infallible>);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(STREAM_KEEP_ALIVE))
        .into_response()
}

async fn post_morpion_move(State(app): State<App>, body: Body) -> Response {
    let body = match read_body(body, app.body_timeout).await {
        Ok(body) => body,
        Err(error) => return error_response(&error),
    };
    let lab = Arc::clone(&app.lab);
    match tokio::task::spawn_blocking(move || lab.answer(&body)).await {
        Ok(Ok(answer)) => json_response(StatusCode::OK, &answer),
        Ok(Err(error)) => error_response(&error),
        Err(error) => {
            tracing::error!(%error, "the morpion lab failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

async fn healthz(State(app): State<App>) -> Response {
    let gauges = app.shared.search_gauges();
    let (status, word) = if app.stop.is_cancelled() {
        (StatusCode::SERVICE_UNAVAILABLE, "stopping")
    } else {
        (StatusCode::OK, "ok")
    };
    json_response(
        status,
        &serde_json::json!({
            "status": word,
            "version": env!("CARGO_PKG_VERSION"),
            "searches_running": gauges.running,
            "searches_waiting": gauges.waiting,
            "search_slots": gauges.slots,
        }),
    )
}

async fn metrics(State(app): State<App>) -> Response {
    let text = app.shared.metrics.render(app.shared.search_gauges());
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

/// The web board's files, built into the binary: no build step, nothing fetched at run time.
mod page {
    use axum::http::{header, HeaderValue};
    use axum::response::IntoResponse;

    fn file(content_type: &'static str, text: &'static str) -> impl IntoResponse {
        (
            [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
            text,
        )
    }

    pub async fn index() -> impl IntoResponse {
        file("text/html; charset=utf-8", include_str!("web/index.html"))
    }

    pub async fn script() -> impl IntoResponse {
        file("text/javascript; charset=utf-8", include_str!("web/app.js"))
    }

    pub async fn style() -> impl IntoResponse {
        file("text/css; charset=utf-8", include_str!("web/style.css"))
    }
}

/// Serves HTTP on `listener` until `stop` is cancelled; then stops accepting, lets every
/// connection finish the request it is answering, and returns.
pub async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    config: HttpConfig,
    stop: CancellationToken,
) -> io::Result<()> {
    let router = router(Arc::clone(&shared), stop.clone(), config.header_timeout);
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                tracing::warn!(%error, "HTTP accept failed");
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::warn!(%peer, "HTTP connection refused: limit of {} reached", config.max_connections);
            shared.metrics.refused(Front::Http);
            connections.spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let open = shared.metrics.connection(Front::Http);
        let service = TowerToHyperService::new(router.clone());
        let stop = stop.clone();
        let header_timeout = config.header_timeout;
        connections.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = served {
                tracing::debug!(%peer, %error, "HTTP connection ended");
            }
            drop((permit, open));
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
    Ok(())
}

async fn refuse(mut stream: TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = ApiError::Busy.body().to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
