//! The `lines` format: SQL and API, NDJSON framing, and one large file split into
//! newline-aligned ranges that together hold every line exactly once.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::assert_batches_eq;
use datafusion::prelude::{SessionConfig, SessionContext};
use rpcscan_datafusion::LinesTable;

fn context(target_partitions: usize) -> SessionContext {
    // Work stealing (DataFusion's default) lets an idle partition read its siblings' byte
    // ranges at run time; on the test's single-threaded runtime one partition then sometimes
    // reads them all. Off, every partition reads exactly the ranges it was planned with,
    // which is what `one_large_file_is_scanned_in_parallel_ranges` checks.
    let config = SessionConfig::new()
        .with_target_partitions(target_partitions)
        .set_usize("datafusion.optimizer.repartition_file_min_size", 1)
        .set_bool("datafusion.execution.enable_file_stream_work_stealing", false);
    let ctx = SessionContext::new_with_config(config);
    rpcscan_datafusion::register(&ctx).unwrap();
    ctx
}

fn lines_of(batches: &[RecordBatch]) -> Vec<Vec<u8>> {
    batches
        .iter()
        .flat_map(|b| {
            b.column(0).as_binary::<i32>().iter().map(|v| v.unwrap().to_vec()).collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
async fn create_external_table_stored_as_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.ndjson"),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}\r\n\n  \n{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":1}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("b.log"), b"\xff\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}")
        .unwrap();
    let ctx = context(2);
    let location = format!("{}/", dir.path().display());
    ctx.sql(&format!("CREATE EXTERNAL TABLE logs STORED AS LINES LOCATION '{location}'"))
        .await
        .unwrap();
    let batches = ctx
        .sql("SELECT rpc_kind(line) AS kind, count(*) AS n FROM logs GROUP BY 1 ORDER BY 1")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_batches_eq!(
        [
            "+--------------+---+",
            "| kind         | n |",
            "+--------------+---+",
            "| invalid      | 1 |",
            "| notification | 1 |",
            "| request      | 1 |",
            "| result       | 1 |",
            "+--------------+---+",
        ],
        &batches
    );
    let schema = ctx.table("logs").await.unwrap().schema().as_arrow().clone();
    assert_eq!(schema, *rpcscan_datafusion::lines_schema());
}

#[tokio::test]
async fn one_large_file_is_scanned_in_parallel_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.ndjson");
    let mut text = Vec::new();
    let mut want = Vec::new();
    for i in 0..20_000u32 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"m{}","params":[{}]}}"#,
            i % 7,
            "1,".repeat((i % 13) as usize) + "0"
        );
        text.extend_from_slice(line.as_bytes());
        text.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
        if i % 11 == 0 {
            text.extend_from_slice(b"\n \t\n");
        }
        want.push(line.into_bytes());
    }
    text.extend_from_slice(b"last-without-newline");
    want.push(b"last-without-newline".to_vec());
    std::fs::write(&path, &text).unwrap();

    let ctx = context(4);
    ctx.register_table("logs", Arc::new(LinesTable::try_new([path.to_str().unwrap()]).unwrap()))
        .unwrap();
    let partitions =
        ctx.sql("SELECT line FROM logs").await.unwrap().collect_partitioned().await.unwrap();
    assert!(partitions.len() >= 2, "one file, {} partitions", partitions.len());
    assert!(partitions.iter().filter(|p| !lines_of(p).is_empty()).count() >= 2);
    let mut got: Vec<Vec<u8>> = partitions.iter().flat_map(|p| lines_of(p)).collect();
    got.sort();
    want.sort();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "lines lost or repeated at range boundaries");

    let batches = ctx.sql("SELECT count(*) AS n FROM logs").await.unwrap().collect().await.unwrap();
    assert_batches_eq!(["+-------+", "| n     |", "+-------+", "| 20001 |", "+-------+"], &batches);
}

