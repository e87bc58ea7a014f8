//! `--config FILE`: every flag of `rpcscan gateway` in a TOML file, under the flag's own
//! name (`deny-tool = ["exec*"]`, `max-body-size = "4MiB"`, `header-timeout = "10s"`).
//! A flag given on the command line overrides the file's value (a list flag replaces the
//! file's whole list). Paths in the file are relative to the file's folder. SIGHUP reads
//! the file again ([`Settings::resolve`] with the same command line).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::GatewayArgs;
use crate::policy::Policy;

/// Defaults of the flags that have one (the `--help` text says the same).
const MAX_BODY_SIZE: usize = 4 << 20;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_CONNECTIONS: usize = 1024;
const MAX_CONNECTIONS_PER_CLIENT: usize = 128;
const DRAIN: Duration = Duration::from_secs(10);

/// The file as written: every key optional, unknown keys refused (a typo must not pass
/// silently as a missing setting).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct File {
    listen: Option<SocketAddr>,
    upstream: Option<String>,
    allow_method: Option<Vec<String>>,
    deny_method: Option<Vec<String>>,
    allow_tool: Option<Vec<String>>,
    deny_tool: Option<Vec<String>>,
    allow_origin: Option<Vec<String>>,
    max_body_size: Option<Size>,
    request_timeout: Option<String>,
    header_timeout: Option<String>,
    idle_timeout: Option<String>,
    max_connections: Option<usize>,
    max_connections_per_client: Option<usize>,
    drain: Option<String>,
    log: Option<PathBuf>,
    metrics: Option<SocketAddr>,
    allow_remote: Option<bool>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    otlp_endpoint: Option<String>,
}

/// A size: a number of bytes, or a string with a unit as on the command line.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(usize),
    Text(String),
}

/// The connection limits, read for each new connection (SIGHUP changes them for the
/// connections accepted after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Time to receive a request's header block (HTTP/1.1; 0: none). Also bounds the TLS
    /// handshake.
    pub header_timeout: Duration,
    /// A connection with no request in flight and nothing received for this long is
    /// closed (0: never).
    pub idle_timeout: Duration,
    /// Connections open at once (0: no cap).
    pub max_connections: usize,
    /// Connections open at once from one client IP address (0: no cap).
    pub max_connections_per_client: usize,
}

/// Every setting, the command line over the file over the defaults.
#[derive(Clone, Debug)]
pub struct Settings {
    pub listen: SocketAddr,
    pub upstream: String,
    pub policy: Policy,
    pub allow_origin: Vec<String>,
    pub max_body_size: usize,
    pub request_timeout: Duration,
    pub limits: Limits,
    pub drain: Duration,
    pub log: Option<PathBuf>,
    pub metrics: Option<SocketAddr>,
    pub allow_remote: bool,
    /// `(--tls-cert, --tls-key)`.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--otlp-endpoint`: where spans are exported.
    pub otlp_endpoint: Option<String>,
}

