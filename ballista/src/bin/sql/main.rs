//! `rpcscan-sql`: DataFusion's own shell (the `datafusion-cli` crate: its interactive
//! prompt, `-c`, `-f`, output formats and `\` commands) with rpcscan's functions and
//! `STORED AS LINES`, on an embedded session or on a Ballista cluster (`--scheduler`).
//!
//! ```text
//! rpcscan-sql --table logs=traffic/ -c "SELECT rpc_kind(line), count(*) FROM logs GROUP BY 1"
//! rpcscan-sql "SELECT count(*) FROM logs" --table logs=traffic/ --format csv
//! rpcscan-sql --table logs=traffic/ -f report.sql --format csv -q
//! rpcscan-sql --scheduler 127.0.0.1:50050 --table logs=/shared/logs/   # interactive
//! ```

mod script;
mod shell;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches, Parser};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::ExplainFormat;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_cli::catalog::DynamicObjectStoreCatalog;
use datafusion_cli::object_storage::instrumented::InstrumentedObjectStoreRegistry;
use datafusion_cli::print_format::PrintFormat;
use datafusion_cli::print_options::{MaxRows, PrintOptions};
use datafusion_cli::DATAFUSION_CLI_VERSION;
use rpcscan_datafusion::lines::FileCompressionType;
use rpcscan_datafusion::{LinesOptions, LinesTable};
use shell::{OnError, Shell};

/// DataFusion's SQL shell (datafusion-cli) over JSON-RPC 2.0 / MCP logs: rpcscan's functions
/// (rpc_kind, rpc_method, rpc_id, rpc_error_code, rpc_tool_name, rpc_invalid_reason,
/// rpc_scan) and `lines` tables (`--table`, or CREATE EXTERNAL TABLE ... STORED AS LINES),
/// run in this process or on a Ballista cluster (`--scheduler`).
///
/// SQL and options come in any order. With neither SQL nor -f, statements are read from
/// standard input: an interactive prompt on a terminal (`\?` lists the commands, `\q`
/// quits), otherwise a script, run like -f.
///
/// A statement that fails stops -c, -f and piped input with exit code 1 (datafusion-cli
/// goes on with the rest of a -f file and exits 0); --keep-going runs the rest, and the
/// exit code is still 1.
#[derive(Parser, Debug)]
#[command(name = "rpcscan-sql", version, verbatim_doc_comment)]
struct Args {
    /// SQL to run, then exit (the same as -c). SQL that starts with a `--` comment is taken
    /// as SQL too.
    #[arg(value_name = "SQL", value_parser = parse_command)]
    sql: Vec<String>,
    /// Execute the given command string(s), then exit.
    #[arg(short = 'c', long, num_args = 0.., value_parser = parse_command)]
    command: Vec<String>,
    /// Execute commands from file(s), then exit.
    #[arg(short = 'f', long, num_args = 0.., value_parser = parse_valid_file)]
    file: Vec<String>,
    /// Run the provided files on startup instead of ~/.datafusionrc (interactive only).
    #[arg(short = 'r', long, num_args = 0.., value_parser = parse_valid_file, conflicts_with = "file")]
    rc: Option<Vec<String>>,
    /// How results are printed.
    #[arg(long, value_enum, default_value_t = PrintFormat::Automatic)]
    format: PrintFormat,
    /// Print only the results (no banner, row counts or timings).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// The most rows the table format prints (a number, or `inf`).
    #[arg(long, default_value = "40")]
    maxrows: MaxRows,
    /// Highlight SQL at the interactive prompt.
    #[arg(long)]
    color: bool,
    /// The batch size of each query (DataFusion's default otherwise).
    #[arg(short = 'b', long, value_parser = parse_batch_size)]
    batch_size: Option<usize>,
    /// After a statement of -c, -f or piped input fails, run the next ones (the exit code
    /// is 1 all the same).
    #[arg(long)]
    keep_going: bool,
    /// A `lines` table: NAME=PATH[,PATH...] (files, directories or globs; one that matches
    /// no file is an error).
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Give every --table the metadata columns _file, _line and _offset
    /// (`format.metadata_columns`: each file is then read whole, by one task).
    #[arg(long)]
    metadata_columns: bool,
    /// Read every --table file as compressed with gzip, zstd, bzip2 or xz, whatever its name
    /// (`format.compression`; by default `.gz`, `.zst`, `.bz2` and `.xz` files are
    /// decompressed, others read as they are).
    #[arg(long, value_name = "TYPE", value_parser = parse_compression)]
    compression: Option<FileCompressionType>,
    /// Run on the Ballista scheduler at HOST:PORT instead of in this process.
    #[arg(long, value_name = "HOST:PORT")]
    scheduler: Option<String>,
    /// Longest message; longer ones are invalid (too_large), as in `rpcscan`.
    /// K, M, G (or KiB, MiB, GiB) are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_size: usize,
}

