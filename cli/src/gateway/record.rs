//! The layer's policy and observer for `rpcscan gateway`: the policy flags as globs, the
//! Prometheus counters and `--log` records, and the `/metrics` service.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use rpcscan::mcp::Mcp;
use rpcscan::{Kind, Message};
use rpcscan_tower::{Decision, Denial, Direction, Event, Observer, PrometheusObserver, Rejection};
use tower_service::Service;

use crate::log::{self, Log, Traffic};
use crate::policy::{self, Policy};

/// The policy flags as the layer's policy: client requests and notifications only (a
/// client's response answers the server, which asked for it).
pub(super) struct Globs(pub(super) Arc<Policy>);

impl rpcscan_tower::Policy for Globs {
    fn decide(&self, msg: &Message<'_>, mcp: &Mcp<'_>) -> Decision {
        if !matches!(msg.kind(), Kind::Request | Kind::Notification) {
            return Decision::Forward;
        }
        // The layer has found the routing keys already: no second walk of `params`.
        match self.0.check_with_tool(msg, || mcp.tool_name()) {
            Ok(()) => Decision::Forward,
            Err(policy::Denial::Method) => {
                Decision::Deny(Denial::new(rpcscan::response::METHOD_NOT_FOUND, "Method not found"))
            }
            Err(policy::Denial::Tool(_)) => {
                Decision::Deny(Denial::new(rpcscan::response::INVALID_PARAMS, "Unknown tool"))
            }
            Err(policy::Denial::NoToolName) => Decision::Deny(Denial::new(
                rpcscan::response::INVALID_PARAMS,
                "Invalid params: params.name must be one string for the gateway's tool policy",
            )),
        }
    }
}

/// The observer: Prometheus counters, and the `--log` records.
pub(super) struct Record {
    pub(super) metrics: Option<Arc<PrometheusObserver>>,
    pub(super) log: Log,
    pub(super) policy: Arc<Policy>,
}

impl Record {
    /// A `proxy` record for a message the layer stopped, or an invalid one.
    fn rejection(&self, event: &Event<'_>, from: &str, valid: bool) {
        let (rejected, bytes) = (event.rejected, event.bytes);
        // Only the rejection path parses again, for the id and the reason.
        let parsed = bytes.map(rpcscan::parse);
        let id = match &parsed {
            Some(Ok(msg)) => msg.id().map(|id| id.raw()),
            Some(Err(invalid)) => invalid.id().map(|id| id.raw()),
            None => None,
        };
        let reason = match (&parsed, rejected) {
            (Some(Ok(msg)), Some(Rejection::Policy)) => match self.policy.check(msg) {
                Err(policy::Denial::Method) => {
                    "method not allowed by the gateway's policy".to_owned()
                }
                Err(policy::Denial::Tool(tool)) => format!("tool {tool:?} not allowed"),
                _ => "no single tool name".to_owned(),
            },
            (_, Some(rejected)) => rejected.as_str().to_owned(),
            (_, None) => "invalid".to_owned(),
        };
        let name = match rejected {
            None | Some(Rejection::Invalid) => "invalid",
            Some(Rejection::BodyTooLarge) => "oversized",
            Some(Rejection::MethodNotAllowed | Rejection::ToolNotAllowed | Rejection::Policy) => {
                "denied"
            }
            Some(other) => other.as_str(),
        };
        self.log.event(log::Event {
            from: Some(from),
            id,
            reason: Some(&reason),
            raw: bytes.filter(|_| !valid),
            size: bytes.map(|b| b.len() as u64),
            code: event.error_code,
            session: event.session,
            msg: bytes.filter(|_| valid),
            ..log::Event::new(name)
        });
    }
}

impl Observer for Record {
    fn message(&self, event: &Event<'_>) {
        if let Some(metrics) = &self.metrics {
            metrics.message(event);
        }
        if !self.log.on() {
            return;
        }
        let from = match event.direction {
            Direction::ClientToServer => "client",
            Direction::ServerToClient => "server",
        };
        let valid = event.kind != Kind::Invalid;
        let status = event.status.map(|s| s.as_u16());
        // What the client sent is logged whether it passed or not (its answer, the layer's
        // own, must have a request to answer); an upstream message only when the client
        // got it.
        let traffic = match (event.direction, event.bytes) {
            (Direction::ClientToServer, Some(bytes)) => {
                Some(Traffic { unreadable: !valid, ..Traffic::new("c2s", bytes) })
            }
            (Direction::ServerToClient, Some(bytes)) if valid && event.rejected.is_none() => {
                // An error status binds the answer to its POST's request, whatever its id.
                let request_id = event.request_id.filter(|_| status.is_some());
                Some(Traffic { status, request_id, ..Traffic::new("s2c", bytes) })
            }
            _ => None,
        };
        if let Some(traffic) = traffic {
            self.log.traffic(Traffic { session: event.session, ..traffic });
        }
        if event.rejected.is_some() || !valid {
            self.rejection(event, from, valid);
        }
        if let Some(answer) = &event.answer {
            self.log.traffic(Traffic {
                origin: Some("gateway"),
                status: Some(answer.status.as_u16()).filter(|_| !answer.status.is_success()),
                request_id: event.request_id,
                session: event.session,
                ..Traffic::new("s2c", answer.body)
            });
        }
    }

    fn non_message_event(&self, direction: Direction, session: Option<&str>, event: &str) {
        if let Some(metrics) = &self.metrics {
            metrics.non_message_event(direction, session, event);
        }
        self.log.event(log::Event {
            from: Some(direction.as_str()),
            reason: Some(event),
            session,
            ..log::Event::new("non_message")
        });
    }
}

/// `/metrics` on its own address: the Prometheus text (the layer's counters, then the
/// connections'); 404 elsewhere.
#[derive(Clone)]
pub(super) struct Metrics(pub(super) Arc<PrometheusObserver>, pub(super) Arc<super::conn::Stats>);

impl Service<Request<Incoming>> for Metrics {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let mut response = if request.uri().path() == "/metrics" {
            let mut text = self.0.render();
            self.1.render(&mut text);
            let mut response = Response::new(Full::new(Bytes::from(text)));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            response
        } else {
            Response::new(Full::new(Bytes::new()))
        };
        if request.uri().path() != "/metrics" {
            *response.status_mut() = StatusCode::NOT_FOUND;
        }
        ready(Ok(response))
    }
}
