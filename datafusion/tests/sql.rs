//! Every rpcscan function through SQL, over every string and binary encoding, with NULLs,
//! invalid UTF-8 and the rule book's table cases (docs/spec.md §3, §4).

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryArray, BinaryViewArray, Int32Array, LargeBinaryArray, LargeStringArray,
    RecordBatch, StringArray, StringViewArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::assert_batches_eq;
use datafusion::prelude::SessionContext;

/// (line, kind, method, id, error_code, tool_name, invalid_reason) — one SPEC case per row.
const CASES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","result":{},"id":"a"}"#,
    r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":null}"#,
    r#"{"jsonrpc":"2.0","error":{"code":99999999999999999999,"message":"big"},"id":2}"#,
    r#"{"jsonrpc":"2.0","id":9007199254740993,"m\u0065thod":"tools/call","params":{"name":"a\u0062c"}}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"x","params":null}"#,
    r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
    r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":4}"#,
    r#"[]"#,
    "\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
    r#"{"a":}"#,
    "",
];

const EXPECTED: &[&str] = &[
    "+----+--------------+---------------------------+------------------+--------+------+------------------+",
    "| n  | kind         | method                    | id               | code   | tool | reason           |",
    "+----+--------------+---------------------------+------------------+--------+------+------------------+",
    "| 0  | request      | tools/call                | 1                |        | echo |                  |",
    "| 1  | notification | notifications/initialized |                  |        |      |                  |",
    "| 2  | result       |                           | \"a\"              |        |      |                  |",
    "| 3  | error        |                           | null             | -32601 |      |                  |",
    "| 4  | error        |                           | 2                |        |      |                  |",
    "| 5  | request      | tools/call                | 9007199254740993 |        | abc  |                  |",
    "| 6  | invalid      |                           |                  |        |      | bad_id           |",
    "| 7  | invalid      |                           | 7                |        |      | bad_params       |",
    "| 8  | invalid      |                           |                  |        |      | duplicate_key    |",
    "| 9  | invalid      |                           | 3                |        |      | bad_version      |",
    "| 10 | invalid      |                           | 4                |        |      | result_and_error |",
    "| 11 | invalid      |                           |                  |        |      | batch            |",
    "| 12 | invalid      |                           |                  |        |      | bom              |",
    "| 13 | invalid      |                           |                  |        |      | syntax           |",
    "| 14 | invalid      |                           |                  |        |      | empty            |",
    "| 15 |              |                           |                  |        |      |                  |",
    "+----+--------------+---------------------------+------------------+--------+------+------------------+",
];

const QUERY: &str =
    "SELECT n, rpc_kind(line) AS kind, rpc_method(line) AS method, rpc_id(line) AS id, \
     rpc_error_code(line) AS code, rpc_tool_name(line) AS tool, rpc_invalid_reason(line) AS reason \
     FROM t ORDER BY n";

/// The cases plus a NULL row, as a column of `data_type`.
fn column(data_type: &DataType, rows: &[Option<&[u8]>]) -> ArrayRef {
    let text =
        || rows.iter().map(|r| r.map(|b| std::str::from_utf8(b).unwrap())).collect::<Vec<_>>();
    match data_type {
        DataType::Utf8 => Arc::new(StringArray::from(text())),
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from(text())),
        DataType::Utf8View => Arc::new(StringViewArray::from(text())),
        DataType::Binary => Arc::new(BinaryArray::from(rows.to_vec())),
        DataType::LargeBinary => Arc::new(LargeBinaryArray::from(rows.to_vec())),
        DataType::BinaryView => Arc::new(BinaryViewArray::from(rows.to_vec())),
        other => panic!("no column for {other}"),
    }
}

fn context(data_type: &DataType, rows: &[Option<&[u8]>]) -> SessionContext {
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int32, false),
        Field::new("line", data_type.clone(), true),
    ]));
    let n: Int32Array = (0..rows.len() as i32).collect();
    let batch = RecordBatch::try_new(schema, vec![Arc::new(n), column(data_type, rows)]).unwrap();
    let ctx = SessionContext::new();
    rpcscan_datafusion::register(&ctx).unwrap();
    ctx.register_batch("t", batch).unwrap();
    ctx
}

fn rows() -> Vec<Option<&'static [u8]>> {
    CASES.iter().map(|c| Some(c.as_bytes())).chain([None]).collect()
}

const ENCODINGS: [DataType; 6] = [
    DataType::Utf8,
    DataType::LargeUtf8,
    DataType::Utf8View,
    DataType::Binary,
    DataType::LargeBinary,
    DataType::BinaryView,
];

