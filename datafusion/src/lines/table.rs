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
use datafusion::common::{plan_err, Result};
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::TableType;
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
    locations: Vec<String>,
    inner: ListingTable,
}

impl LinesTable {
    /// A table over `locations`; every file found there is read, whatever its extension.
    pub fn try_new<S: AsRef<str>>(locations: impl IntoIterator<Item = S>) -> Result<Self> {
        let urls = locations
            .into_iter()
            .map(|l| ListingTableUrl::parse(l.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        if urls.is_empty() {
            return plan_err!("a lines table needs at least one location");
        }
        let locations = urls.iter().map(|u| u.as_str().to_string()).collect();
        let options = ListingOptions::new(Arc::new(LinesFormat)).with_file_extension("");
        let config = ListingTableConfig::new_with_multi_paths(urls)
            .with_listing_options(options)
            .with_schema(lines_schema());
        Ok(Self {
            locations,
            inner: ListingTable::try_new(config)?,
        })
    }

    /// The locations, as absolute URLs (`file:///...`): what a codec ships to re-create it.
    pub fn locations(&self) -> &[String] {
        &self.locations
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
        _state: &dyn Session,
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
        Ok(Arc::new(LinesTable::try_new(&cmd.locations)?))
    }
}
