//! Embedded throughput of `SELECT rpc_kind(line), count(*) FROM logs GROUP BY 1` over one
//! NDJSON file, next to the cost of reading its lines alone (`SELECT count(*)`).
//!
//! ```text
//! cargo run --release --example throughput -- FILE [RUNS]
//! ```

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use rpcscan_datafusion::LinesTable;

#[tokio::main]
async fn main() -> datafusion::error::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: throughput FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let bytes = std::fs::metadata(path)?.len() as f64;

    let ctx = SessionContext::new();
    rpcscan_datafusion::register(&ctx)?;
    ctx.register_table("logs", Arc::new(LinesTable::try_new([path.as_str()])?))?;
    println!(
        "file: {path} ({:.1} MB), {} partitions",
        bytes / 1e6,
        ctx.state().config().target_partitions()
    );

    for (label, sql) in [
        ("lines only", "SELECT count(*) AS n FROM logs"),
        (
            "rpc_kind group by",
            "SELECT rpc_kind(line) AS kind, count(*) AS n FROM logs GROUP BY 1",
        ),
    ] {
        let mut best = f64::MAX;
        let mut rows = 0i64;
        for _ in 0..runs {
            let start = Instant::now();
            let batches = ctx.sql(sql).await?.collect().await?;
            best = best.min(start.elapsed().as_secs_f64());
            rows = batches
                .iter()
                .map(|b| {
                    b.column(b.num_columns() - 1)
                        .as_primitive::<Int64Type>()
                        .iter()
                        .flatten()
                        .sum::<i64>()
                })
                .sum();
        }
        println!(
            "{label:>18}: {rows} rows, best of {runs}: {best:.3} s = {:.2} M rows/s, {:.3} GB/s",
            rows as f64 / best / 1e6,
            bytes / best / 1e9
        );
    }
    Ok(())
}