fn parse_command(command: &str) -> Result<String, String> {
    if command.is_empty() {
        Err("a command must not be empty".to_string())
    } else {
        Ok(command.to_string())
    }
}

fn parse_compression(name: &str) -> Result<FileCompressionType, String> {
    name.parse::<FileCompressionType>()
        .map_err(|_| format!("'{name}' is not gzip, zstd, bzip2, xz or uncompressed"))
}

fn parse_valid_file(path: &str) -> Result<String, String> {
    if Path::new(path).is_file() {
        Ok(path.to_string())
    } else {
        Err(format!("Invalid file '{path}'"))
    }
}

fn parse_batch_size(size: &str) -> Result<usize, String> {
    match size.parse::<usize>() {
        Ok(size) if size > 0 => Ok(size),
        _ => Err(format!("Invalid batch size '{size}'")),
    }
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

/// An argument that starts with a `--` SQL comment is SQL, not an option: without this,
/// clap would read `rpcscan-sql "-- report\nSELECT 1"` as an unknown option.
fn sql_comment_as_command(arg: std::ffi::OsString) -> std::ffi::OsString {
    let is_comment = arg.to_str().is_some_and(|a| {
        a.strip_prefix("--").and_then(|rest| rest.chars().next()).is_some_and(char::is_whitespace)
    });
    if is_comment {
        let mut command = std::ffi::OsString::from("--command=");
        command.push(arg);
        command
    } else {
        arg
    }
}

/// The parsed arguments (program name first) and the SQL of the positional arguments and
/// -c together, in command-line order.
fn parse_args(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<(Args, Vec<String>), clap::Error> {
    let matches =
        Args::command().try_get_matches_from(argv.into_iter().map(sql_comment_as_command))?;
    let mut args = Args::from_arg_matches(&matches)?;
    // The values of each come in their own order, as their indices do.
    let positional = std::mem::take(&mut args.sql);
    let command = std::mem::take(&mut args.command);
    let mut sql: Vec<(usize, String)> = Vec::new();
    for (id, values) in [("sql", positional), ("command", command)] {
        sql.extend(matches.indices_of(id).into_iter().flatten().zip(values));
    }
    sql.sort_by_key(|(index, _)| *index);
    Ok((args, sql.into_iter().map(|(_, text)| text).collect()))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (args, sql) = parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    match run(args, sql).await {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE, // each error is already printed
        Err(e) => {
            // datafusion-cli prints this on standard output; standard error keeps a
            // `--format csv` result clean when a script redirects it.
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// datafusion-cli's session settings: `DATAFUSION_*` variables (embedded sessions), the
/// tree `EXPLAIN`, `NULL` printed as `NULL`, and the information schema (`SHOW TABLES`).
fn shell_config(mut config: SessionConfig, args: &Args) -> SessionConfig {
    if let Some(batch_size) = args.batch_size {
        config = config.with_batch_size(batch_size); // > 0: parse_batch_size
    }
    let options = config.options_mut();
    if std::env::var_os("DATAFUSION_EXPLAIN_FORMAT").is_none() {
        options.explain.format = ExplainFormat::Tree;
    }
    if std::env::var_os("DATAFUSION_FORMAT_NULL").is_none() {
        options.format.null = String::from("NULL");
    }
    config.with_information_schema(true)
}

/// Runs the session; returns how many statements failed (their errors printed).
async fn run(args: Args, commands: Vec<String>) -> Result<usize> {
    let registry = Arc::new(InstrumentedObjectStoreRegistry::new());
    let ctx = match &args.scheduler {
        Some(scheduler) => {
            // Ballista's client config (its codecs and defaults); DATAFUSION_* variables are
            // not read here: they would replace Ballista's defaults. `SET` works instead.
            let config = shell_config(rpcscan_ballista::client_config(), &args);
            rpcscan_ballista::remote_context_with_config(scheduler, config, args.max_message_size)
                .await?
        }
        None => {
            let config = shell_config(SessionConfig::from_env()?, &args);
            let runtime = RuntimeEnvBuilder::new()
                .with_object_store_registry(registry.clone())
                .build_arc()?;
            // As in datafusion-cli: `SELECT * FROM 'file.csv'`, and object stores registered
            // for the locations a query names.
            let ctx = SessionContext::new_with_config_rt(config, runtime).enable_url_table();
            ctx.register_catalog_list(Arc::new(DynamicObjectStoreCatalog::new(
                ctx.state().catalog_list().clone(),
                ctx.state_weak_ref(),
            )));
            rpcscan_datafusion::register_with_max_message_size(&ctx, args.max_message_size)?;
            ctx
        }
    };
    let table_options = LinesOptions::default()
        .with_metadata_columns(args.metadata_columns)
        .with_compression(args.compression);
    for table in &args.tables {
        let Some((name, paths)) = table.split_once('=') else {
            return Err(DataFusionError::Plan(format!("--table wants NAME=PATH, got '{table}'")));
        };
        // Relative paths become absolute URLs here: executors do not share our directory.
        let table = LinesTable::try_new_with_options(paths.split(','), table_options.clone())?;
        table.check_object_stores(&ctx.runtime_env())?;
        ctx.register_table(name, Arc::new(table))?;
    }

    let mut print_options = PrintOptions {
        format: args.format,
        quiet: args.quiet,
        maxrows: args.maxrows,
        color: args.color,
        instrumented_registry: registry,
    };
    let shell = Shell::new(ctx);
    let on_error = if args.keep_going { OnError::KeepGoing } else { OnError::Stop };
    if commands.is_empty() && args.file.is_empty() {
        if !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            println!("rpcscan-sql (DataFusion CLI v{DATAFUSION_CLI_VERSION})");
        }
        let rc = match args.rc {
            Some(files) => files,
            None => std::env::var_os("HOME")
                .map(|home| Path::new(&home).join(".datafusionrc"))
                .filter(|rc| rc.is_file())
                .map(|rc| rc.to_string_lossy().into_owned())
                .into_iter()
                .collect(),
        };
        // As in datafusion-cli, a start-up file's errors are printed and the session goes on.
        for file in rc {
            shell.file(&file, &print_options, OnError::KeepGoing).await?;
        }
        return shell.interactive(&mut print_options, on_error).await;
    }
    let mut failed = 0;
    for file in &args.file {
        failed += shell.file(file, &print_options, on_error).await?;
        if failed > 0 && on_error == OnError::Stop {
            return Ok(failed);
        }
    }
    for command in &commands {
        failed += shell.script(command, None, &print_options, on_error).await?;
        if failed > 0 && on_error == OnError::Stop {
            return Ok(failed);
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql_of(argv: &[&str]) -> Vec<String> {
        let argv = std::iter::once("rpcscan-sql").chain(argv.iter().copied());
        parse_args(argv.map(std::ffi::OsString::from)).unwrap().1
    }

    #[test]
    fn sql_arguments_and_options_in_any_order() {
        assert_eq!(sql_of(&["SELECT 1", "--format", "csv", "-q"]), ["SELECT 1"]);
        assert_eq!(
            sql_of(&["SELECT 1", "-c", "SELECT 2", "SELECT 3", "--table", "t=x", "SELECT 4"]),
            ["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4"]
        );
        assert_eq!(sql_of(&["-c", "-- why\nSELECT 1", "-q"]), ["-- why\nSELECT 1"]);
        assert_eq!(
            sql_of(&["-- why\nSELECT 1", "--", "--format"]),
            ["-- why\nSELECT 1", "--format"]
        );
        let argv = ["rpcscan-sql", "SELECT 1", "--format", "csv", "--metadata-columns"];
        let (args, _) = parse_args(argv.map(std::ffi::OsString::from)).unwrap();
        assert_eq!(args.format, PrintFormat::Csv);
        assert!(args.metadata_columns);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("1T").is_err());
    }
}
