//! `rpcscan-sql` is DataFusion's shell (datafusion-cli) with rpcscan's functions and
//! `STORED AS LINES`: `-c` and positional SQL before or after the options, `-f FILE`, piped
//! standard input, the output formats, `;` inside quotes, `lines` options (in SQL and as
//! switches), and errors (exit code 1, the message on standard error, also for a failed
//! statement of a script). Every count is checked against the same query run through the
//! library in-process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use datafusion::arrow::util::display::array_value_to_string;

const QUERY: &str = "SELECT rpc_kind(line) AS kind, count(*) AS n FROM logs GROUP BY 1 ORDER BY 1";

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mcp-traffic.ndjson")
}

fn shell(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpcscan-sql"))
        .args(args)
        // No ~/.datafusionrc of the user's; the prompt's `.history` is written to the
        // working directory.
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn failed(args: &[&str], stdin: Option<&str>) -> (String, String) {
    let out = shell(args, stdin);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: exit code 1\n{stdout}\n{stderr}");
    (stdout, stderr)
}

fn ok(args: &[&str], stdin: Option<&str>) -> String {
    let out = shell(args, stdin);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {}\n{stdout}\n{stderr}", out.status);
    assert!(stderr.is_empty(), "{args:?}: nothing on standard error: {stderr}");
    stdout
}

/// (kind, count) rows of [`QUERY`] computed in-process, as CSV lines with a header.
async fn expected_csv() -> String {
    let ctx = rpcscan_ballista::local_context().unwrap();
    let table = rpcscan_datafusion::LinesTable::try_new([sample().to_str().unwrap()]).unwrap();
    ctx.register_table("logs", std::sync::Arc::new(table)).unwrap();
    let batches = ctx.sql(QUERY).await.unwrap().collect().await.unwrap();
    let mut csv = String::from("kind,n\n");
    for batch in &batches {
        for row in 0..batch.num_rows() {
            let kind = array_value_to_string(batch.column(0), row).unwrap();
            let n = array_value_to_string(batch.column(1), row).unwrap();
            csv.push_str(&format!("{kind},{n}\n"));
        }
    }
    assert_eq!(csv.lines().count(), 6, "five kinds in the sample: {csv}");
    csv
}

#[tokio::test]
async fn command_and_positional_sql_print_the_library_answer_as_csv() {
    let want = expected_csv().await;
    let table = format!("logs={}", sample().display());
    let by_c = ok(&["-q", "--format", "csv", "--table", &table, "-c", QUERY], None);
    assert_eq!(by_c, want);
    let positional = ok(&["-q", "--format", "csv", "--table", &table, QUERY], None);
    assert_eq!(positional, want);
}

#[tokio::test]
async fn a_file_with_ddl_comments_and_quoted_semicolons() {
    let want = expected_csv().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("report.sql");
    std::fs::write(
        &script,
        format!(
            "-- a report; over the sample\n\
             CREATE EXTERNAL TABLE logs STORED AS LINES\n  LOCATION '{}';\n\
             SELECT 'a;b' AS x;\n\
             {QUERY};\n",
            sample().display()
        ),
    )
    .unwrap();
    let out = ok(&["-q", "--format", "csv", "-f", script.to_str().unwrap()], None);
    assert_eq!(out, format!("x\na;b\n{want}"));
}

#[tokio::test]
async fn quoted_semicolons_on_the_command_line_and_on_standard_input() {
    let out = ok(&["-q", "--format", "csv", "-c", "SELECT 'a;b' AS x; SELECT 'c' AS y"], None);
    assert_eq!(out, "x\na;b\ny\nc\n");
    let piped = ok(&["-q", "--format", "csv"], Some("SELECT 'a;b' AS x;\nSELECT 1 + 1 AS two;\n"));
    assert!(piped.contains("x\na;b\n") && piped.contains("two\n2\n"), "{piped}");
}

#[tokio::test]
async fn output_formats() {
    let want = expected_csv().await;
    let table = format!("logs={}", sample().display());
    let run = |format: &str| ok(&["-q", "--format", format, "--table", &table, "-c", QUERY], None);
    let rows: Vec<(String, String)> = want
        .lines()
        .skip(1)
        .map(|l| {
            let (k, n) = l.split_once(',').unwrap();
            (k.to_string(), n.to_string())
        })
        .collect();

    assert_eq!(run("tsv"), want.replace(',', "\t"));
    let ndjson: String =
        rows.iter().map(|(k, n)| format!("{{\"kind\":\"{k}\",\"n\":{n}}}\n")).collect();
    assert_eq!(run("nd-json"), ndjson);
    let json: Vec<String> =
        rows.iter().map(|(k, n)| format!("{{\"kind\":\"{k}\",\"n\":{n}}}")).collect();
    assert_eq!(run("json").trim_end(), format!("[{}]", json.join(",")));
    let table_out = run("table");
    for (k, n) in &rows {
        assert!(
            table_out
                .lines()
                .any(|l| l.contains(&format!("| {k} ")) && l.contains(&format!("| {n} "))),
            "{k} {n} in\n{table_out}"
        );
    }
    assert!(table_out.starts_with("+-") && table_out.contains("| kind "), "{table_out}");
}

#[tokio::test]
async fn rpc_functions_over_the_sample_and_not_quiet_output() {
    let table = format!("logs={}", sample().display());
    let out = ok(
        &[
            "--table",
            &table,
            "-c",
            "SELECT rpc_invalid_reason(line) AS reason, count(*) AS n FROM logs \
             WHERE rpc_kind(line) = 'invalid' GROUP BY 1 ORDER BY 1",
        ],
        None,
    );
    for reason in ["bad_id", "bad_version", "duplicate_key", "syntax"] {
        assert!(out.contains(&format!("| {reason} ")), "{out}");
    }
    // Without -q: datafusion-cli's row count and timing after the table.
    assert!(out.contains("4 row(s) fetched."), "{out}");
}

#[test]
fn errors_exit_non_zero_with_the_message_on_standard_error() {
    let out = shell(&["-c", "SELECT * FROM no_such_table"], None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no_such_table"), "{stderr}");

    let out = shell(&["--table", "logs=/no/such/dir/x.ndjson", "-c", "SELECT 1"], None);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/dir/x.ndjson"));
}

#[tokio::test]
async fn sql_and_options_in_any_order() {
    let want = expected_csv().await;
    let table = format!("logs={}", sample().display());
    assert_eq!(ok(&["SELECT 1 AS one", "--format", "csv", "-q"], None), "one\n1\n");
    assert_eq!(ok(&["-q", QUERY, "--table", &table, "--format", "csv"], None), want);
    assert_eq!(ok(&[QUERY, "-q", "--format=csv", "--table", &table], None), want);
    // Positional SQL and -c run in command-line order.
    assert_eq!(
        ok(
            &["SELECT 1 AS a", "-q", "-c", "SELECT 2 AS b", "--format", "csv", "SELECT 3 AS c"],
            None
        ),
        "a\n1\nb\n2\nc\n3\n"
    );
    // SQL that starts with a comment is SQL, not an unknown option.
    assert_eq!(ok(&["--format", "csv", "-q", "-- the answer\nSELECT 42 AS n"], None), "n\n42\n");

    // The table is checked before any SQL runs: the error names the path.
    let (stdout, stderr) =
        failed(&["-q", "SELECT count(*) AS n FROM logs", "--table", "logs=/no/such"], None);
    assert!(stdout.is_empty() && stderr.contains("'/no/such'"), "{stderr}");
}

/// A log of `n` numbered requests (`id` = line number), one `invalid` line every 10th line.
fn numbered_log(n: usize) -> String {
    (1..=n)
        .map(|i| match i % 10 {
            0 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":7}}\n"),
            _ => format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"m\"}}\n"),
        })
        .collect()
}

