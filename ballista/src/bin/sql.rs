//! `rpcscan-sql`: run SQL over JSON-RPC / MCP logs with rpcscan's functions, on an embedded
//! DataFusion session or on a Ballista cluster.
//!
//! ```text
//! rpcscan-sql "SELECT rpc_kind(line), count(*) FROM logs GROUP BY 1" --table logs=traffic/
//! rpcscan-sql --scheduler 127.0.0.1:50050 "SELECT ..." --table logs=/shared/logs/
//! ```
//!
//! Each `--table NAME=PATH` registers a `lines` table (a file, a directory or a glob);
//! `PATH` may be repeated with commas. Several statements may be separated with `;`;
//! the result of each is printed as a table.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use rpcscan_datafusion::LinesTable;

/// Run SQL with rpcscan's functions over `lines` tables.
#[derive(Parser, Debug)]
#[command(name = "rpcscan-sql", version, about)]
struct Args {
    /// The SQL to run (`;` separates statements).
    sql: String,
    /// A `lines` table: NAME=PATH[,PATH...] (files, directories or globs).
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Run on the Ballista scheduler at HOST:PORT instead of in this process.
    #[arg(long, value_name = "HOST:PORT")]
    scheduler: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rpcscan-sql: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> datafusion::error::Result<()> {
    let ctx: SessionContext = match &args.scheduler {
        Some(scheduler) => rpcscan_ballista::remote_context(scheduler).await?,
        None => rpcscan_ballista::local_context()?,
    };
    for table in &args.tables {
        let Some((name, paths)) = table.split_once('=') else {
            return Err(datafusion::error::DataFusionError::Plan(format!(
                "--table wants NAME=PATH, got '{table}'"
            )));
        };
        // Relative paths become absolute URLs here: executors do not share our directory.
        ctx.register_table(name, Arc::new(LinesTable::try_new(paths.split(','))?))?;
    }
    for statement in args.sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let batches = ctx.sql(statement).await?.collect().await?;
        println!("{}", pretty_format_batches(&batches)?);
    }
    Ok(())
}