#[tokio::test]
async fn every_function_over_every_encoding() {
    for encoding in &ENCODINGS {
        let ctx = context(encoding, &rows());
        let batches = ctx.sql(QUERY).await.unwrap().collect().await.unwrap();
        println!("{encoding}");
        assert_batches_eq!(EXPECTED, &batches);
    }
}

#[tokio::test]
async fn rpc_scan_equals_the_single_functions() {
    for encoding in &ENCODINGS {
        let ctx = context(encoding, &rows());
        let sql = "SELECT count(*) AS differ FROM t WHERE \
            (rpc_scan(line)['kind'] IS DISTINCT FROM rpc_kind(line)) \
            OR (rpc_scan(line)['method'] IS DISTINCT FROM rpc_method(line)) \
            OR (rpc_scan(line)['id'] IS DISTINCT FROM rpc_id(line)) \
            OR (rpc_scan(line)['error_code'] IS DISTINCT FROM rpc_error_code(line)) \
            OR (rpc_scan(line)['tool_name'] IS DISTINCT FROM rpc_tool_name(line)) \
            OR (rpc_scan(line)['invalid_reason'] IS DISTINCT FROM rpc_invalid_reason(line)) \
            OR (rpc_scan(line) IS NULL) <> (line IS NULL)";
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        assert_batches_eq!(
            ["+--------+", "| differ |", "+--------+", "| 0      |", "+--------+"],
            &batches
        );
    }
}

#[tokio::test]
async fn invalid_utf8_in_binary_is_classified_not_dropped() {
    let rows: Vec<Option<&[u8]>> = vec![
        Some(b"\xff"),
        Some(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\x28\"}"),
        Some(b"{\"jsonrpc\":\"2.0\",\"method\":\"ok\",\"params\":[\"\xed\xa0\x80\"]}"),
        Some(br#"{"jsonrpc":"2.0","method":"ok"}"#),
    ];
    for encoding in [DataType::Binary, DataType::LargeBinary, DataType::BinaryView] {
        let ctx = context(&encoding, &rows);
        let sql = "SELECT n, rpc_kind(line) AS kind, rpc_invalid_reason(line) AS reason FROM t ORDER BY n";
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        assert_batches_eq!(
            [
                "+---+--------------+--------------+",
                "| n | kind         | reason       |",
                "+---+--------------+--------------+",
                "| 0 | invalid      | invalid_utf8 |",
                "| 1 | invalid      | invalid_utf8 |",
                "| 2 | invalid      | invalid_utf8 |",
                "| 3 | notification |              |",
                "+---+--------------+--------------+",
            ],
            &batches
        );
    }
}

#[tokio::test]
async fn scalars_and_the_struct() {
    let ctx = SessionContext::new();
    rpcscan_datafusion::register(&ctx).unwrap();
    let sql = r#"SELECT rpc_kind('{"jsonrpc":"2.0","method":"x"}') AS k,
                        rpc_kind(CAST(NULL AS VARCHAR)) AS null_in,
                        rpc_error_code(X'7b226a736f6e727063223a22322e30222c226572726f72223a7b22636f6465223a2d312c226d657373616765223a226d227d7d') AS code,
                        rpc_scan('{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"t"}}')['tool_name'] AS tool"#;
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    assert_batches_eq!(
        [
            "+--------------+---------+------+------+",
            "| k            | null_in | code | tool |",
            "+--------------+---------+------+------+",
            "| notification |         | -1   | t    |",
            "+--------------+---------+------+------+",
        ],
        &batches
    );
}

#[tokio::test]
async fn expression_builders_match_sql() {
    use datafusion::prelude::col;
    let ctx = context(&DataType::Binary, &rows());
    let df = ctx
        .table("t")
        .await
        .unwrap()
        .select(vec![
            col("n"),
            rpcscan_datafusion::rpc_kind(col("line")).alias("kind"),
            rpcscan_datafusion::rpc_method(col("line")).alias("method"),
            rpcscan_datafusion::rpc_id(col("line")).alias("id"),
            rpcscan_datafusion::rpc_error_code(col("line")).alias("code"),
            rpcscan_datafusion::rpc_tool_name(col("line")).alias("tool"),
            rpcscan_datafusion::rpc_invalid_reason(col("line")).alias("reason"),
        ])
        .unwrap()
        .sort(vec![col("n").sort(true, false)])
        .unwrap();
    assert_batches_eq!(EXPECTED, &df.collect().await.unwrap());
}

#[tokio::test]
async fn a_plain_session_does_not_know_the_functions() {
    let ctx = SessionContext::new();
    let err = ctx.sql("SELECT rpc_kind('{}')").await.expect_err("rpc_kind is unknown");
    assert!(err.to_string().contains("rpc_kind"), "{err}");
}
