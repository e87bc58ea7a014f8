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
    /// Longest message; longer ones are invalid (too_large), as in `rpcscan`.
    /// K, M, G (or KiB, MiB, GiB) are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_size: usize,
}

/// `--max-message-size`: a byte count with an optional binary suffix (`16MiB`, `512K`).
fn parse_size(text: &str) -> Result<usize, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("unknown size unit '{unit}' (use K, M or G)")),
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("'{text}' is not a size (e.g. 16MiB)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("'{text}' is too large"))
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
        Some(scheduler) => {
            rpcscan_ballista::remote_context_with_max_message_size(scheduler, args.max_message_size)
                .await?
        }
        None => rpcscan_ballista::local_context_with_max_message_size(args.max_message_size)?,
    };
    for table in &args.tables {
        let Some((name, paths)) = table.split_once('=') else {
            return Err(datafusion::error::DataFusionError::Plan(format!(
                "--table wants NAME=PATH, got '{table}'"
            )));
        };
        // Relative paths become absolute URLs here: executors do not share our directory.
        let table = LinesTable::try_new(paths.split(','))?;
        table.check_object_stores(&ctx.runtime_env())?;
        ctx.register_table(name, Arc::new(table))?;
    }
    for statement in args.sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let batches = ctx.sql(statement).await?.collect().await?;
        println!("{}", pretty_format_batches(&batches)?);
    }
    Ok(())
}
