//! [`LinesTable`]: the table of one or more `lines` locations, and the `LINES` table
//! factory behind `CREATE EXTERNAL TABLE ... STORED AS LINES`.
//!
//! It is a thin wrapper over DataFusion's `ListingTable` (which does the listing, the range
//! splitting and the scan). The wrapper exists so that distributed engines can recognise
//! the table and ship it by its locations: `datafusion-proto` serialises a `ListingTable`
//! only for its built-in formats.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{plan_err, DataFusionError, Result};
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::TableType;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;

use super::{
    lines_schema, lines_schema_with_metadata, LinesFormat, COMPRESSION_OPTION, METADATA_OPTION,
};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;

/// How a [`LinesTable`] reads its files (`CREATE EXTERNAL TABLE ... OPTIONS (...)`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LinesOptions {
    metadata_columns: bool,
    compression: Option<FileCompressionType>,
}

impl LinesOptions {
    /// Adds (or not) the metadata columns `_file`, `_line` and `_offset` after `line`
    /// ([`super::METADATA_COLUMNS`]). Off by default: a table with them reads each file
    /// whole (line numbers count from the file's start), so one large file is no longer
    /// split across cores.
    pub fn with_metadata_columns(mut self, on: bool) -> Self {
        self.metadata_columns = on;
        self
    }

    /// Whether the table has the metadata columns.
    pub fn metadata_columns(&self) -> bool {
        self.metadata_columns
    }

    /// Reads every file as compressed with `compression` (`None`, the default: each file's
    /// extension says, [`super::compression_of`]). A compressed file is read whole by one
    /// task, never split into byte ranges; `_offset` then counts decompressed bytes.
    pub fn with_compression(mut self, compression: Option<FileCompressionType>) -> Self {
        self.compression = compression;
        self
    }

    /// The compression of every file, or `None` (by extension).
    pub fn compression(&self) -> Option<FileCompressionType> {
        self.compression
    }

    /// The options of `CREATE EXTERNAL TABLE ... OPTIONS (...)`: `format.metadata_columns`
    /// (`true` or `false`). Any other `format.` option is an error naming the known ones.
    pub fn from_table_options<'a>(
        options: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<Self> {
        let mut out = Self::default();
        for (key, value) in options {
            match key.as_str() {
                METADATA_OPTION => {
                    out.metadata_columns = match value.to_ascii_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return plan_err!(
                                "{METADATA_OPTION} is 'true' or 'false', not '{value}'"
                            )
                        }
                    }
                }
                COMPRESSION_OPTION => {
                    out.compression = match value.parse::<FileCompressionType>() {
                        Ok(c) => Some(c),
                        Err(_) => {
                            return plan_err!(
                                "{COMPRESSION_OPTION} is gzip, zstd, bzip2, xz or uncompressed, \
                                 not '{value}'"
                            )
                        }
                    }
                }
                other if other.starts_with("format.") => {
                    return plan_err!(
                        "unknown option '{other}' for a lines table (known: {METADATA_OPTION}, \
                         {COMPRESSION_OPTION})"
                    )
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// The options as `key=value` lines (what a plan codec ships), read back by
    /// [`LinesOptions::decode`].
    pub fn encode(&self) -> String {
        let mut text = format!("{METADATA_OPTION}={}", self.metadata_columns);
        if let Some(c) = self.compression {
            let name = datafusion::common::parsers::CompressionTypeVariant::from(c);
            text.push_str(&format!("\n{COMPRESSION_OPTION}={name}"));
        }
        text
    }

    /// Reads [`LinesOptions::encode`]'s text.
    pub fn decode(text: &str) -> Result<Self> {
        let pairs: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Self::from_table_options(pairs.iter().map(|(k, v)| (k, v)))
    }
}

/// A table whose rows are the lines of the files at its locations (files, directories or
/// globs, local paths or object store URLs), with the single `line` column.
///
/// ```no_run
/// # fn demo(ctx: &datafusion::prelude::SessionContext) -> datafusion::error::Result<()> {
/// let logs = rpcscan_datafusion::LinesTable::try_new(["/var/log/mcp/"])?;
/// ctx.register_table("logs", std::sync::Arc::new(logs))?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LinesTable {
    locations: Vec<ListingTableUrl>,
    options: LinesOptions,
    inner: ListingTable,
}

impl LinesTable {
    /// A table over `locations`; every file found there is read, whatever its extension.
    ///
    /// A local location that matches no file (a path that does not exist, an empty
    /// directory, a glob that matches nothing) is an error naming it: a typo must not read
    /// as an empty table. An empty file is a location with a file: an empty table.
    pub fn try_new<S: AsRef<str>>(locations: impl IntoIterator<Item = S>) -> Result<Self> {
        Self::try_new_with_options(locations, LinesOptions::default())
    }