/// `text` compressed with DataFusion's own gzip encoder.
async fn gzip(text: &str) -> Vec<u8> {
    use futures::StreamExt;
    use rpcscan_datafusion::lines::FileCompressionType;
    let input = futures::stream::iter([Ok(bytes::Bytes::copy_from_slice(text.as_bytes()))]);
    let stream = FileCompressionType::GZIP.convert_to_compress_stream(input.boxed()).unwrap();
    let chunks = stream.collect::<Vec<_>>().await;
    chunks.into_iter().flat_map(|c| c.unwrap().to_vec()).collect()
}

#[tokio::test]
async fn lines_options_in_sql_and_as_switches() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("a.log"), numbered_log(30)).unwrap();
    std::fs::create_dir(dir.path().join("packed")).unwrap();
    std::fs::write(dir.path().join("packed/b.log"), gzip(&numbered_log(20)).await).unwrap();
    // The invalid lines of a.log, traced to their file, line and offset.
    let offset = |i: usize| numbered_log(i - 1).len();
    let traced: String =
        [10, 20, 30].iter().map(|&i| format!("{d}/a.log,{i},{},bad_method\n", offset(i))).collect();
    let trace = "SELECT _file, _line, _offset, rpc_invalid_reason(line) AS reason FROM t \
                 WHERE rpc_kind(line) = 'invalid' ORDER BY _line";
    let by_sql = format!(
        "CREATE EXTERNAL TABLE t STORED AS LINES LOCATION '{d}/a.log' \
         OPTIONS ('format.metadata_columns' 'true'); {trace}"
    );
    let want = format!("_file,_line,_offset,reason\n{traced}");
    assert_eq!(ok(&["-q", "--format", "csv", "-c", &by_sql], None), want);
    assert_eq!(ok(&["-q", "--format", "csv"], Some(&by_sql)), want);
    let script = dir.path().join("trace.sql");
    std::fs::write(&script, by_sql.replace("; ", ";\n")).unwrap();
    assert_eq!(ok(&["-q", "--format", "csv", "-f", script.to_str().unwrap()], None), want);
    let table = format!("t={d}/a.log");
    assert_eq!(
        ok(&["-q", "--format", "csv", "--table", &table, "--metadata-columns", trace], None),
        want
    );

    // gzip without `.gz`: by the option, and by the switch.
    let count =
        "SELECT count(*) AS n, count(*) FILTER (WHERE rpc_kind(line) = 'invalid') AS bad FROM p";
    let by_sql = format!(
        "CREATE EXTERNAL TABLE p STORED AS LINES LOCATION '{d}/packed/' \
         OPTIONS ('format.compression' 'gzip'); {count}"
    );
    assert_eq!(ok(&["-q", "--format", "csv", &by_sql], None), "n,bad\n20,2\n");
    let table = format!("p={d}/packed/");
    assert_eq!(
        ok(&["-q", "--format", "csv", "--table", &table, "--compression", "gzip", count], None),
        "n,bad\n20,2\n"
    );
    // Unknown values are errors, as in the library (clap's: exit code 2).
    let out = shell(&["--table", &table, "--compression", "lz4", count], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'lz4'"));
    let bad = format!(
        "CREATE EXTERNAL TABLE x STORED AS LINES LOCATION '{d}/a.log' OPTIONS ('format.nope' '1')"
    );
    let (_, stderr) = failed(&["-c", &bad], None);
    assert!(stderr.contains("unknown option 'format.nope'"), "{stderr}");
}

