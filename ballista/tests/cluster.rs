//! A real cluster on loopback: `rpcscan-scheduler` and two `rpcscan-executor` processes on
//! free 127.0.0.1 ports. The distributed `GROUP BY` (a shuffle) must equal the embedded run
//! for a directory, globs, a list, gzip/zstd files, a 17 MiB line (`too_large`), the
//! metadata columns and a smaller message size limit; a missing path, an empty directory
//! and a glob matching nothing must fail on both with its name, and so must a line that
//! cannot be cast to text (with its file and line); `rpcscan-sql --scheduler` must print
//! the embedded answer; tasks must have run on both executors, and every process is stopped
//! at the end, also when the test fails (the guard's `Drop`).
//!
//! A second cluster runs every `rpcscan-sql` command of the READMEs (datafusion/README.md,
//! ballista/README.md) as written, embedded and with `--scheduler`, and checks the metadata
//! columns of random rows against the files they name, through the shell on both.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use datafusion::arrow::util::pretty::pretty_format_batches;

/// Every process of the cluster; dropping it kills and reaps them all.
struct Cluster {
    children: Vec<(String, Child)>,
    logs: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
        }
        for (_, child) in &mut self.children {
            let _ = child.wait();
        }
    }
}

impl Cluster {
    fn spawn(&mut self, name: &str, exe: &str, args: &[String]) {
        let log = File::create(self.logs.join(format!("{name}.log"))).unwrap();
        let child = Command::new(exe)
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {exe}: {e}"));
        self.children.push((name.to_string(), child));
    }

