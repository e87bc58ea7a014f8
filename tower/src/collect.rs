//! Reading a whole body under a size limit and the timeouts, without a copy when it comes
//! in one chunk (the usual case for a JSON-RPC message).

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body::Body;
use tokio::time::Instant;

/// Why a body could not be read whole.
#[derive(Debug)]
pub(crate) enum CollectError {
    /// Over the limit (announced by its size hint, or counted).
    TooLarge,
    /// A gap between chunks was longer than the idle timeout, or the deadline passed.
    Timeout,
    /// The body itself failed.
    Body,
}

/// `fut`, cut short at the deadline.
pub(crate) async fn before<F: Future>(deadline: Option<Instant>, fut: F) -> Result<F::Output, ()> {
    match deadline {
        Some(at) => tokio::time::timeout_at(at, fut).await.map_err(|_| ()),
        None => Ok(fut.await),
    }
}

/// The body's data, whole. Trailers are ignored.
pub(crate) async fn collect<B>(
    body: B,
    max: usize,
    idle: Option<Duration>,
    deadline: Option<Instant>,
) -> Result<Bytes, CollectError>
where
    B: Body<Data = Bytes>,
{
    if usize::try_from(body.size_hint().lower()).map_or(true, |lower| lower > max) {
        return Err(CollectError::TooLarge);
    }
    let mut body = pin!(body);
    let mut first: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    let mut len = 0usize;
    loop {
        let next = poll_fn(|cx| body.as_mut().poll_frame(cx));
        // A timeout too long to represent is no timeout.
        let idle_at = idle.and_then(|idle| Instant::now().checked_add(idle));
        let when = match (idle_at, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let frame = before(when, next).await.map_err(|()| CollectError::Timeout)?;
        let data = match frame {
            None => break,
            Some(Err(_)) => return Err(CollectError::Body),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
        };
        len = len.saturating_add(data.len());
        if len > max {
            return Err(CollectError::TooLarge);
        }
        if let Some(joined) = joined.as_mut() {
            joined.extend_from_slice(&data);
        } else if let Some(head) = first.take() {
            let mut buf = BytesMut::with_capacity(len);
            buf.extend_from_slice(&head);
            buf.extend_from_slice(&data);
            joined = Some(buf);
        } else {
            first = Some(data);
        }
    }
    Ok(match joined {
        Some(joined) => joined.freeze(),
        None => first.unwrap_or_default(),
    })
}
