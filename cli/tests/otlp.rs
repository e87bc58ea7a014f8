//! `rpcscan gateway --otlp-endpoint`: a URL the exporter cannot use stops the gateway at
//! start (exit 2, the reason on stderr), before it listens. The export itself is checked
//! against a real OTLP receiver by interop/otlp.sh.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rpcscan");

fn gateway(endpoint: &str) -> (Option<i32>, String) {
    let output = Command::new(BIN)
        .args(["gateway", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:9/mcp"])
        .args(["--otlp-endpoint", endpoint])
        .output()
        .expect("rpcscan runs");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_unusable_endpoint_stops_the_gateway_at_start() {
    for (endpoint, reason) in [
        ("https://127.0.0.1:4318/v1/traces", "only http:// endpoints are supported"),
        ("http://[::1/v1/traces", "--otlp-endpoint"),
    ] {
        let (code, stderr) = gateway(endpoint);
        assert_eq!(code, Some(2), "{endpoint}: {stderr}");
        assert!(stderr.contains(reason), "{endpoint}: {stderr}");
        assert!(!stderr.contains("listening"), "{endpoint}: {stderr}");
    }
}