    /// Stops every process and checks that none is left running.
    fn stop(mut self) {
        for (name, child) in &mut self.children {
            let _ = child.kill();
            child.wait().unwrap_or_else(|e| panic!("cannot reap {name}: {e}"));
        }
        for (name, child) in &mut self.children {
            assert!(child.try_wait().unwrap().is_some(), "{name} is still running");
        }
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.logs.join(format!("{name}.log"))).unwrap_or_default()
    }

    /// Fails if a process has exited (with its log), so a crash is not a timeout.
    fn check_alive(&mut self) {
        let mut dead = Vec::new();
        for (name, child) in &mut self.children {
            if let Ok(Some(status)) = child.try_wait() {
                dead.push((name.clone(), status));
            }
        }
        if let Some((name, status)) = dead.first() {
            panic!("{name} exited with {status}:\n{}", self.log(name));
        }
    }

    fn wait_for(&mut self, what: &str, timeout: Duration, mut ready: impl FnMut(&Cluster) -> bool) {
        let start = Instant::now();
        while !ready(self) {
            self.check_alive();
            if start.elapsed() > timeout {
                let logs: Vec<String> = self
                    .children
                    .iter()
                    .map(|(n, _)| format!("--- {n}\n{}", self.log(n)))
                    .collect();
                panic!("timed out waiting for {what}\n{}", logs.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Free ports on 127.0.0.1 (all held until every one is chosen, so they differ).
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> =
        (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    listeners.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

fn write_logs(dir: &Path) {
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","result":{},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"nope"},"id":2}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
    ];
    for file in 0..6 {
        let mut text = String::new();
        for i in 0..(200 + file * 37) {
            text.push_str(lines[(i * (file + 1)) % lines.len()]);
            text.push('\n');
        }
        std::fs::write(dir.join(format!("part-{file}.ndjson")), text).unwrap();
    }
}

const QUERY: &str = "SELECT rpc_kind(line) AS kind, rpc_invalid_reason(line) AS reason, \
                     count(*) AS n FROM {t} GROUP BY 1, 2 ORDER BY 1, 2";

/// Creates table `name` over `location` (the SQL after `LOCATION`) and runs [`QUERY`]: the
/// printed table, or the error's text.
async fn query(
    ctx: &datafusion::prelude::SessionContext,
    name: &str,
    location: &str,
) -> Result<String, String> {
    ctx.sql(&format!("CREATE EXTERNAL TABLE {name} STORED AS LINES LOCATION {location}"))
        .await
        .map_err(|e| e.to_string())?;
    collect(ctx, name).await
}

async fn collect(ctx: &datafusion::prelude::SessionContext, name: &str) -> Result<String, String> {
    let batches = ctx
        .sql(&QUERY.replace("{t}", name))
        .await
        .map_err(|e| e.to_string())?
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    Ok(pretty_format_batches(&batches).unwrap().to_string())
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

/// The total of the `n` column of a [`QUERY`] result.
fn total(table: &str) -> u64 {
    table
        .lines()
        .filter_map(|l| l.trim_end_matches('|').rsplit('|').next()?.trim().parse::<u64>().ok())
        .sum()
}

/// `rpcscan-scheduler` and two `rpcscan-executor`s on free loopback ports, their logs and
/// work directories in `dir`, once both executors have registered; and the scheduler's
/// `HOST:PORT`.
fn start_cluster(dir: &Path) -> (Cluster, String) {
    let mut cluster = Cluster { children: Vec::new(), logs: dir.to_path_buf() };
    let ports = free_ports(7);
    let scheduler_port = ports[0].to_string();
    cluster.spawn(
        "scheduler",
        env!("CARGO_BIN_EXE_rpcscan-scheduler"),
        &[
            "--bind-host",
            "127.0.0.1",
            "--external-host",
            "127.0.0.1",
            "--bind-port",
            &scheduler_port,
            "--scheduler-policy",
            "push-staged",
            "--task-distribution",
            "round-robin",
        ]
        .map(String::from),
    );
    for (e, name) in ["executor-1", "executor-2"].iter().enumerate() {
        let work = dir.join(name);
        std::fs::create_dir(&work).unwrap();
        let [flight, grpc, health] =
            [ports[1 + 3 * e], ports[2 + 3 * e], ports[3 + 3 * e]].map(|p| p.to_string());
        cluster.spawn(
            name,
            env!("CARGO_BIN_EXE_rpcscan-executor"),
            &[
                "--bind-host",
                "127.0.0.1",
                "--external-host",
                "127.0.0.1",
                "--scheduler-host",
                "127.0.0.1",
                "--scheduler-port",
                &scheduler_port,
                "--bind-port",
                &flight,
                "--bind-grpc-port",
                &grpc,
                "--bind-health-port",
                &health,
                "--scheduler-connect-timeout-seconds",
                "30",
                "--vcores",
                "1",
                "--task-scheduling-policy",
                "push-staged",
                "--work-dir",
                work.to_str().unwrap(),
            ]
            .map(String::from),
        );
    }
    cluster.wait_for("both executors to register", Duration::from_secs(60), |c| {
        ["executor-1", "executor-2"].iter().all(|n| c.log(n).contains("registration succeed"))
    });

    (cluster, format!("127.0.0.1:{scheduler_port}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_and_two_executors_on_loopback() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    write_logs(&data);
    // Not `.ndjson`: in the directory, outside the glob.
    std::fs::write(data.join("other.log"), "{}\n[]\n{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}\n")
        .unwrap();
    // part-0 compressed: by extension (gzip, zstd) and by option (gzip without `.gz`).
    let packed = tmp.path().join("packed");
    std::fs::create_dir(&packed).unwrap();
    let part0 = std::fs::read(data.join("part-0.ndjson")).unwrap();
    use rpcscan_datafusion::lines::FileCompressionType as C;
    std::fs::write(packed.join("p.ndjson.gz"), compress(&part0, C::GZIP).await).unwrap();
    std::fs::write(packed.join("p.ndjson.zst"), compress(&part0, C::ZSTD).await).unwrap();
    let other = tmp.path().join("other-packed");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("named.log"), compress(&part0, C::GZIP).await).unwrap();
    let packed_named = other;
    // One line over the CLI's default limit (16 MiB), then a small one.
    let big = tmp.path().join("big.ndjson");
    let mut text = br#"{"jsonrpc":"2.0","result":""#.to_vec();
    text.resize(text.len() + 17 * 1024 * 1024, b'a');
    text.extend_from_slice(b"\",\"id\":1}\n{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":2}\n");
    std::fs::write(&big, text).unwrap();

    let (cluster, scheduler) = start_cluster(tmp.path());
    let remote = rpcscan_ballista::remote_context(&scheduler).await.unwrap();
    let local = rpcscan_ballista::local_context().unwrap();
    let d = data.display();
    // (table, LOCATION, rows expected)
    let all: u64 = (0..6u64).map(|f| 200 + f * 37).sum();
    let cases = [
        ("dir", format!("'{d}/'"), all + 3),
        ("glob", format!("'{d}/*.ndjson'"), all),
        ("glob_one", format!("'{d}/part-[01].ndjson'"), 200 + 237),
        ("list", format!("('{d}/part-0.ndjson', '{d}/other.log')"), 200 + 3),
        ("big", format!("'{}'", big.display()), 2),
        ("gz_zst", format!("'{}/'", packed.display()), 2 * 200),
        (
            "gz_named",
            format!("'{}/named.log' OPTIONS ('format.compression' 'gzip')", packed_named.display()),
            200,
        ),
    ];
    for (name, location, rows) in &cases {
        let distributed = query(&remote, name, location).await.unwrap();
        let embedded = query(&local, name, location).await.unwrap();
        println!("{name} ({location}):\n{distributed}");
        assert_eq!(distributed, embedded, "{name}: cluster and embedded differ");
        assert_eq!(total(&distributed), *rows, "{name}: {distributed}");
    }
    let big_rows = query(&local, "big2", &format!("'{}'", big.display())).await.unwrap();
    assert!(
        big_rows.contains("| invalid | too_large | 1 |"),
        "a 17 MiB line is too_large, as in the CLI:\n{big_rows}"
    );

    // `--table` / the API: the glob must reach the executors too.
    let glob = format!("{d}/*.ndjson");
    for ctx in [&remote, &local] {
        let table = rpcscan_datafusion::LinesTable::try_new([glob.as_str()]).unwrap();
        ctx.register_table("api_glob", std::sync::Arc::new(table)).unwrap();
    }
    let distributed = collect(&remote, "api_glob").await.unwrap();
    assert_eq!(distributed, collect(&local, "api_glob").await.unwrap());
    assert_eq!(total(&distributed), all);

    // A missing path, alone or in a list: an error naming it, never an empty result.
    let missing = format!("{d}/no-such-file.ndjson");
    for (name, location) in [
        ("missing", format!("'{missing}'")),
        ("missing_in_list", format!("('{d}/part-0.ndjson', '{missing}')")),
        ("missing_dir_glob", format!("'{d}/no-such-dir/*.ndjson'")),
    ] {
        for ctx in [&remote, &local] {
            let err = query(ctx, name, &location).await.unwrap_err();
            assert!(err.contains("no-such-"), "{name}: the error names the path: {err}");
        }
    }
    // A location that matches no file (an empty directory, a glob matching nothing) too.
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    for (name, location, named) in [
        ("empty_dir", format!("'{}/empty/'", tmp.path().display()), "empty/"),
        ("no_match", format!("'{d}/*.nothing'"), "*.nothing"),
    ] {
        for ctx in [&remote, &local] {
            let err = query(ctx, name, &location).await.unwrap_err();
            assert!(err.contains(named) && err.contains("no file"), "{name}: {err}");
        }
    }
    assert!(rpcscan_datafusion::LinesTable::try_new([missing.as_str()])
        .unwrap_err()
        .to_string()
        .contains(&missing));

    // The metadata columns: the same file, line and offset for every invalid line.
    let traced = format!(
        "CREATE EXTERNAL TABLE traced STORED AS LINES LOCATION '{d}/' \
         OPTIONS ('format.metadata_columns' 'true')"
    );
    let trace = "SELECT _file, _line, _offset, rpc_invalid_reason(line) AS reason FROM traced \
                 WHERE rpc_kind(line) = 'invalid' ORDER BY 1, 2";
    let mut answers = Vec::new();
    for ctx in [&remote, &local] {
        ctx.sql(&traced).await.unwrap();
        let batches = ctx.sql(trace).await.unwrap().collect().await.unwrap();
        answers.push(pretty_format_batches(&batches).unwrap().to_string());
    }
    assert_eq!(answers[0], answers[1], "metadata columns: cluster and embedded differ");
    assert!(
        answers[0].lines().any(|l| l.contains(&format!("| {d}/other.log "))
            && l.contains("| 1     | 0       | bad_version |")),
        "{}",
        answers[0]
    );

    // A line that is not UTF-8: CAST names its file and line on the cluster too.
    let bad = tmp.path().join("bad.log");
    std::fs::write(&bad, b"{}\n\xff\n").unwrap();
    for ctx in [&remote, &local] {
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE bad STORED AS LINES LOCATION '{}' \
             OPTIONS ('format.metadata_columns' 'true')",
            bad.display()
        ))
        .await
        .unwrap();
        let err = match ctx.sql("SELECT CAST(line AS VARCHAR) FROM bad").await {
            Ok(df) => df.collect().await.map(|_| ()).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(&format!("line 2 of {} is not UTF-8", bad.display())), "{err}");
    }

    // rpcscan-sql (datafusion-cli) on the cluster prints the embedded answer.
    let shell = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rpcscan-sql"))
            .args(extra)
            .args(["-q", "--format", "csv", "--table", &format!("logs={d}/*.ndjson")])
            .arg(QUERY.replace("{t}", "logs"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let distributed = shell(&["--scheduler", &scheduler]);
    assert_eq!(distributed, shell(&[]));
    assert!(distributed.starts_with("kind,reason,n\n"), "{distributed}");

    // A smaller limit travels with the plan to the executors.
    let small_remote =
        rpcscan_ballista::remote_context_with_max_message_size(&scheduler, 60).await.unwrap();
    let small_local = rpcscan_ballista::local_context_with_max_message_size(60).unwrap();
    let distributed = query(&small_remote, "small", &format!("'{d}/part-0.ndjson'")).await.unwrap();
    let embedded = query(&small_local, "small", &format!("'{d}/part-0.ndjson'")).await.unwrap();
    println!("limit 60:\n{distributed}");
    assert_eq!(distributed, embedded);
    assert!(distributed.contains("too_large"), "{distributed}");

    // Push-staged executors log "Execute task" per task, pull-staged ones "Received task".
    let tasks = |name: &str| {
        let log = cluster.log(name);
        log.matches("Execute task").count() + log.matches("Received task").count()
    };
    let (one, two) = (tasks("executor-1"), tasks("executor-2"));
    println!("tasks: executor-1 {one}, executor-2 {two}");
    assert!(
        one > 0 && two > 0,
        "tasks per executor: {one} and {two}\n{}\n{}",
        cluster.log("executor-1"),
        cluster.log("executor-2")
    );
    cluster.stop();
}

/// The logs the README commands read: `/tmp/x.ndjson` (the sample three times, a CRLF line,
/// blank lines and a line that is not UTF-8), `/var/log/mcp/` (two files) and
/// `/var/log/mcp-archive/` (gzip files without `.gz`).
async fn readme_logs(dir: &Path) -> [(&'static str, String); 3] {
    let sample =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mcp-traffic.ndjson"))
            .unwrap();
    let mut big = sample.repeat(3);
    big.extend_from_slice(b"\n \t\n{\"jsonrpc\":\"2.0\",\"method\":\"crlf\"}\r\n\xff\xfe\n");
    big.extend_from_slice(&sample);
    std::fs::write(dir.join("x.ndjson"), &big).unwrap();
    let mcp = dir.join("mcp");
    std::fs::create_dir(&mcp).unwrap();
    std::fs::write(mcp.join("a.log"), &sample).unwrap();
    std::fs::write(mcp.join("b.log"), &big).unwrap();
    let archive = dir.join("mcp-archive");
    std::fs::create_dir(&archive).unwrap();
    use rpcscan_datafusion::lines::FileCompressionType as C;
    std::fs::write(archive.join("2026-11-30.log"), compress(&sample, C::GZIP).await).unwrap();
    std::fs::write(archive.join("2026-12-01.log"), compress(&big, C::GZIP).await).unwrap();
    [
        ("/var/log/mcp-archive/", format!("{}/", archive.display())),
        ("/var/log/mcp/", format!("{}/", mcp.display())),
        ("/tmp/x.ndjson", dir.join("x.ndjson").display().to_string()),
    ]
}

/// The fenced blocks of a Markdown file: (language, text).
fn fenced_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in markdown.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// The `target/release/rpcscan-sql` commands of a shell block, each whole: lines joined
/// while a quote is open or a line ends with `\`.
fn shell_commands(block: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut current: Option<String> = None;
    for line in block.lines() {
        let command = match current.take() {
            Some(mut command) => {
                command.push('\n');
                command.push_str(line);
                command
            }
            None if line.trim_start().starts_with("target/release/rpcscan-sql") => line.to_string(),
            None => continue,
        };
        let (mut single, mut double) = (false, false);
        for c in command.chars() {
            match c {
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                _ => {}
            }
        }
        if single || double || command.ends_with('\\') {
            current = Some(command);
        } else {
            commands.push(command);
        }
    }
    assert!(current.is_none(), "an unfinished command: {current:?}");
    commands
}

/// Runs a shell command line in `datafusion/` (where the READMEs' paths start); its
/// standard output, without the timings (`Elapsed ...`), which differ between runs.
fn run_shell(command: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../datafusion"))
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{command}\n{stdout}\n{stderr}");
    stdout.lines().filter(|l| !l.starts_with("Elapsed ")).map(|l| format!("{l}\n")).collect()
}

/// Single quotes for `sh`.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readme_commands_embedded_and_on_the_cluster() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = readme_logs(tmp.path()).await;
    let (cluster, scheduler) = start_cluster(tmp.path());
    let exe = env!("CARGO_BIN_EXE_rpcscan-sql");
    let localize = |text: &str| {
        logs.iter().fold(text.to_string(), |text, (path, generated)| text.replace(path, generated))
    };
    // (where, command as written in the README with its paths made local)
    let mut commands: Vec<(String, String)> = Vec::new();
    let mut expected: Vec<(String, String)> = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for readme in ["datafusion/README.md", "ballista/README.md"] {
        let blocks = fenced_blocks(&std::fs::read_to_string(root.join(readme)).unwrap());
        for (i, (lang, text)) in blocks.iter().enumerate() {
            if lang == "sh" {
                let found = shell_commands(text);
                // A text block right after a block of commands is what they print.
                if let (false, Some((next, output))) = (found.is_empty(), blocks.get(i + 1)) {
                    if next == "text" {
                        expected.push((found.join("\n"), output.clone()));
                    }
                }
                commands.extend(found.into_iter().map(|c| (readme.to_string(), c)));
            } else if lang == "sql" && text.contains("STORED AS LINES") {
                let command = format!("target/release/rpcscan-sql -q -c {}", quoted(text));
                commands.push((format!("{readme} (SQL)"), command));
            }
        }
    }
    assert!(commands.len() >= 6, "the READMEs' commands: {commands:#?}");
    assert!(!expected.is_empty(), "a README command with its output");

    for (readme, command) in &commands {
        let local = localize(command).replace("target/release/rpcscan-sql", exe);
        let scheduler_flag = format!("--scheduler {scheduler} ");
        let (embedded, distributed) = match local.contains("--scheduler 127.0.0.1:50050") {
            true => (
                local.replace("--scheduler 127.0.0.1:50050 ", ""),
                local.replace("--scheduler 127.0.0.1:50050 ", &scheduler_flag),
            ),
            false => (local.clone(), local.replacen(exe, &format!("{exe} {scheduler_flag}"), 1)),
        };
        let embedded_out = run_shell(&embedded);
        let distributed_out = run_shell(&distributed);
        println!("{readme}: {command}\n{embedded_out}");
        assert!(!embedded_out.trim().is_empty(), "{readme}: {command} printed nothing");
        assert_eq!(
            embedded_out, distributed_out,
            "{readme}: {command}: cluster and embedded differ"
        );
        if let Some((_, want)) = expected.iter().find(|(c, _)| c.contains(command.as_str())) {
            assert_eq!(&embedded_out, want, "{readme}: {command} prints what the README shows");
        }
    }

    // The metadata columns name the file, line and offset of each line: random rows, read
    // back from the files, through the shell embedded and on the cluster, with the option
    // in SQL and with the switch.
    let mcp = &logs[1].1;
    let query = "SELECT _file, _line, _offset, encode(line, 'hex') AS hex FROM traced \
                 ORDER BY random() LIMIT 25";
    let create = format!(
        "CREATE EXTERNAL TABLE traced STORED AS LINES LOCATION '{mcp}' \
         OPTIONS ('format.metadata_columns' 'true');"
    );
    let runs = [
        format!("{exe} -q --format csv -c {} {}", quoted(&create), quoted(query)),
        format!("{exe} -q --format csv --scheduler {scheduler} -c {} {}", quoted(&create), quoted(query)),
        format!("{exe} -q --format csv --table traced={mcp} --metadata-columns {}", quoted(query)),
        format!(
            "{exe} {} --scheduler {scheduler} --format csv --metadata-columns -q --table traced={mcp}",
            quoted(query)
        ),
    ];
    for run in &runs {
        let out = run_shell(run);
        let rows: Vec<&str> = out.lines().skip(1).collect();
        assert_eq!(rows.len(), 25, "{run}\n{out}");
        for row in rows {
            let fields: Vec<&str> = row.split(',').collect();
            let &[file, line, offset, hex] = &fields[..] else { panic!("{run}: {row}") };
            let (line, offset): (usize, usize) = (line.parse().unwrap(), offset.parse().unwrap());
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let content = std::fs::read(file).unwrap();
            assert!(content[offset..].starts_with(&bytes), "{run}: {row}: not at its offset");
            let after = &content[offset + bytes.len()..];
            assert!(
                after.is_empty() || after.starts_with(b"\n") || after.starts_with(b"\r\n"),
                "{run}: {row}: the whole line"
            );
            let newlines = content[..offset].iter().filter(|&&b| b == b'\n').count();
            assert_eq!(line, newlines + 1, "{run}: {row}: its line number");
        }
    }
    cluster.stop();
}
