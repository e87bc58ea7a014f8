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
use datafusion::physical_plan::ExecutionPlan;

use super::{lines_schema, LinesFormat};

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
    inner: ListingTable,
}

impl LinesTable {
    /// A table over `locations`; every file found there is read, whatever its extension.
    ///
    /// A local path that does not exist (a file, a directory, or the directory part of a
    /// glob) is an error naming it: a typo must not read as an empty table.
    pub fn try_new<S: AsRef<str>>(locations: impl IntoIterator<Item = S>) -> Result<Self> {
        let urls = locations
            .into_iter()
            .map(|l| {
                let l = l.as_ref();
                ListingTableUrl::parse(l)
                    .map_err(|e| DataFusionError::Plan(format!("bad location '{l}': {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Self::try_from_urls(urls)
    }

    /// A table over parsed locations (each a URL and an optional glob), checked like
    /// [`LinesTable::try_new`]'s.
    pub fn try_from_urls(urls: Vec<ListingTableUrl>) -> Result<Self> {
        if urls.is_empty() {
            return plan_err!("a lines table needs at least one location");
        }
        for url in &urls {
            check_exists(url)?;
        }
        let options = ListingOptions::new(Arc::new(LinesFormat)).with_file_extension("");
        let config = ListingTableConfig::new_with_multi_paths(urls.clone())
            .with_listing_options(options)
            .with_schema(lines_schema());
        Ok(Self {
            locations: urls,
            inner: ListingTable::try_new(config)?,
        })
    }

    /// The locations: absolute URLs (`file:///...`) with their globs
    /// ([`ListingTableUrl::get_glob`]), what a codec ships to re-create the table.
    pub fn locations(&self) -> &[ListingTableUrl] {
        &self.locations
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

/// A local location must exist: a missing file or directory would otherwise list as empty.
fn check_exists(url: &ListingTableUrl) -> Result<()> {
    if url.scheme() != "file" {
        return Ok(());
    }
    let Ok(path) = url.get_url().to_file_path() else {
        return plan_err!("location '{}' is not a local path", url.as_str());
    };
    match std::fs::metadata(&path) {
        Ok(_) => Ok(()),
        Err(e) => plan_err!("lines table location '{}': {e}", path.display()),
    }
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
        self.inner.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![
            TableProviderFilterPushDown::Unsupported;
            filters.len()
        ])
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
        let declared = cmd.schema.fields();
        if !declared.is_empty() && (declared.len() != 1 || declared[0].name() != "line") {
            return plan_err!(
                "a lines table has exactly one column, `line` (Binary); omit the column list"
            );
        }
        let table = LinesTable::try_new(&cmd.locations)?;
        table.check_object_stores(state.runtime_env())?;
        Ok(Arc::new(table))
    }
}