async fn kinds(ctx: &SessionContext, table: &str) -> Vec<RecordBatch> {
    ctx.sql(&format!(
        "SELECT rpc_kind(line) AS kind, rpc_invalid_reason(line) AS reason, count(*) AS n \
         FROM {table} GROUP BY 1, 2 ORDER BY 1, 2"
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap()
}

async fn count(ctx: &SessionContext, table: &str) -> i64 {
    let batches = ctx
        .sql(&format!("SELECT count(*) AS n FROM {table}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    batches[0].column(0).as_primitive::<datafusion::arrow::datatypes::Int64Type>().value(0)
}

#[tokio::test]
async fn globs_lists_and_missing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("a.ndjson"), "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n")
        .unwrap();
    std::fs::write(dir.path().join("b.log"), "{}\n{}\n").unwrap();
    let ctx = context(2);
    for (name, location, want) in [
        ("all", format!("'{d}/'"), 3),
        ("glob", format!("'{d}/*.ndjson'"), 1),
        ("list", format!("('{d}/a.ndjson', '{d}/b.log')"), 3),
    ] {
        ctx.sql(&format!("CREATE EXTERNAL TABLE {name} STORED AS LINES LOCATION {location}"))
            .await
            .unwrap();
        assert_eq!(count(&ctx, name).await, want, "{location}");
    }
    let glob = LinesTable::try_new([format!("{d}/*.ndjson")]).unwrap();
    assert!(glob.locations()[0].get_glob().is_some(), "the glob is kept");

    for location in [
        format!("'{d}/missing.ndjson'"),
        format!("('{d}/a.ndjson', '{d}/missing.ndjson')"),
        format!("'{d}/missing/*.ndjson'"),
    ] {
        let err = ctx
            .sql(&format!("CREATE EXTERNAL TABLE m STORED AS LINES LOCATION {location}"))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("{d}/missing")), "{location}: {err}");
    }
    let err = ctx
        .sql("CREATE EXTERNAL TABLE s STORED AS LINES LOCATION 's3://bucket/logs/'")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("'s3' scheme is not supported") && !err.contains("Internal"), "{err}");
}

#[tokio::test]
async fn a_location_that_matches_no_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::create_dir_all(dir.path().join("logs/deeper")).unwrap();
    std::fs::write(dir.path().join("logs/a.ndjson"), "{}\n").unwrap();
    std::fs::write(dir.path().join("logs/deeper/b.log"), "{}\n").unwrap();
    let ctx = context(2);
    for (location, named, why) in [
        (format!("'{d}/empty/'"), format!("{d}/empty/"), "holds no file"),
        (format!("'{d}/logs/*.json'"), format!("{d}/logs/*.json"), "matches no file"),
        (format!("'{d}/empty/*.ndjson'"), format!("{d}/empty/*.ndjson"), "matches no file"),
        (format!("('{d}/logs/a.ndjson', '{d}/empty/')"), format!("{d}/empty/"), "holds no file"),
    ] {
        let err = ctx
            .sql(&format!("CREATE EXTERNAL TABLE t STORED AS LINES LOCATION {location}"))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("'{named}'")) && err.contains(why), "{location}: {err}");
        let err = LinesTable::try_new([named.as_str()]).unwrap_err().to_string();
        assert!(err.contains(&named), "{err}");
    }

    // An empty file is a file: an empty table, not an error.
    std::fs::write(dir.path().join("empty.log"), "").unwrap();
    ctx.sql(&format!("CREATE EXTERNAL TABLE nothing STORED AS LINES LOCATION '{d}/empty.log'"))
        .await
        .unwrap();
    assert_eq!(count(&ctx, "nothing").await, 0);

    // A glob whose only match is in a subdirectory makes a table (a session may read
    // subdirectories), but by default (`listing_table_ignore_subdirectory`) the listing
    // finds nothing: the query says so instead of counting nothing.
    ctx.sql(&format!("CREATE EXTERNAL TABLE deep STORED AS LINES LOCATION '{d}/logs/*.log'"))
        .await
        .unwrap();
    let err = match ctx.sql("SELECT count(*) FROM deep").await {
        Ok(df) => df.collect().await.map(|_| ()).unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(&format!("'{d}/logs/*.log': no file to read")), "{err}");
    ctx.sql("SET datafusion.execution.listing_table_ignore_subdirectory = false").await.unwrap();
    assert_eq!(count(&ctx, "deep").await, 1);

    // Files removed after the table was made: an error naming the file, not an empty table.
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    std::fs::write(gone.join("x.ndjson"), "{}\n").unwrap();
    ctx.sql(&format!("CREATE EXTERNAL TABLE gone STORED AS LINES LOCATION '{}/'", gone.display()))
        .await
        .unwrap();
    assert_eq!(count(&ctx, "gone").await, 1);
    std::fs::remove_file(gone.join("x.ndjson")).unwrap();
    let err = match ctx.sql("SELECT count(*) FROM gone").await {
        Ok(df) => df.collect().await.map(|_| ()).unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(&gone.display().to_string()), "{err}");
}

#[tokio::test]
async fn lines_over_the_limit_are_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.ndjson");
    // 40 bytes, then 41 bytes (with a CRLF: the \r is not part of the message).
    let at = r#"{"jsonrpc":"2.0","result":"abcd","id":1}"#;
    let over = r#"{"jsonrpc":"2.0","result":"abcde","id":1}"#;
    assert_eq!((at.len(), over.len()), (40, 41));
    std::fs::write(&path, format!("{at}\r\n{over}\r\n")).unwrap();
    let ctx = SessionContext::new();
    rpcscan_datafusion::register_with_max_message_size(&ctx, 40).unwrap();
    ctx.register_table("logs", Arc::new(LinesTable::try_new([path.to_str().unwrap()]).unwrap()))
        .unwrap();
    assert_batches_eq!(
        [
            "+---------+-----------+---+",
            "| kind    | reason    | n |",
            "+---------+-----------+---+",
            "| invalid | too_large | 1 |",
            "| result  |           | 1 |",
            "+---------+-----------+---+",
        ],
        &kinds(&ctx, "logs").await
    );
    let batches = ctx
        .sql(
            "SELECT rpc_scan(line)['invalid_reason'] AS r, rpc_id(line) AS id FROM logs ORDER BY 1",
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_batches_eq!(
        [
            "+-----------+----+",
            "| r         | id |",
            "+-----------+----+",
            "| too_large |    |",
            "|           | 1  |",
            "+-----------+----+",
        ],
        &batches
    );
}

