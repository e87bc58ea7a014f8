//! The `lines` file format: any text file as one `line` (Binary) column, one row per
//! NDJSON-framed line, split into newline-aligned byte ranges for parallel scans.
//!
//! Two ways in: [`LinesFormatFactory`] for `CREATE EXTERNAL TABLE ... STORED AS LINES`
//! (registered by [`crate::register`]), and [`LinesTable`] for the API.

mod source;
mod table;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{GetExt, Result, Statistics};
pub use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::SessionState;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_plan::ExecutionPlan;

pub use source::LinesSource;
pub use table::{LinesOptions, LinesTable, LinesTableFactory};

/// The name of the format (`STORED AS LINES`) and of its default file extension.
pub const FORMAT_NAME: &str = "lines";

/// `_file`: the file a line comes from (its path, or its URL outside the local file system).
pub const FILE_COLUMN: &str = "_file";
/// `_line`: the line's number in its file, from 1, blank lines counted (the CLI's numbers).
pub const LINE_NUMBER_COLUMN: &str = "_line";
/// `_offset`: the byte offset of the line's first byte in its file, from 0.
pub const OFFSET_COLUMN: &str = "_offset";
/// The metadata columns, in their order after `line`.
pub const METADATA_COLUMNS: [&str; 3] = [FILE_COLUMN, LINE_NUMBER_COLUMN, OFFSET_COLUMN];

/// The format option that adds the metadata columns: `OPTIONS ('format.metadata_columns'
/// 'true')`.
pub const METADATA_OPTION: &str = "format.metadata_columns";

/// The schema of a `lines` table: one non-null `line` column of type Binary.
pub fn lines_schema() -> SchemaRef {
    static SCHEMA: LazyLock<SchemaRef> =
        LazyLock::new(|| Arc::new(Schema::new(vec![Field::new("line", DataType::Binary, false)])));
    Arc::clone(&SCHEMA)
}

/// The schema of a `lines` table with the metadata columns: `line` (Binary), `_file`
/// (Utf8), `_line` (UInt64) and `_offset` (UInt64), none null.
pub fn lines_schema_with_metadata() -> SchemaRef {
    static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
        Arc::new(Schema::new(vec![
            Field::new("line", DataType::Binary, false),
            Field::new(FILE_COLUMN, DataType::Utf8, false),
            Field::new(LINE_NUMBER_COLUMN, DataType::UInt64, false),
            Field::new(OFFSET_COLUMN, DataType::UInt64, false),
        ]))
    });
    Arc::clone(&SCHEMA)
}

/// Whether a file schema has any metadata column.
pub(crate) fn has_metadata_columns(schema: &Schema) -> bool {
    schema.fields().iter().any(|f| METADATA_COLUMNS.contains(&f.name().as_str()))
}

/// Registers `STORED AS LINES` with a session: the file format (for the listing machinery)
/// and the `LINES` table factory, which builds a [`LinesTable`].
pub fn register_format(state: &mut SessionState) -> Result<()> {
    state.register_file_format(Arc::new(LinesFormatFactory), true)?;
    state.table_factories_mut().insert(FORMAT_NAME.to_uppercase(), Arc::new(LinesTableFactory));
    Ok(())
}

/// Creates [`LinesFormat`]s; it takes no options.
#[derive(Debug, Default, Clone, Copy)]
pub struct LinesFormatFactory;

impl GetExt for LinesFormatFactory {
    fn get_ext(&self) -> String {
        FORMAT_NAME.to_string()
    }
}

impl FileFormatFactory for LinesFormatFactory {
    fn create(
        &self,
        _state: &dyn Session,
        _format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        Ok(Arc::new(LinesFormat::default()))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(LinesFormat::default())
    }
}

/// The format option naming the compression of every file (`gzip`, `zstd`, `bzip2`, `xz`,
/// `uncompressed`). Without it, each file's extension says
/// (`.gz`, `.zst`, `.bz2`, `.xz`; anything else is uncompressed).
pub const COMPRESSION_OPTION: &str = "format.compression";

/// The `lines` [`FileFormat`]: fixed schema ([`lines_schema`]), files read by
/// [`LinesSource`], compressed as [`LinesFormat::compression`] says.
#[derive(Debug, Default, Clone, Copy)]
pub struct LinesFormat {
    compression: Option<FileCompressionType>,
}

impl LinesFormat {
    /// A format whose files are all compressed with `compression`; `None`: each file's
    /// extension says ([`compression_of`]).
    pub fn new(compression: Option<FileCompressionType>) -> Self {
        Self { compression }
    }

    /// The compression of every file, or `None` (by extension).
    pub fn compression(&self) -> Option<FileCompressionType> {
        self.compression
    }
}

/// The compression a file's name says: `.gz`, `.zst` (or `.zstd`), `.bz2`, `.xz`.
pub fn compression_of(path: &str) -> FileCompressionType {
    let ext = path.rsplit_once('.').map_or("", |(_, ext)| ext);
    match ext.to_ascii_lowercase().as_str() {
        "gz" => FileCompressionType::GZIP,
        "zst" | "zstd" => FileCompressionType::ZSTD,
        "bz2" => FileCompressionType::BZIP2,
        "xz" => FileCompressionType::XZ,
        _ => FileCompressionType::UNCOMPRESSED,
    }
}

#[async_trait]
impl FileFormat for LinesFormat {
    fn get_ext(&self) -> String {
        FORMAT_NAME.to_string()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        Ok(format!("{FORMAT_NAME}{}", compression.get_ext()))
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.compression
    }

    async fn infer_schema(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        _objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        Ok(lines_schema())
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        _object: &ObjectMeta,
    ) -> Result<Statistics> {
        Ok(Statistics::new_unknown(&table_schema))
    }

    async fn create_physical_plan(
        &self,
        _state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(LinesSource::new(table_schema).with_compression(self.compression))
    }
}

impl fmt::Display for LinesFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(FORMAT_NAME)
    }
}
