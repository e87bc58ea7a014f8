//! `rpcscan-executor`: Ballista's executor (same flags as `ballista-executor`) with rpcscan's
//! functions in its registry and the codecs that decode `lines` scans.

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_core::error::BallistaError;
use ballista_executor::config::Config;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_executor::health::spawn_health_server;
use clap::Parser;
use rpcscan_ballista::{LinesLogicalCodec, LinesPhysicalCodec};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ballista_core::error::Result<()> {
    let opt = Config::parse();
    let health_addr: SocketAddr = format!("{}:{}", opt.bind_host, opt.bind_health_port)
        .parse()
        .map_err(|e| BallistaError::General(format!("invalid --bind-health-port address: {e}")))?;

    let mut config: ExecutorProcessConfig = opt.try_into()?;
    config.override_function_registry = Some(Arc::new(rpcscan_ballista::function_registry()));
    config.override_logical_codec = Some(Arc::new(LinesLogicalCodec::default()));
    config.override_physical_codec = Some(Arc::new(LinesPhysicalCodec::default()));

    let filter = std::env::var(EnvFilter::DEFAULT_ENV)
        .unwrap_or_else(|_| config.special_mod_log_level.clone());
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stdout)
        .init();

    let (health_stop, health_stopped) = tokio::sync::oneshot::channel();
    let health = spawn_health_server(health_addr, config.health.clone(), health_stopped);
    let result = start_executor_process(Arc::new(config)).await;
    let _ = health_stop.send(());
    if let Err(e) = health.await {
        log::warn!("health server task join error: {e}");
    }
    result
}
