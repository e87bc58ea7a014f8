//! # rpcscan-ballista
//!
//! rpcscan on an Apache Ballista cluster: the function registry (DataFusion's built-ins plus
//! [`rpcscan_datafusion`]'s functions), the plan codecs that ship `lines` tables and scans to
//! the scheduler and executors, and the session set-up the `rpcscan-scheduler`,
//! `rpcscan-executor` and `rpcscan-sql` binaries share.
//!
//! Every process of a cluster must know the same functions and the same plan nodes:
//!
//! | process | what it needs | here |
//! |---|---|---|
//! | client (`rpcscan-sql --scheduler`) | functions and `STORED AS LINES` for planning; the logical codec to send the plan | [`remote_context`] |
//! | scheduler | the functions to decode the plan; both codecs | [`scheduler_session_state`], [`LinesLogicalCodec`], [`LinesPhysicalCodec`] |
//! | executor | the functions and the physical codec to decode its tasks | [`function_registry`], [`LinesPhysicalCodec`] |
#![deny(missing_docs)]

mod codec;

use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::registry::BallistaFunctionRegistry;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::SessionState;
use datafusion::prelude::{SessionConfig, SessionContext};

pub use codec::{LinesLogicalCodec, LinesPhysicalCodec};

/// Ballista's function registry (DataFusion's built-in functions) plus rpcscan's.
pub fn function_registry() -> BallistaFunctionRegistry {
    let mut registry = BallistaFunctionRegistry::default();
    for udf in rpcscan_datafusion::all_functions() {
        registry.scalar_functions.insert(udf.name().to_string(), udf);
    }
    registry
}

/// The scheduler's session state: Ballista's default one, plus rpcscan's functions and
/// the `lines` format (plugs into `SchedulerConfig::override_session_builder`).
pub fn scheduler_session_state(config: SessionConfig) -> Result<SessionState> {
    let mut state = ballista_core::utils::default_session_builder(config)?;
    rpcscan_datafusion::register_all(&mut state)?;
    rpcscan_datafusion::lines::register_format(&mut state)?;
    Ok(state)
}

/// A client session config that ships `lines` tables with [`LinesLogicalCodec`].
pub fn client_config() -> SessionConfig {
    SessionConfig::new_with_ballista()
        .with_ballista_logical_extension_codec(Arc::new(LinesLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(LinesPhysicalCodec::default()))
}

/// A session whose queries run on the Ballista scheduler at `scheduler`
/// (`HOST:PORT` or `df://HOST:PORT`), with rpcscan's functions and `STORED AS LINES`.
pub async fn remote_context(scheduler: &str) -> Result<SessionContext> {
    remote_context_with_max_message_size(scheduler, rpcscan_datafusion::DEFAULT_MAX_MESSAGE_SIZE)
        .await
}

/// [`remote_context`] whose functions call messages longer than `max_message_size` bytes
/// `too_large` (the limit travels with the plan, so every executor applies it).
pub async fn remote_context_with_max_message_size(
    scheduler: &str,
    max_message_size: usize,
) -> Result<SessionContext> {
    remote_context_with_config(scheduler, client_config(), max_message_size).await
}

/// [`remote_context_with_max_message_size`] with a session config of the caller's: one made
/// from [`client_config`] (it carries the codecs that ship `lines` tables), with other
/// options changed.
pub async fn remote_context_with_config(
    scheduler: &str,
    config: SessionConfig,
    max_message_size: usize,
) -> Result<SessionContext> {
    let url = if scheduler.starts_with("df://") {
        scheduler.to_string()
    } else {
        format!("df://{scheduler}")
    };
    let state = SessionStateBuilder::new().with_default_features().with_config(config).build();
    let ctx = SessionContext::remote_with_state(&url, state).await?;
    // Registered after the upgrade: Ballista's upgrade replaces the scalar function list.
    rpcscan_datafusion::register_with_max_message_size(&ctx, max_message_size)?;
    Ok(ctx)
}

/// An embedded (single-process) DataFusion session with rpcscan's functions and
/// `STORED AS LINES`.
pub fn local_context() -> Result<SessionContext> {
    local_context_with_max_message_size(rpcscan_datafusion::DEFAULT_MAX_MESSAGE_SIZE)
}

/// [`local_context`] whose functions call messages longer than `max_message_size` bytes
/// `too_large`.
pub fn local_context_with_max_message_size(max_message_size: usize) -> Result<SessionContext> {
    let ctx = SessionContext::new();
    rpcscan_datafusion::register_with_max_message_size(&ctx, max_message_size)?;
    Ok(ctx)
}