#[test]
fn a_location_that_matches_no_file_fails_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("a.ndjson"), "{}\n").unwrap();
    let glob = format!("{d}/*.log");
    let (_, stderr) =
        failed(&["--table", &format!("logs={glob}"), "SELECT count(*) FROM logs"], None);
    assert!(stderr.contains(&format!("'{glob}'")), "{stderr}");
    let create = format!("CREATE EXTERNAL TABLE t STORED AS LINES LOCATION '{glob}'");
    let (_, stderr) = failed(&["-c", &create], None);
    assert!(stderr.contains(&format!("'{glob}'")), "{stderr}");
}

#[test]
fn a_failed_statement_fails_a_script_and_keep_going_runs_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("report.sql");
    std::fs::write(
        &script,
        "SELECT 1 AS a;\n-- a typo\nSELECT * FROM no_such_table;\nSELECT 2 AS b;\n",
    )
    .unwrap();
    let file = script.to_str().unwrap();
    let text = std::fs::read_to_string(&script).unwrap();

    // Stops at the failed statement, names the file and the statement's line, exits 1.
    let (stdout, stderr) = failed(&["-q", "--format", "csv", "-f", file], None);
    assert_eq!(stdout, "a\n1\n");
    assert!(
        stderr.contains(&format!("{file}:3: ")) && stderr.contains("no_such_table"),
        "{stderr}"
    );
    let (stdout, stderr) = failed(&["-q", "--format", "csv"], Some(&text));
    assert_eq!(stdout, "a\n1\n");
    assert!(stderr.contains("<stdin>:3: "), "{stderr}");
    let (stdout, _) = failed(&["-q", "--format", "csv", "-c", &text], None);
    assert_eq!(stdout, "a\n1\n");
    // A later -f file or -c does not run either.
    let (stdout, _) = failed(&["-q", "--format", "csv", "-f", file, "-c", "SELECT 3 AS c"], None);
    assert_eq!(stdout, "a\n1\n");

    // --keep-going: every other statement runs, and the exit code still says one failed.
    for input in [["-f", file], ["-c", text.as_str()]] {
        let args = [&["-q", "--format", "csv", "--keep-going"][..], &input[..]].concat();
        let (stdout, stderr) = failed(&args, None);
        assert_eq!(stdout, "a\n1\nb\n2\n");
        assert_eq!(stderr.matches("no_such_table").count(), 1, "{stderr}");
    }
}