impl Settings {
    /// Reads `args.config` (when given) and lays the command line over it.
    pub fn resolve(args: &GatewayArgs) -> Result<Settings, String> {
        let (file, base) = match &args.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--config {}: {e}", path.display()))?;
                let file: File = toml::from_str(&text)
                    .map_err(|e| format!("--config {}: {e}", path.display()))?;
                (file, path.parent().map(Path::to_path_buf).unwrap_or_default())
            }
            None => (File::default(), PathBuf::new()),
        };
        let path = |cli: &Option<PathBuf>, file: Option<PathBuf>| {
            cli.clone().or_else(|| file.map(|p| base.join(p)))
        };
        let list = |cli: &Vec<String>, file: Option<Vec<String>>| {
            if cli.is_empty() {
                file.unwrap_or_default()
            } else {
                cli.clone()
            }
        };
        let duration =
            |name: &str, cli: Option<Duration>, file: Option<String>, default| match (cli, file) {
                (Some(d), _) => Ok(d),
                (None, Some(text)) => rpcscan_traffic::duration::parse_duration(&text)
                    .map_err(|e| format!("--config: {name}: {e}")),
                (None, None) => Ok(default),
            };
        let max_body_size = match (args.max_body_size, file.max_body_size) {
            (Some(n), _) | (None, Some(Size::Bytes(n))) => n,
            (None, Some(Size::Text(text))) => {
                crate::parse_size(&text).map_err(|e| format!("--config: max-body-size: {e}"))?
            }
            (None, None) => MAX_BODY_SIZE,
        };
        let tls_cert = path(&args.tls_cert, file.tls_cert);
        let tls_key = path(&args.tls_key, file.tls_key);
        let tls = match (tls_cert, tls_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err("--tls-cert and --tls-key go together".to_owned()),
        };
        Ok(Settings {
            listen: args.listen.or(file.listen).ok_or("--listen is required")?,
            upstream: args.upstream.clone().or(file.upstream).ok_or("--upstream is required")?,
            policy: Policy {
                allow_methods: list(&args.allow_method, file.allow_method),
                deny_methods: list(&args.deny_method, file.deny_method),
                allow_tools: list(&args.allow_tool, file.allow_tool),
                deny_tools: list(&args.deny_tool, file.deny_tool),
            },
            allow_origin: list(&args.allow_origin, file.allow_origin),
            max_body_size,
            request_timeout: duration(
                "request-timeout",
                args.request_timeout,
                file.request_timeout,
                REQUEST_TIMEOUT,
            )?,
            limits: Limits {
                header_timeout: duration(
                    "header-timeout",
                    args.header_timeout,
                    file.header_timeout,
                    HEADER_TIMEOUT,
                )?,
                idle_timeout: duration(
                    "idle-timeout",
                    args.idle_timeout,
                    file.idle_timeout,
                    IDLE_TIMEOUT,
                )?,
                max_connections: args
                    .max_connections
                    .or(file.max_connections)
                    .unwrap_or(MAX_CONNECTIONS),
                max_connections_per_client: args
                    .max_connections_per_client
                    .or(file.max_connections_per_client)
                    .unwrap_or(MAX_CONNECTIONS_PER_CLIENT),
            },
            drain: duration("drain", args.drain, file.drain, DRAIN)?,
            log: path(&args.log, file.log),
            metrics: args.metrics.or(file.metrics),
            allow_remote: args.allow_remote || file.allow_remote.unwrap_or(false),
            tls,
            otlp_endpoint: args.otlp_endpoint.clone().or(file.otlp_endpoint),
        })
    }

    /// What SIGHUP cannot change in a running gateway (it needs a restart), by name.
    pub fn fixed_changes(&self, new: &Settings) -> Vec<&'static str> {
        let mut changed = Vec::new();
        if self.listen != new.listen {
            changed.push("listen");
        }
        if self.upstream != new.upstream {
            changed.push("upstream");
        }
        if self.log != new.log {
            changed.push("log");
        }
        if self.metrics != new.metrics {
            changed.push("metrics");
        }
        if self.allow_remote != new.allow_remote {
            changed.push("allow-remote");
        }
        if self.tls.is_some() != new.tls.is_some() {
            changed.push("tls-cert/tls-key (on or off)");
        }
        if self.otlp_endpoint != new.otlp_endpoint {
            changed.push("otlp-endpoint");
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: GatewayArgs,
    }

    fn settings(file: &str, flags: &[&str]) -> Result<Settings, String> {
        let dir = std::env::temp_dir().join(format!(
            "rpcscan-gateway-config-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let path = dir.join("gateway.toml");
        std::fs::write(&path, file).map_err(|e| e.to_string())?;
        let mut argv = vec!["gateway", "--config", path.to_str().unwrap_or_default()];
        argv.extend(flags);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let settings = Settings::resolve(&cli.args);
        let _ = std::fs::remove_dir_all(&dir);
        settings
    }

    #[test]
    fn the_file_holds_every_flag_and_the_command_line_wins() {
        let file = r#"
            listen = "127.0.0.1:8080"
            upstream = "http://127.0.0.1:3001/mcp"
            allow-method = ["tools/*"]
            deny-method = ["x"]
            allow-tool = ["a*"]
            deny-tool = ["exec*", "rm"]
            allow-origin = ["http://localhost"]
            max-body-size = "64K"
            request-timeout = "5s"
            header-timeout = "2s"
            idle-timeout = "3s"
            max-connections = 10
            max-connections-per-client = 2
            drain = "1s"
            log = "mcp.ndjson"
            metrics = "127.0.0.1:9090"
            allow-remote = true
            tls-cert = "cert.pem"
            tls-key = "key.pem"
            otlp-endpoint = "http://127.0.0.1:4318/v1/traces"
        "#;
        let s = settings(file, &[]).unwrap();
        assert_eq!(s.otlp_endpoint.as_deref(), Some("http://127.0.0.1:4318/v1/traces"));
        assert_eq!(s.listen.port(), 8080);
        assert_eq!(s.policy.deny_tools, ["exec*", "rm"]);
        assert_eq!(s.policy.allow_methods, ["tools/*"]);
        assert_eq!(s.allow_origin, ["http://localhost"]);
        assert_eq!(s.max_body_size, 64 * 1024);
        assert_eq!(s.request_timeout, Duration::from_secs(5));
        assert_eq!(
            s.limits,
            Limits {
                header_timeout: Duration::from_secs(2),
                idle_timeout: Duration::from_secs(3),
                max_connections: 10,
                max_connections_per_client: 2,
            }
        );
        assert_eq!(s.drain, Duration::from_secs(1));
        assert!(s.allow_remote);
        // Paths are the file's folder's.
        let (cert, _) = s.tls.clone().unwrap();
        assert!(cert.ends_with("cert.pem") && cert.is_absolute());
        assert!(s.log.unwrap().is_absolute());

        let s = settings(
            file,
            &["--deny-tool", "other", "--max-body-size", "1K", "--max-connections", "3"],
        )
        .unwrap();
        assert_eq!(s.policy.deny_tools, ["other"]);
        assert_eq!(s.policy.allow_tools, ["a*"]);
        assert_eq!((s.max_body_size, s.limits.max_connections), (1024, 3));
    }

    #[test]
    fn defaults_and_errors() {
        let s = settings("", &["--listen", "127.0.0.1:0", "--upstream", "http://x/"]).unwrap();
        assert_eq!(s.max_body_size, MAX_BODY_SIZE);
        assert_eq!(s.limits.header_timeout, HEADER_TIMEOUT);
        assert_eq!(s.limits.max_connections, MAX_CONNECTIONS);
        assert_eq!(s.drain, DRAIN);
        assert!(s.tls.is_none());
        assert!(settings("", &["--upstream", "http://x/"]).unwrap_err().contains("--listen"));
        let typo = settings("deny-tools = []", &[]).unwrap_err();
        assert!(typo.contains("unknown field"), "{typo}");
        let base = "listen = \"127.0.0.1:0\"\nupstream = \"http://x/\"\n";
        let bad = settings(&format!("{base}drain = \"soon\""), &[]).unwrap_err();
        assert!(bad.contains("drain"), "{bad}");
        let half = settings(&format!("{base}tls-cert = \"c.pem\""), &[]);
        assert!(half.unwrap_err().contains("together"));
    }
}
