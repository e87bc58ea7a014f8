//! The response body the layer hands out: its own answers, checked JSON bodies, and
//! upstream streams passed on chunk by chunk while an SSE decoder classifies each event.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use pin_project_lite::pin_project;
use rpcscan::frame::{Decode, SseDecoder};
use rpcscan::{Kind, OwnedMessage, Parser};
use tokio::time::Sleep;

use crate::observe::{Direction, Event, Observer};
use crate::trace::McpSpan;
use crate::BoxError;

pin_project! {
    /// The body of every response the layer returns.
    pub struct ResponseBody<B> {
        #[pin]
        inner: Inner<B>,
    }
}

pin_project! {
    #[project = InnerProj]
    enum Inner<B> {
        // The layer's own answer, or an upstream JSON body read whole and checked.
        Full { body: Full<Bytes> },
        // An upstream event stream, passed on as it arrives and classified in passing.
        Sse { #[pin] body: B, inspector: Box<SseInspector> },
        // Anything else from upstream, untouched.
        Plain { #[pin] body: B },
    }
}

impl<B> ResponseBody<B> {
    pub(crate) fn full(bytes: Bytes) -> Self {
        ResponseBody { inner: Inner::Full { body: Full::new(bytes) } }
    }

    pub(crate) fn sse(body: B, inspector: SseInspector) -> Self {
        ResponseBody { inner: Inner::Sse { body, inspector: Box::new(inspector) } }
    }

    pub(crate) fn plain(body: B) -> Self {
        ResponseBody { inner: Inner::Plain { body } }
    }
}

impl<B: fmt::Debug> fmt::Debug for ResponseBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::Full { body } => f.debug_tuple("ResponseBody::Full").field(body).finish(),
            Inner::Sse { body, .. } => f.debug_tuple("ResponseBody::Sse").field(body).finish(),
            Inner::Plain { body } => f.debug_tuple("ResponseBody::Plain").field(body).finish(),
        }
    }
}

/// An upstream stream was silent for longer than the idle timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleTimeout;

impl fmt::Display for IdleTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("upstream stream idle for longer than the idle timeout")
    }
}

impl std::error::Error for IdleTimeout {}

impl<B> Body for ResponseBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.project().inner.project() {
            InnerProj::Full { body } => {
                Pin::new(body).poll_frame(cx).map_err(|never| match never {})
            }
            InnerProj::Plain { body } => body.poll_frame(cx).map_err(Into::into),
            InnerProj::Sse { body, inspector } => match body.poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    if let Some(data) = frame.data_ref() {
                        inspector.feed(data);
                    }
                    inspector.rearm();
                    Poll::Ready(Some(Ok(frame)))
                }
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => {
                    inspector.finish();
                    Poll::Ready(None)
                }
                Poll::Pending => {
                    let idle = match inspector.idle.as_mut() {
                        Some((_, sleep)) => sleep.as_mut().poll(cx).is_ready(),
                        None => false,
                    };
                    if idle {
                        inspector.idle = None;
                        return Poll::Ready(Some(Err(Box::new(IdleTimeout))));
                    }
                    Poll::Pending
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Full { body } => body.is_end_stream(),
            Inner::Sse { body, .. } | Inner::Plain { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Full { body } => body.size_hint(),
            Inner::Sse { body, .. } | Inner::Plain { body } => body.size_hint(),
        }
    }
}

/// Classifies the events of an upstream stream as their bytes pass (a copy of each chunk
/// goes to the decoder; the chunk itself is passed on untouched).
pub(crate) struct SseInspector {
    decoder: SseDecoder,
    buf: BytesMut,
    parser: Parser,
    observer: Arc<dyn Observer>,
    session: Option<http::HeaderValue>,
    /// The POST's request, whose response the stream is expected to end with.
    request: Option<OwnedMessage>,
    start: Instant,
    idle: Option<(Duration, Pin<Box<Sleep>>)>,
    /// The POST's request span, until its response passes.
    span: McpSpan,
}

