//! `rpcscan-sql`: a SQL shell over JSON-RPC / MCP logs with rpcscan's functions, on an
//! embedded DataFusion session or on a Ballista cluster.
//!
//! ```text
//! rpcscan-sql --table logs=traffic/ "SELECT rpc_kind(line), count(*) FROM logs GROUP BY 1"
//! rpcscan-sql --table logs=traffic/ -f report.sql --format csv
//! rpcscan-sql --scheduler 127.0.0.1:50050 --table logs=/shared/logs/   # interactive
//! ```
//!
//! Statements are split on `;` outside quotes and comments, and run in order: SQL given on
//! the command line first, then each `-f FILE`; with neither, standard input (a prompt when
//! it is a terminal).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use rpcscan_datafusion::LinesTable;

/// A SQL shell over JSON-RPC 2.0 / MCP logs: DataFusion SQL plus rpcscan's functions
/// (rpc_kind, rpc_method, rpc_id, rpc_error_code, rpc_tool_name, rpc_invalid_reason,
/// rpc_scan) and `lines` tables (`--table`, or CREATE EXTERNAL TABLE ... STORED AS LINES),
/// run in this process or on a Ballista cluster (`--scheduler`).
///
/// SQL on the command line runs first, then each -f FILE; with neither, statements are read
/// from standard input (with a prompt on a terminal; `\q` quits). Statements are separated by
/// `;` outside quotes and comments.
#[derive(Parser, Debug)]
#[command(name = "rpcscan-sql", version, verbatim_doc_comment)]
struct Args {
    /// SQL to run (several statements separated by `;`).
    #[arg(value_name = "SQL", allow_hyphen_values = true)]
    sql: Vec<String>,
    /// Run the SQL statements in FILE (may be repeated).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// A `lines` table: NAME=PATH[,PATH...] (files, directories or globs).
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Run on the Ballista scheduler at HOST:PORT instead of in this process.
    #[arg(long, value_name = "HOST:PORT")]
    scheduler: Option<String>,
    /// How results are printed.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Longest message; longer ones are invalid (too_large), as in `rpcscan`.
    /// K, M, G (or KiB, MiB, GiB) are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_size: usize,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Boxed tables.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON object per row (NDJSON).
    Json,
}

/// `--max-message-size`: a byte count with an optional binary suffix (`16MiB`, `512K`).
fn parse_size(text: &str) -> Result<usize, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("unknown size unit '{unit}' (use K, M or G)")),
    };
    let n: usize = digits.parse().map_err(|_| format!("'{text}' is not a size (e.g. 16MiB)"))?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("'{text}' is too large"))
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

async fn run(args: Args) -> Result<()> {
    let ctx: SessionContext = match &args.scheduler {
        Some(scheduler) => {
            rpcscan_ballista::remote_context_with_max_message_size(scheduler, args.max_message_size)
                .await?
        }
        None => rpcscan_ballista::local_context_with_max_message_size(args.max_message_size)?,
    };
    for table in &args.tables {
        let Some((name, paths)) = table.split_once('=') else {
            return Err(DataFusionError::Plan(format!("--table wants NAME=PATH, got '{table}'")));
        };
        // Relative paths become absolute URLs here: executors do not share our directory.
        let table = LinesTable::try_new(paths.split(','))?;
        table.check_object_stores(&ctx.runtime_env())?;
        ctx.register_table(name, Arc::new(table))?;
    }
    if args.sql.is_empty() && args.files.is_empty() {
        return stdin(&ctx, args.format).await;
    }
    for sql in &args.sql {
        run_script(&ctx, sql, args.format).await?;
    }
    for file in &args.files {
        let sql = std::fs::read_to_string(file).map_err(|e| {
            DataFusionError::Execution(format!("cannot read {}: {e}", file.display()))
        })?;
        run_script(&ctx, &sql, args.format).await?;
    }
    Ok(())
}

async fn run_script(ctx: &SessionContext, sql: &str, format: Format) -> Result<()> {
    for statement in split_statements(sql) {
        execute(ctx, &statement, format).await?;
    }
    Ok(())
}

/// Runs one statement and prints its result; statements without columns (DDL) print nothing.
async fn execute(ctx: &SessionContext, statement: &str, format: Format) -> Result<()> {
    let batches = ctx.sql(statement).await?.collect().await?;
    if batches.iter().all(|b| b.num_columns() == 0) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    print_batches(&mut out, &batches, format)?;
    out.flush()?;
    Ok(())
}

