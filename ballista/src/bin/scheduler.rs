//! `rpcscan-scheduler`: Ballista's scheduler (same flags as `ballista-scheduler`) whose
//! sessions know rpcscan's functions and whose codecs ship `lines` tables and scans.

use std::sync::Arc;

use ballista_core::error::BallistaError;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{Config, SchedulerConfig};
use ballista_scheduler::scheduler_process::start_server;
use clap::Parser;
use rpcscan_ballista::{LinesLogicalCodec, LinesPhysicalCodec};
use tracing_subscriber::EnvFilter;

fn main() -> ballista_core::error::Result<()> {
    // Ballista's scheduler binary runs with a large stack (deep plans); so do we.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .enable_time()
        .thread_stack_size(32 * 1024 * 1024)
        .build()?;
    runtime.block_on(run())
}

async fn run() -> ballista_core::error::Result<()> {
    let opt = Config::parse();
    let filter =
        std::env::var(EnvFilter::DEFAULT_ENV).unwrap_or_else(|_| opt.log_level_setting.clone());
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stdout)
        .init();

    let addr = format!("{}:{}", opt.bind_host, opt.bind_port)
        .parse()
        .map_err(|e: std::net::AddrParseError| BallistaError::Configuration(e.to_string()))?;
    let mut config: SchedulerConfig = opt.try_into()?;
    config =
        config.with_override_session_builder(Arc::new(rpcscan_ballista::scheduler_session_state));
    config.override_logical_codec = Some(Arc::new(LinesLogicalCodec::default()));
    config.override_physical_codec = Some(Arc::new(LinesPhysicalCodec::default()));

    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(cluster, addr, Arc::new(config)).await
}
