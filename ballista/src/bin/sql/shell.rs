//! Running scripts and the interactive prompt through datafusion-cli, one statement at a
//! time (see `script`), on a session that puts the `lines` options datafusion-cli cannot
//! plan back into `CREATE EXTERNAL TABLE ... STORED AS LINES`.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use datafusion::dataframe::DataFrame;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionState;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{DdlStatement, LogicalPlan};
use datafusion::object_store::ObjectStore;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::{dialect_from_str, Dialect};
use datafusion_cli::cli_context::CliSessionContext;
use datafusion_cli::command::{Command, OutputFormat};
use datafusion_cli::exec;
use datafusion_cli::helper::CliHelper;
use datafusion_cli::print_options::PrintOptions;
use rustyline::error::ReadlineError;

use crate::script;

/// The session datafusion-cli runs statements on: the embedded or Ballista session, plus the
/// `lines` options of the `CREATE EXTERNAL TABLE` being run.
pub struct Shell {
    ctx: SessionContext,
    pending: Mutex<Option<HashMap<String, String>>>,
}

/// What happens after a statement of a script fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// The script ends there (`-c`, `-f` and piped input without `--keep-going`).
    Stop,
    /// The error is printed and the next statement runs.
    KeepGoing,
}

impl Shell {
    /// A shell over `ctx`, with rpcscan's functions and `STORED AS LINES` registered.
    pub fn new(ctx: SessionContext) -> Self {
        Self { ctx, pending: Mutex::new(None) }
    }

    fn dialect(&self) -> Result<Box<dyn Dialect>> {
        let state = self.ctx.state();
        let name = &state.config().options().sql_parser.dialect;
        dialect_from_str(name)
            .ok_or_else(|| DataFusionError::Plan(format!("unsupported SQL dialect {name}")))
    }

    fn set_pending(&self, options: Option<HashMap<String, String>>) {
        *self.pending.lock().unwrap_or_else(PoisonError::into_inner) = options;
    }

    /// Runs one statement through datafusion-cli (which prints its result).
    async fn statement(&self, text: &str, print_options: &PrintOptions) -> Result<()> {
        let (text, options) = match script::take_lines_options(text, self.dialect()?.as_ref()) {
            Some((text, options)) => (text, Some(options)),
            None => (text.to_string(), None),
        };
        self.set_pending(options);
        let result = exec::exec_from_commands(self, vec![text], print_options).await;
        // Not left for a later statement when this one failed before its plan ran.
        self.set_pending(None);
        result
    }

    /// Runs the statements of `text`; `source` names it in error messages (a file, with the
    /// statement's line). Returns how many statements failed: with [`OnError::Stop`], 0 or
    /// 1, as it stops at the first; each error is printed on standard error.
    pub async fn script(
        &self,
        text: &str,
        source: Option<&str>,
        print_options: &PrintOptions,
        on_error: OnError,
    ) -> Result<usize> {
        let mut failed = 0;
        for statement in script::split(text, self.dialect()?.as_ref()) {
            if let Err(e) = self.statement(&statement.text, print_options).await {
                failed += 1;
                match source {
                    Some(source) => eprintln!("Error: {source}:{}: {e}", statement.line),
                    None => eprintln!("Error: {e}"),
                }
                if on_error == OnError::Stop {
                    break;
                }
            }
        }
        Ok(failed)
    }