fn print_batches(out: &mut dyn Write, batches: &[RecordBatch], format: Format) -> Result<()> {
    match format {
        Format::Table => writeln!(out, "{}", pretty_format_batches(batches)?)?,
        Format::Csv => {
            let mut writer = arrow_csv::WriterBuilder::new().with_header(true).build(out);
            for batch in batches {
                writer.write(batch)?;
            }
        }
        Format::Json => {
            let mut writer = arrow_json::LineDelimitedWriter::new(out);
            writer.write_batches(&batches.iter().collect::<Vec<_>>())?;
            writer.finish()?;
        }
    }
    Ok(())
}

/// Reads statements from standard input: with a prompt on a terminal (errors are printed and
/// the session goes on), or as a script (the first error stops it).
async fn stdin(ctx: &SessionContext, format: Format) -> Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let mut pending = String::new();
    let mut lines = std::io::stdin().lock().lines();
    loop {
        if interactive {
            eprint!("{}", if pending.is_empty() { "rpcscan> " } else { "     ..> " });
        }
        let Some(line) = lines.next() else { break };
        let line = line?;
        if pending.trim().is_empty() && matches!(line.trim(), "\\q" | "quit" | "exit") {
            break;
        }
        pending.push_str(&line);
        pending.push('\n');
        let (complete, rest) = take_complete(&pending);
        for statement in complete {
            match execute(ctx, &statement, format).await {
                Ok(()) => {}
                Err(e) if interactive => eprintln!("error: {e}"),
                Err(e) => return Err(e),
            }
        }
        pending = rest;
    }
    // A last statement without `;` at end of input still runs.
    for statement in split_statements(&pending) {
        execute(ctx, &statement, format).await?;
    }
    Ok(())
}

/// The statements of `sql` ended by a `;` outside quotes and comments, and the text after
/// the last one.
fn take_complete(sql: &str) -> (Vec<String>, String) {
    let ends = statement_ends(sql);
    let Some(&last) = ends.last() else {
        return (Vec::new(), sql.to_string());
    };
    let complete = split_statements(&sql[..last]);
    (complete, sql[last..].to_string())
}

/// Splits `sql` into statements on `;` outside `'strings'`, `"identifiers"`, `-- comments`
/// and `/* comments */`; statements that are only blanks and comments are dropped.
fn split_statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut ends = statement_ends(sql);
    ends.push(sql.len());
    for end in ends {
        let text = sql[start..end].trim_end_matches(';');
        if has_code(text) {
            out.push(text.trim().to_string());
        }
        start = end;
    }
    out
}

/// Byte offsets just after each statement-ending `;`.
fn statement_ends(sql: &str) -> Vec<usize> {
    let bytes = sql.as_bytes();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"') => {
                // A doubled quote inside is an escaped quote: the loop sees two strings.
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b';' => {
                i += 1;
                ends.push(i);
            }
            _ => i += 1,
        }
    }
    ends
}

/// Whether `text` holds anything but blanks and comments.
fn has_code(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            _ => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_outside_quotes_and_comments() {
        let cases: &[(&str, &[&str])] = &[
            ("SELECT 1; SELECT 2", &["SELECT 1", "SELECT 2"]),
            ("SELECT 'a;b' AS x;", &["SELECT 'a;b' AS x"]),
            ("SELECT 'it''s;' ; SELECT \"a;b\"", &["SELECT 'it''s;'", "SELECT \"a;b\""]),
            (
                "-- note; here\nSELECT 1; /* c; */ SELECT 2;",
                &["-- note; here\nSELECT 1", "/* c; */ SELECT 2"],
            ),
            ("-- only a comment;\n ; ;", &[]),
            ("SELECT 1 -- trailing", &["SELECT 1 -- trailing"]),
        ];
        for (sql, want) in cases {
            assert_eq!(split_statements(sql), *want, "{sql}");
        }
    }

    #[test]
    fn a_statement_is_complete_at_its_semicolon() {
        let (done, rest) = take_complete("SELECT 1;\nSELECT 'a;");
        assert_eq!(done, ["SELECT 1"]);
        assert_eq!(rest, "\nSELECT 'a;");
        let (done, rest) = take_complete("SELECT\n");
        assert!(done.is_empty());
        assert_eq!(rest, "SELECT\n");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("1T").is_err());
    }
}
