//! `rpcscan-sql` is DataFusion's shell (datafusion-cli) with rpcscan's functions and
//! `STORED AS LINES`: `-c` and positional SQL, `-f FILE`, piped standard input, the output
//! formats, `;` inside quotes, and errors (non-zero exit, the message on standard error).
//! Every count is checked against the same query run through the library in-process.

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
