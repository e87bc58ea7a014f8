//! Property: on any bytes, every function gives what `rpcscan::parse` says about the same
//! line (the oracle here is the library itself, read through its public API).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, StringViewArray};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};
use proptest::prelude::*;

/// What one line should give: (kind, method, id, error_code, tool_name, invalid_reason).
type Row =
    (Option<String>, Option<String>, Option<String>, Option<i64>, Option<String>, Option<String>);

fn text(s: rpcscan::Str<'_>) -> String {
    match s.decode() {
        Ok(t) => t.into_owned(),
        Err(_) => String::from_utf8(s.raw().to_vec()).unwrap(),
    }
}

fn expected(line: &[u8]) -> Row {
    match rpcscan::parse(line) {
        Ok(msg) => (
            Some(msg.kind().as_str().to_string()),
            msg.method().map(text),
            msg.id().map(|id| String::from_utf8(id.raw().to_vec()).unwrap()),
            msg.error_code().and_then(|c| c.as_i64()),
            msg.mcp().tool_name().map(text),
            None,
        ),
        Err(invalid) => (
            Some("invalid".to_string()),
            None,
            invalid.id().map(|id| String::from_utf8(id.raw().to_vec()).unwrap()),
            None,
            None,
            Some(invalid.reason().as_str().to_string()),
        ),
    }
}

fn call(udf: &ScalarUDF, input: &ArrayRef) -> ArrayRef {
    let return_type = udf.return_type(&[input.data_type().clone()]).unwrap();
    let args = ScalarFunctionArgs {
        args: vec![ColumnarValue::Array(Arc::clone(input))],
        arg_fields: vec![Arc::new(Field::new("line", input.data_type().clone(), true))],
        number_rows: input.len(),
        return_field: Arc::new(Field::new(udf.name(), return_type, true)),
        config_options: Arc::new(ConfigOptions::default()),
    };
    match udf.invoke_with_args(args).unwrap() {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(_) => panic!("array in, scalar out"),
    }
}

fn strings(a: &dyn Array) -> Vec<Option<String>> {
    a.as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect()
}

fn check(lines: &[Option<Vec<u8>>], input: ArrayRef) {
    let f = |name: &str| {
        rpcscan_datafusion::all_functions().into_iter().find(|u| u.name() == name).unwrap()
    };
    let kind = strings(&call(&f("rpc_kind"), &input));
    let method = strings(&call(&f("rpc_method"), &input));
    let id = strings(&call(&f("rpc_id"), &input));
    let code: Vec<Option<i64>> =
        call(&f("rpc_error_code"), &input).as_primitive::<Int64Type>().iter().collect();
    let tool = strings(&call(&f("rpc_tool_name"), &input));
    let reason = strings(&call(&f("rpc_invalid_reason"), &input));
    let scan = call(&f("rpc_scan"), &input);
    let scan = scan.as_struct();
    for (i, line) in lines.iter().enumerate() {
        let want: Row = match line {
            Some(line) => expected(line),
            None => (None, None, None, None, None, None),
        };
        let got: Row = (
            kind[i].clone(),
            method[i].clone(),
            id[i].clone(),
            code[i],
            tool[i].clone(),
            reason[i].clone(),
        );
        assert_eq!(got, want, "line {i}: {line:?}");
        assert_eq!(scan.is_null(i), line.is_none());
        let from_scan: Row = (
            strings(scan.column(0).as_ref())[i].clone(),
            strings(scan.column(1).as_ref())[i].clone(),
            strings(scan.column(2).as_ref())[i].clone(),
            scan.column(3).as_primitive::<Int64Type>().iter().nth(i).flatten(),
            strings(scan.column(4).as_ref())[i].clone(),
            strings(scan.column(5).as_ref())[i].clone(),
        );
        assert_eq!(from_scan, want, "rpc_scan, line {i}: {line:?}");
    }
}

/// JSON-RPC-shaped lines with the pieces that change verdicts, plus raw bytes.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let id = prop_oneof![
        Just(String::new()),
        Just(r#","id":1"#.to_string()),
        Just(r#","id":"x\u0041""#.to_string()),
        Just(r#","id":null"#.to_string()),
        Just(r#","id":1.5"#.to_string()),
        Just(r#","id":18446744073709551617"#.to_string()),
        Just(r#","id":1,"id":2"#.to_string()),
    ];
    let body = prop_oneof![
        Just(r#","method":"tools/call","params":{"name":"t\u0031"}"#.to_string()),
        Just(r#","method":"ping""#.to_string()),
        Just(r#","method":"\ud800""#.to_string()),
        Just(r#","method":"x","params":null"#.to_string()),
        Just(r#","result":{"method":"nested"}"#.to_string()),
        Just(r#","error":{"code":-32000,"message":"m","data":[1]}"#.to_string()),
        Just(r#","error":{"code":123456789012345678901,"message":"m"}"#.to_string()),
        Just(r#","error":{"code":1.5,"message":"m"}"#.to_string()),
        Just(r#","result":1,"error":{"code":1,"message":"m"}"#.to_string()),
        Just(String::new()),
    ];
    let version =
        prop_oneof![Just(r#""jsonrpc":"2.0""#), Just(r#""jsonrpc":"1.0""#), Just(r#""x":0"#)];
    let message =
        (version, id, body).prop_map(|(v, id, body)| format!("{{{v}{id}{body}}}").into_bytes());
    prop_oneof![
        4 => message,
        1 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => (proptest::collection::vec(any::<u8>(), 1..4), 0usize..30).prop_map(|(junk, at)| {
            let mut m = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"n"}}"#.to_vec();
            let at = at.min(m.len());
            m.splice(at..at, junk);
            m
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn functions_agree_with_parse(lines in proptest::collection::vec(proptest::option::weighted(0.9, line()), 0..24)) {
        let binary: ArrayRef = Arc::new(BinaryArray::from(lines.iter().map(|l| l.as_deref()).collect::<Vec<_>>()));
        check(&lines, binary);
        // The same lines as Utf8View, where they are text.
        if lines.iter().flatten().all(|l| std::str::from_utf8(l).is_ok()) {
            let view: ArrayRef = Arc::new(StringViewArray::from(
                lines.iter().map(|l| l.as_deref().map(|b| std::str::from_utf8(b).unwrap())).collect::<Vec<_>>(),
            ));
            check(&lines, view);
        }
    }
}

#[test]
fn types_are_declared() {
    for udf in rpcscan_datafusion::all_functions() {
        for t in [
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            DataType::Binary,
            DataType::LargeBinary,
            DataType::BinaryView,
        ] {
            udf.return_type(&[t]).unwrap();
        }
    }
}