    /// Runs the file at `path` as a script.
    pub async fn file(
        &self,
        path: &str,
        print_options: &PrintOptions,
        on_error: OnError,
    ) -> Result<usize> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataFusionError::Execution(format!("cannot read {path}: {e}")))?;
        self.script(&text, Some(path), print_options, on_error).await
    }

    /// The prompt on a terminal, with datafusion-cli's line editor, history (`.history` in
    /// the working directory) and `\` commands. Any other standard input is read whole and
    /// run as a script, so a script piped in fails like one given with `-f`.
    pub async fn interactive(
        &self,
        print_options: &mut PrintOptions,
        on_error: OnError,
    ) -> Result<usize> {
        if !std::io::stdin().is_terminal() {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|e| {
                DataFusionError::Execution(format!("cannot read standard input: {e}"))
            })?;
            return self.script(&text, Some("<stdin>"), print_options, on_error).await;
        }
        self.prompt(print_options).await.map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(0)
    }

    async fn prompt(&self, print_options: &mut PrintOptions) -> rustyline::Result<()> {
        let dialect = || self.ctx.state().config().options().sql_parser.dialect;
        let mut editor: rustyline::Editor<CliHelper, rustyline::history::DefaultHistory> =
            rustyline::Editor::new()?;
        editor.set_helper(Some(CliHelper::new(&dialect(), print_options.color)));
        editor.load_history(".history").ok();
        loop {
            let line = match editor.readline("> ") {
                Ok(line) => line,
                Err(ReadlineError::Interrupted) => {
                    println!("^C");
                    if let Some(helper) = editor.helper() {
                        helper.reset_hint();
                    }
                    continue;
                }
                Err(ReadlineError::Eof) => {
                    println!("\\q");
                    break;
                }
                Err(e) => {
                    eprintln!("Error: {e}");
                    break;
                }
            };
            editor.add_history_entry(line.trim_end())?;
            if let Some(command) = line.strip_prefix('\\') {
                if !self.backslash(command, print_options).await {
                    break;
                }
                continue;
            }
            tokio::select! {
                _ = self.script(&line, None, print_options, OnError::KeepGoing) => {}
                _ = tokio::signal::ctrl_c() => println!("^C"),
            }
            // `SET datafusion.sql_parser.dialect` changes how the next input is highlighted.
            if let Some(helper) = editor.helper_mut() {
                helper.set_dialect(&dialect());
            }
        }
        editor.save_history(".history")
    }

    /// A `\` command; `false` for `\q`.
    async fn backslash(&self, command: &str, print_options: &mut PrintOptions) -> bool {
        let command = command.split_whitespace().collect::<Vec<_>>().join(" ");
        let Ok(parsed) = command.parse::<Command>() else {
            eprintln!(
                "'\\{command}' is not a valid command, you can use '\\?' to see all commands"
            );
            return true;
        };
        let result = match parsed {
            Command::Quit => return false,
            Command::OutputFormat(None) => {
                println!("Output format is {:?}.", print_options.format);
                Ok(())
            }
            Command::OutputFormat(Some(format)) => match format.parse::<OutputFormat>() {
                Ok(format) => format.execute(print_options),
                Err(_) => {
                    eprintln!("'\\{command}' is not a valid command, you can use '\\?' to see all commands");
                    Ok(())
                }
            },
            // Through our script runner, so that `lines` options work in included files.
            Command::Include(Some(path)) => {
                self.file(&path, print_options, OnError::KeepGoing).await.map(|_| ())
            }
            other => other.execute(self, print_options).await,
        };
        if let Err(e) = result {
            eprintln!("Error: {e}");
        }
        true
    }
}

#[async_trait]
impl CliSessionContext for Shell {
    fn task_ctx(&self) -> Arc<TaskContext> {
        self.ctx.task_ctx()
    }

    fn session_state(&self) -> SessionState {
        self.ctx.state()
    }

    fn register_object_store(
        &self,
        url: &url::Url,
        object_store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore + 'static>> {
        self.ctx.register_object_store(url, object_store)
    }

    fn register_table_options_extension_from_scheme(&self, scheme: &str) {
        CliSessionContext::register_table_options_extension_from_scheme(&self.ctx, scheme)
    }

    async fn execute_logical_plan(&self, mut plan: LogicalPlan) -> Result<DataFrame> {
        if let LogicalPlan::Ddl(DdlStatement::CreateExternalTable(create)) = &mut plan {
            // Only the statement `Shell::statement` took the options from comes here while
            // they are pending; the check keeps them off any other table all the same.
            if !create.file_type.eq_ignore_ascii_case(rpcscan_datafusion::lines::FORMAT_NAME) {
                return self.ctx.execute_logical_plan(plan).await;
            }
            let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(options) = pending {
                create.options.extend(options);
            }
        }
        self.ctx.execute_logical_plan(plan).await
    }
}