    /// [`LinesTable::try_new`] with options (the metadata columns, ...).
    pub fn try_new_with_options<S: AsRef<str>>(
        locations: impl IntoIterator<Item = S>,
        options: LinesOptions,
    ) -> Result<Self> {
        let urls = locations
            .into_iter()
            .map(|l| {
                let l = l.as_ref();
                ListingTableUrl::parse(l)
                    .map_err(|e| DataFusionError::Plan(format!("bad location '{l}': {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Self::try_from_urls(urls, options)
    }

    /// A table over parsed locations (each a URL and an optional glob), checked like
    /// [`LinesTable::try_new`]'s.
    pub fn try_from_urls(urls: Vec<ListingTableUrl>, options: LinesOptions) -> Result<Self> {
        if urls.is_empty() {
            return plan_err!("a lines table needs at least one location");
        }
        for url in &urls {
            check_has_file(url)?;
        }
        let listing = ListingOptions::new(Arc::new(LinesFormat::new(options.compression)))
            .with_file_extension("");
        let schema =
            if options.metadata_columns { lines_schema_with_metadata() } else { lines_schema() };
        let config = ListingTableConfig::new_with_multi_paths(urls.clone())
            .with_listing_options(listing)
            .with_schema(schema);
        Ok(Self { locations: urls, options, inner: ListingTable::try_new(config)? })
    }

    /// The locations: absolute URLs (`file:///...`) with their globs
    /// ([`ListingTableUrl::get_glob`]), what a codec ships to re-create the table.
    pub fn locations(&self) -> &[ListingTableUrl] {
        &self.locations
    }

    /// The table's options.
    pub fn options(&self) -> &LinesOptions {
        &self.options
    }

    /// Fails with a plain "not supported" error naming the scheme when a location's object
    /// store (`s3://`, `gs://`, ...) is not registered with `env`, instead of failing later
    /// inside the scan.
    pub fn check_object_stores(&self, env: &RuntimeEnv) -> Result<()> {
        for url in &self.locations {
            if env.object_store(url.object_store()).is_err() {
                return plan_err!(
                    "location '{}': the '{}' scheme is not supported (no object store is \
                     registered for it; local paths and file:// URLs are)",
                    url.as_str(),
                    url.scheme()
                );
            }
        }
        Ok(())
    }
}

/// A local location must match a file: a missing path, an empty directory or a glob that
/// matches nothing would otherwise list as an empty table. Subdirectories are searched even
/// when the session ignores them (`listing_table_ignore_subdirectory`), so this check never
/// rejects a table the listing could read; [`LinesTable::scan`]'s check catches the rest.
fn check_has_file(url: &ListingTableUrl) -> Result<()> {
    if url.scheme() != "file" {
        return Ok(());
    }
    let Ok(path) = url.get_url().to_file_path() else {
        return plan_err!("location '{}' is not a local path", url.as_str());
    };
    let shown = shown(url);
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) => return plan_err!("lines table location '{shown}': {e}"),
    };
    if meta.is_file() || has_matching_file(&path, url)? {
        return Ok(());
    }
    match url.get_glob() {
        Some(_) => plan_err!("lines table location '{shown}': the glob matches no file"),
        None => plan_err!("lines table location '{shown}': the directory holds no file"),
    }
}

/// How a location is named in errors: the path the user wrote (with its glob) for local
/// files, the URL otherwise.
fn shown(url: &ListingTableUrl) -> String {
    match (url.scheme(), url.get_url().to_file_path()) {
        ("file", Ok(path)) => match url.get_glob() {
            Some(glob) => format!("{}/{glob}", path.display().to_string().trim_end_matches('/')),
            None => path.display().to_string(),
        },
        _ => url.as_str().to_string(),
    }
}

/// Whether `dir` (searched depth first, stopping at the first hit) holds a file whose path
/// below `dir` matches the location's glob (any file when it has none).
fn has_matching_file(dir: &std::path::Path, url: &ListingTableUrl) -> Result<bool> {
    let glob = url.get_glob().as_ref();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries = std::fs::read_dir(&next).map_err(|e| {
            DataFusionError::Plan(format!("lines table location '{}': {e}", next.display()))
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            // Followed like the listing follows them: a link to a file is a file.
            if path.is_dir() {
                pending.push(path);
            } else if path.is_file() {
                let Ok(relative) = path.strip_prefix(dir) else { continue };
                let relative = relative.to_string_lossy();
                if glob.is_none_or(|g| g.matches(&relative)) {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

#[async_trait]
impl TableProvider for LinesTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self.inner.scan(state, projection, filters, limit).await?;
        // Nothing to read: empty files (the listing leaves them out), or no file at all
        // (files removed since the table was made, or a location on an object store, which
        // creation does not list). Only the first is an empty table.
        if plan.downcast_ref::<EmptyExec>().is_some() && limit != Some(0) {
            for url in &self.locations {
                let store = state.runtime_env().object_store(url)?;
                let mut files = url.list_all_files(state, store.as_ref(), "").await?;
                if files.next().await.transpose()?.is_some() {
                    return Ok(plan);
                }
            }
            let locations: Vec<String> =
                self.locations.iter().map(|l| format!("'{}'", shown(l))).collect();
            return plan_err!("lines table location {}: no file to read", locations.join(", "));
        }
        Ok(plan)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Unsupported; filters.len()])
    }
}

/// The `LINES` table factory: `CREATE EXTERNAL TABLE t STORED AS LINES LOCATION '...'`.
#[derive(Debug, Default, Clone, Copy)]
pub struct LinesTableFactory;

#[async_trait]
impl TableProviderFactory for LinesTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        if !cmd.table_partition_cols.is_empty() {
            return plan_err!("lines tables have no partition columns");
        }
        let options = LinesOptions::from_table_options(&cmd.options)?;
        let declared = cmd.schema.fields();
        if !declared.is_empty() && (declared.len() != 1 || declared[0].name() != "line") {
            return plan_err!(
                "a lines table has exactly one column, `line` (Binary), plus the metadata \
                 columns with OPTIONS ('{METADATA_OPTION}' 'true'); omit the column list"
            );
        }
        let table = LinesTable::try_new_with_options(&cmd.locations, options)?;
        table.check_object_stores(state.runtime_env())?;
        Ok(Arc::new(table))
    }
}