#[tokio::test]
async fn metadata_columns_trace_a_line_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(
        dir.path().join("a.ndjson"),
        b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n\n\xff\n{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}",
    )
    .unwrap();
    let ctx = context(4);
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE logs STORED AS LINES LOCATION '{d}/' \
         OPTIONS ('format.metadata_columns' 'true')"
    ))
    .await
    .unwrap();
    let batches = ctx
        .sql(
            "SELECT _line, _offset, rpc_kind(line) AS kind, TRY_CAST(line AS VARCHAR) IS NULL AS not_utf8 \
             FROM logs ORDER BY _line",
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_batches_eq!(
        [
            "+-------+---------+--------------+----------+",
            "| _line | _offset | kind         | not_utf8 |",
            "+-------+---------+--------------+----------+",
            "| 1     | 0       | notification | false    |",
            "| 3     | 33      | invalid      | true     |",
            "| 4     | 35      | result       | false    |",
            "+-------+---------+--------------+----------+",
        ],
        &batches
    );
    let file = ctx.sql("SELECT DISTINCT _file FROM logs").await.unwrap().collect().await.unwrap();
    assert_eq!(file[0].column(0).as_string::<i32>().value(0), format!("{d}/a.ndjson"));
    // Plain tables keep the single column; unknown options are errors.
    let err = ctx
        .sql(&format!(
            "CREATE EXTERNAL TABLE bad STORED AS LINES LOCATION '{d}/' OPTIONS ('format.nope' 'x')"
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown option 'format.nope'"), "{err}");
}

/// `text` compressed with DataFusion's own encoders.
async fn compress(text: &[u8], c: rpcscan_datafusion::lines::FileCompressionType) -> Vec<u8> {
    use futures::StreamExt;
    let input = futures::stream::iter([Ok(bytes::Bytes::copy_from_slice(text))]).boxed();
    let mut out = Vec::new();
    let mut stream = c.convert_to_compress_stream(input).unwrap();
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk.unwrap());
    }
    out
}

#[tokio::test]
async fn gzip_and_zstd_by_extension_and_by_option() {
    use rpcscan_datafusion::lines::FileCompressionType as C;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let mut text = Vec::new();
    for i in 0..5000 {
        text.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"m\"}}\n").as_bytes(),
        );
    }
    text.extend_from_slice(b"not json\n");
    std::fs::write(dir.path().join("a.ndjson.gz"), compress(&text, C::GZIP).await).unwrap();
    std::fs::write(dir.path().join("b.ndjson.zst"), compress(&text, C::ZSTD).await).unwrap();
    std::fs::create_dir(dir.path().join("named")).unwrap();
    std::fs::write(dir.path().join("named/c.log"), compress(&text, C::GZIP).await).unwrap();
    // Four partitions and a tiny minimum size: only the ranges at 0 may read a compressed file.
    let ctx = context(4);
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE by_ext STORED AS LINES LOCATION ('{d}/a.ndjson.gz', '{d}/b.ndjson.zst')"
    ))
    .await
    .unwrap();
    // DataFusion 55 rejects `COMPRESSION TYPE` ("no longer in use"): the option replaces it.
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE by_option STORED AS LINES LOCATION '{d}/named/' \
         OPTIONS ('format.compression' 'gzip')"
    ))
    .await
    .unwrap();
    for (table, files) in [("by_ext", 2), ("by_option", 1)] {
        let batches = ctx
            .sql(&format!(
                "SELECT count(*) FILTER (WHERE rpc_kind(line) = 'request') AS requests, \
                        count(*) FILTER (WHERE rpc_invalid_reason(line) = 'syntax') AS syntax \
                 FROM {table}"
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let column = |i: usize| {
            batches[0].column(i).as_primitive::<datafusion::arrow::datatypes::Int64Type>().value(0)
        };
        assert_eq!((column(0), column(1)), (files * 5000, files), "{table}");
    }
    let err = ctx
        .sql(&format!(
            "CREATE EXTERNAL TABLE bad STORED AS LINES LOCATION '{d}/named/' \
             OPTIONS ('format.compression' 'lz4')"
        ))
        .await
        .unwrap_err()
        .to_string();
    // DataFusion's planner checks the name first ("Unsupported file compression type LZ4").
    assert!(err.to_lowercase().contains("compression type lz4"), "{err}");
}
