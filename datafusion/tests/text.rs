//! A line that is not UTF-8 cannot be cast to text: with the metadata columns, `CAST(line AS
//! VARCHAR)` (rewritten by `CheckedLineCast`) and `rpc_text(line, _file, _line)` fail with an
//! error naming the file and line; `TRY_CAST` gives NULL; valid lines cast as before.

use datafusion::prelude::SessionContext;

/// A directory with `good.ndjson` (UTF-8) and `bad.log` (line 3 is not UTF-8).
fn logs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.ndjson"), "{\"a\":1}\n{\"b\":\"é\"}\n").unwrap();
    std::fs::write(dir.path().join("bad.log"), b"{\"c\":1}\n\n{\"d\":\"\xff\"}\n{\"e\":2}\n")
        .unwrap();
    dir
}

async fn context(dir: &tempfile::TempDir, metadata: bool) -> SessionContext {
    let ctx = SessionContext::new();
    rpcscan_datafusion::register(&ctx).unwrap();
    let options = if metadata { " OPTIONS ('format.metadata_columns' 'true')" } else { "" };
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE logs STORED AS LINES LOCATION '{}/'{options}",
        dir.path().display()
    ))
    .await
    .unwrap();
    ctx
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<String, String> {
    let batches = ctx
        .sql(sql)
        .await
        .map_err(|e| e.to_string())?
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    Ok(datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string())
}

#[tokio::test]
async fn cast_names_the_file_and_line_with_metadata_columns() {
    let dir = logs();
    let ctx = context(&dir, true).await;
    let bad = format!("line 3 of {}/bad.log is not UTF-8", dir.path().display());
    for sql in [
        "SELECT CAST(line AS VARCHAR) AS text FROM logs",
        "SELECT count(*) FROM logs WHERE CAST(line AS VARCHAR) LIKE '%d%'",
        "SELECT CAST(l.line AS TEXT) FROM (SELECT * FROM logs) AS l",
        "SELECT rpc_text(line, _file, _line) FROM logs",
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert!(err.contains(&bad), "{sql}: {err}");
        assert!(err.contains("byte 6 of the line"), "{sql}: {err}");
        assert!(err.contains("TRY_CAST"), "{sql}: {err}");
    }
}

#[tokio::test]
async fn valid_lines_cast_as_before_and_try_cast_gives_null() {
    // Only UTF-8 lines: the same table (name included) with and without the rule.
    let good = tempfile::tempdir().unwrap();
    std::fs::write(good.path().join("good.ndjson"), "{\"a\":1}\n{\"b\":\"é\"}\n").unwrap();
    let with_rule = context(&good, true).await;
    let without_rule = SessionContext::new();
    {
        let state = without_rule.state_ref();
        let mut state = state.write();
        rpcscan_datafusion::register_all(&mut *state).unwrap();
        rpcscan_datafusion::lines::register_format(&mut state).unwrap();
    }
    without_rule
        .sql(&format!(
            "CREATE EXTERNAL TABLE logs STORED AS LINES LOCATION '{}/' \
             OPTIONS ('format.metadata_columns' 'true')",
            good.path().display()
        ))
        .await
        .unwrap();
    let sql = "SELECT CAST(line AS VARCHAR), _line FROM logs ORDER BY 2";
    let rewritten = run(&with_rule, sql).await.unwrap();
    assert_eq!(rewritten, run(&without_rule, sql).await.unwrap());
    assert!(rewritten.contains(r#"{"b":"é"}"#), "{rewritten}");
    let plan = run(&with_rule, &format!("EXPLAIN {sql}")).await.unwrap();
    assert!(plan.contains("rpc_text"), "the rule rewrote the cast: {plan}");

    let dir = logs();
    let ctx = context(&dir, true).await;
    let nulls = run(
        &ctx,
        "SELECT _line, TRY_CAST(line AS VARCHAR) IS NULL AS not_utf8 FROM logs \
         WHERE _file LIKE '%bad.log' ORDER BY 1",
    )
    .await
    .unwrap();
    assert!(nulls.contains("| 3     | true     |"), "{nulls}");
    assert_eq!(nulls.matches("| true ").count(), 1, "{nulls}");
}

#[tokio::test]
async fn without_metadata_columns_rpc_text_says_how_to_find_the_line() {
    let dir = logs();
    let ctx = context(&dir, false).await;
    let err = run(&ctx, "SELECT rpc_text(line) FROM logs").await.unwrap_err();
    assert!(err.contains("format.metadata_columns"), "{err}");
    // CAST is Arrow's own there (no file or line to name).
    assert!(run(&ctx, "SELECT CAST(line AS VARCHAR) FROM logs").await.is_err());
}
