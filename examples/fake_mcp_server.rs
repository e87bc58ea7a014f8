//! A scripted MCP server for `tests/proxy.rs`: it reads NDJSON requests on stdin and acts
//! on the method name, so the test can make it hold, reorder, interleave, misbehave and
//! exit on cue. Deliberately built on serde_json `Value`, not on rpcscan.
//!
//! | method | behaviour |
//! |---|---|
//! | `echo` | result `{"params": PARAMS, "seen_id": ID}` |
//! | `hold` | no answer until `release` |
//! | `release` | answers every held request, newest first, then itself with `{"released": N}` |
//! | `progress` | a `notifications/progress` with `params._meta.progressToken`, then the result |
//! | `ask_client` | a request `sampling/createMessage` with id `"srv-1"` to the client, then the result |
//! | `noise` | a line that is not JSON, an oversized line, a response with an unknown id, then the result |
//! | `log` | result `{"requests": [...methods], "notifications": [...methods], "cancelled": [...requestIds], "client_responses": [...ids]}` |
//! | `exit` | exits at once, status 0, without answering |
//!
//! End of stdin: exits with status 0.

use std::io::{BufRead, Write};

use serde_json::{json, Value};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut send = |v: &Value| {
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    };
    let mut held: Vec<Value> = Vec::new();
    let mut requests: Vec<Value> = Vec::new();
    let mut notifications: Vec<Value> = Vec::new();
    let mut cancelled: Vec<Value> = Vec::new();
    let mut client_responses: Vec<Value> = Vec::new();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            eprintln!("fake_mcp_server: not JSON: {line}");
            continue;
        };
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = msg.get("id").cloned();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result =
            |id: &Value, result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match (method.as_deref(), id) {
            (None, Some(id)) => client_responses.push(id),
            (None, None) => eprintln!("fake_mcp_server: neither request nor response: {line}"),
            (Some(m), None) => {
                if m == "notifications/cancelled" {
                    cancelled.push(params.get("requestId").cloned().unwrap_or(Value::Null));
                }
                notifications.push(json!(m));
            }
            (Some(m), Some(id)) => {
                requests.push(json!(m));
                match m {
                    "hold" => held.push(id),
                    "release" => {
                        let n = held.len();
                        while let Some(h) = held.pop() {
                            send(&result(&h, json!({"held": true})));
                        }
                        send(&result(&id, json!({"released": n})));
                    }
                    "progress" => {
                        let token =
                            params.pointer("/_meta/progressToken").cloned().unwrap_or(Value::Null);
                        send(
                            &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}),
                        );
                        send(&result(&id, json!({"done": true})));
                    }
                    "ask_client" => {
                        send(
                            &json!({"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage", "params": {}}),
                        );
                        send(&result(&id, json!({"asked": true})));
                    }
                    "noise" => {
                        let _ = writeln!(std::io::stdout(), "this is not json");
                        let _ = writeln!(std::io::stdout(), "{}", "x".repeat(5000));
                        send(&result(&json!(999_999_999), json!({"stray": true})));
                        send(&result(&id, json!({"noisy": true})));
                    }
                    "log" => send(&result(
                        &id,
                        json!({
                            "requests": requests,
                            "notifications": notifications,
                            "cancelled": cancelled,
                            "client_responses": client_responses,
                        }),
                    )),
                    "exit" => std::process::exit(0),
                    _ => send(&result(&id, json!({"params": params, "seen_id": id}))),
                }
            }
        }
    }
}