impl SseInspector {
    pub(crate) fn new(
        parser: Parser,
        max_message_size: usize,
        observer: Arc<dyn Observer>,
        session: Option<http::HeaderValue>,
        request: Option<OwnedMessage>,
        start: Instant,
        idle: Option<Duration>,
    ) -> Self {
        SseInspector {
            decoder: SseDecoder::new().max_message_size(max_message_size),
            buf: BytesMut::new(),
            parser,
            observer,
            session,
            request,
            start,
            idle: idle.map(|d| (d, Box::pin(tokio::time::sleep(d)))),
            span: McpSpan::none(),
        }
    }

    /// The POST's request span, ended when its response passes.
    pub(crate) fn span(self, span: McpSpan) -> Self {
        SseInspector { span, ..self }
    }

    fn feed(&mut self, data: &Bytes) {
        self.buf.extend_from_slice(data);
        while let Some(item) = self.decoder.decode(&mut self.buf) {
            self.classify(item);
        }
    }

    fn finish(&mut self) {
        while let Some(item) = self.decoder.decode_eof(&mut self.buf) {
            self.classify(item);
        }
        // A request's span still open: the stream ended without its response.
        self.span.failed("_OTHER", "the stream ended before the response");
        self.span.close();
    }

    fn rearm(&mut self) {
        if let Some((d, sleep)) = self.idle.as_mut() {
            // A timeout too long to represent never fires: leave the first deadline.
            if let Some(at) = tokio::time::Instant::now().checked_add(*d) {
                sleep.as_mut().reset(at);
            }
        }
    }

    fn classify(&mut self, item: Result<rpcscan::frame::Frame, rpcscan::frame::FrameError>) {
        let session = self.session.as_ref().and_then(|v| v.to_str().ok());
        let latency = Some(self.start.elapsed());
        let frame = match item {
            Ok(frame) => frame,
            Err(_) => {
                // An oversized event: not a message anyone downstream can read.
                self.observer.message(&Event {
                    direction: Direction::ServerToClient,
                    session,
                    kind: Kind::Invalid,
                    method: None,
                    tool: None,
                    error_code: None,
                    latency,
                    rejected: None,
                    bytes: None,
                    status: None,
                    answer: None,
                    request_id: None,
                });
                return;
            }
        };
        if !frame.is_message() {
            let event = frame.event().unwrap_or_default();
            self.observer.non_message_event(Direction::ServerToClient, session, event);
            return;
        }
        let event = match self.parser.parse(frame.bytes()) {
            Ok(msg) => {
                let answers = msg.kind().is_response()
                    && self.request.as_ref().is_some_and(|r| r.id() == msg.id());
                let (method, tool) = match (answers, self.request.as_ref()) {
                    (true, Some(request)) => (request.method(), request.mcp().tool_name()),
                    _ => (msg.method(), msg.mcp().tool_name()),
                };
                if answers {
                    self.span.answered(&msg);
                    self.span.close();
                } else {
                    self.span.server_message(&msg, session);
                }
                let error_code = msg.error_code().and_then(|c| c.as_i64());
                self.observer.message(&Event {
                    direction: Direction::ServerToClient,
                    session,
                    kind: msg.kind(),
                    method,
                    tool,
                    error_code,
                    latency,
                    rejected: None,
                    bytes: Some(frame.bytes()),
                    status: None,
                    answer: None,
                    request_id: None,
                });
                return;
            }
            Err(invalid) => Event {
                direction: Direction::ServerToClient,
                session,
                kind: Kind::Invalid,
                method: None,
                tool: None,
                error_code: Some(invalid.code()),
                latency,
                rejected: None,
                bytes: Some(frame.bytes()),
                status: None,
                answer: None,
                request_id: None,
            },
        };
        self.observer.message(&event);
    }
}
