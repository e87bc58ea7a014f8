//! Reading `lines` files: the [`FileSource`] and its opener, which turns a newline-aligned
//! byte range of a file into batches of the `line` column.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, RecordBatch, RecordBatchOptions, StringBuilder, UInt64Builder,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::physical_plan::{
    FileOpenFuture, FileOpener, FileScanConfig, FileSource,
};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::object_store::{GetOptions, ObjectStore};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::PhysicalExpr;
use datafusion_datasource::boundary_stream::AlignedBoundaryStream;
use datafusion_datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion_datasource::PartitionedFile;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

/// Rows per batch when the session gives no batch size.
const DEFAULT_BATCH_SIZE: usize = 8192;

/// The [`FileSource`] of the `lines` format. Byte ranges are allowed: each range starts
/// after the first `\n` at or after its start and ends with the line holding its last byte,
/// as DataFusion's NDJSON reader does. A table with the metadata columns
/// ([`super::METADATA_COLUMNS`]) reads each file whole, since a line number counts from
/// the file's start.
#[derive(Clone)]
pub struct LinesSource {
    table_schema: TableSchema,
    compression: Option<FileCompressionType>,
    batch_size: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
    projection: SplitProjection,
}

impl LinesSource {
    /// A source over `table_schema` (the `line` column plus any partition columns).
    pub fn new(table_schema: impl Into<TableSchema>) -> Self {
        let table_schema = table_schema.into();
        Self {
            projection: SplitProjection::unprojected(&table_schema),
            table_schema,
            compression: None,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl LinesSource {
    /// Reads every file as compressed with `compression`; `None` (the default): each file's
    /// extension says ([`super::compression_of`]).
    pub fn with_compression(mut self, compression: Option<FileCompressionType>) -> Self {
        self.compression = compression;
        self
    }

    /// The compression of every file, or `None` (by extension).
    pub fn compression(&self) -> Option<FileCompressionType> {
        self.compression
    }

    /// Whether the table has the metadata columns (`_file`, `_line`, `_offset`).
    fn has_metadata(&self) -> bool {
        super::has_metadata_columns(self.table_schema.file_schema())
    }
}

impl FileSource for LinesSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        _partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema();
        let projected = Arc::new(file_schema.project(&self.projection.file_indices)?);
        // `_file` is the path for local files, the URL for other stores.
        let store_url = base_config.object_store_url.as_str();
        let file_prefix =
            if store_url == "file:///" { "/".to_string() } else { store_url.to_string() };
        let opener: Arc<dyn FileOpener> = Arc::new(LinesOpener {
            batch_size: self.batch_size.unwrap_or(DEFAULT_BATCH_SIZE).max(1),
            projected_schema: projected,
            object_store,
            file_prefix,
            compression: self.compression,
        });
        ProjectionOpener::try_new(self.projection.clone(), opener, file_schema)
    }

    fn supports_repartitioning(&self) -> bool {
        // A compressed file has no byte ranges; files compressed by extension are read
        // whole by the range that starts at 0 (the opener skips the others).
        !self.has_metadata() && !self.compression.is_some_and(|c| c.is_compressed())
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut source = self.clone();
        source.batch_size = Some(batch_size);
        Arc::new(source)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        let mut source = self.clone();
        let merged = self.projection.source.try_merge(projection)?;
        source.projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(source)))
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        super::FORMAT_NAME
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)
    }
}

/// Opens one file (or one byte range of it) and streams its lines.
struct LinesOpener {
    batch_size: usize,
    /// The columns read (any of `line` and the metadata columns, or none: `count(*)`).
    projected_schema: SchemaRef,
    object_store: Arc<dyn ObjectStore>,
    /// What goes before an object's location in `_file`.
    file_prefix: String,
    /// Every file's compression, or `None` (by extension).
    compression: Option<FileCompressionType>,
}

impl FileOpener for LinesOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let store = Arc::clone(&self.object_store);
        let schema = Arc::clone(&self.projected_schema);
        let batch_size = self.batch_size;
        let file_name = format!("{}{}", self.file_prefix, file.object_meta.location);
        let compression = self
            .compression
            .unwrap_or_else(|| super::compression_of(file.object_meta.location.as_ref()));
        Ok(Box::pin(async move {
            let size = file.object_meta.size;
            let (start, end) = match &file.range {
                Some(range) => (
                    u64::try_from(range.start).map_err(|_| {
                        DataFusionError::Execution(format!("bad range start {}", range.start))
                    })?,
                    u64::try_from(range.end).map_err(|_| {
                        DataFusionError::Execution(format!("bad range end {}", range.end))
                    })?,
                ),
                None => (0, size),
            };
            let mut batcher = Batcher::new(schema, batch_size);
            if batcher.needs_position() {
                if start != 0 {
                    return Err(DataFusionError::Execution(format!(
                        "{file_name}: the metadata columns need whole files, got a range \
                         starting at byte {start}"
                    )));
                }
                batcher = batcher.with_file(file_name);
            }
            if compression.is_compressed() {
                // One compressed stream per file: the range at 0 reads it all, others none.
                if start != 0 {
                    return Ok(futures::stream::empty().boxed());
                }
                let bytes = store
                    .get_opts(&file.object_meta.location, GetOptions::default())
                    .await?
                    .into_stream()
                    .map(|chunk| chunk.map_err(DataFusionError::from))
                    .boxed();
                let bytes = compression.convert_stream(bytes)?;
                return Ok(LineBatches::new(bytes, batcher).boxed());
            }
            let bytes = AlignedBoundaryStream::new(
                store,
                file.object_meta.location.clone(),
                start,
                end,
                size,
                b'\n',
            )
            .await?
            .map(|chunk| chunk.map_err(DataFusionError::from))
            .boxed();
            Ok(LineBatches::new(bytes, batcher).boxed())
        }))
    }
}

/// Splits a byte stream into lines (NDJSON framing rules) and groups them into batches.
pub(crate) struct LineBatches {
    input: BoxStream<'static, Result<Bytes>>,
    batcher: Batcher,
    ready: VecDeque<RecordBatch>,
    done: bool,
}

impl LineBatches {
    pub(crate) fn new(input: BoxStream<'static, Result<Bytes>>, batcher: Batcher) -> Self {
        Self { input, batcher, ready: VecDeque::new(), done: false }
    }
}

impl Stream for LineBatches {
    type Item = Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(batch) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(batch)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match ready!(this.input.poll_next_unpin(cx)) {
                Some(Ok(chunk)) => {
                    if let Err(e) = this.batcher.digest(&chunk, &mut this.ready) {
                        this.done = true;
                        return Poll::Ready(Some(Err(e)));
                    }
                }
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                None => {
                    this.done = true;
                    if let Err(e) = this.batcher.finish(&mut this.ready) {
                        return Poll::Ready(Some(Err(e)));
                    }
                }
            }
        }
    }
}

/// Line framing and batch building, independent of where the bytes come from.
pub(crate) struct Batcher {
    schema: SchemaRef,
    batch_size: usize,
    /// The start of a line whose `\n` has not arrived yet.
    partial: Vec<u8>,
    /// One builder per column of `schema`, in its order.
    columns: Vec<Column>,
    rows: usize,
    /// `_file`'s value.
    file: String,
    /// Offset of the next byte to arrive, from the start of the file (whole files only).
    pos: u64,
    /// Offset of the current line's first byte.
    line_start: u64,
    /// Number of the current line, from 1, counting blank lines too (the CLI's numbers).
    line_no: u64,
}

/// The builder of one output column.
enum Column {
    Line(BinaryBuilder),
    File(StringBuilder),
    LineNo(UInt64Builder),
    Offset(UInt64Builder),
}

impl Batcher {
    pub(crate) fn new(schema: SchemaRef, batch_size: usize) -> Self {
        let columns = schema
            .fields()
            .iter()
            .map(|f| match f.name().as_str() {
                super::FILE_COLUMN => Column::File(StringBuilder::new()),
                super::LINE_NUMBER_COLUMN => Column::LineNo(UInt64Builder::new()),
                super::OFFSET_COLUMN => Column::Offset(UInt64Builder::new()),
                _ => Column::Line(BinaryBuilder::new()),
            })
            .collect();
        Self {
            schema,
            batch_size,
            partial: Vec::new(),
            columns,
            rows: 0,
            file: String::new(),
            pos: 0,
            line_start: 0,
            line_no: 1,
        }
    }

    /// Whether a metadata column is read (then the input must be a whole file).
    pub(crate) fn needs_position(&self) -> bool {
        self.columns.iter().any(|c| !matches!(c, Column::Line(_)))
    }

    /// Sets `_file`'s value.
    pub(crate) fn with_file(mut self, file: String) -> Self {
        self.file = file;
        self
    }

    pub(crate) fn digest(
        &mut self,
        mut chunk: &[u8],
        out: &mut VecDeque<RecordBatch>,
    ) -> Result<()> {
        while let Some(nl) = memchr::memchr(b'\n', chunk) {
            if self.partial.is_empty() {
                self.push_line(&chunk[..nl], out)?;
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..nl]);
                self.push_line(&line, out)?;
                line.clear();
                self.partial = line;
            }
            self.pos += nl as u64 + 1;
            self.line_start = self.pos;
            self.line_no += 1;
            chunk = &chunk[nl + 1..];
        }
        self.pos += chunk.len() as u64;
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    pub(crate) fn finish(&mut self, out: &mut VecDeque<RecordBatch>) -> Result<()> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.push_line(&line, out)?;
        }
        self.flush(out)
    }

    fn push_line(&mut self, line: &[u8], out: &mut VecDeque<RecordBatch>) -> Result<()> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // NDJSON framing (docs/spec.md §7): blank lines are not messages.
        if line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            return Ok(());
        }
        for column in &mut self.columns {
            match column {
                Column::Line(b) => b.append_value(line),
                Column::File(b) => b.append_value(&self.file),
                Column::LineNo(b) => b.append_value(self.line_no),
                Column::Offset(b) => b.append_value(self.line_start),
            }
        }
        self.rows += 1;
        if self.rows >= self.batch_size {
            self.flush(out)?;
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut VecDeque<RecordBatch>) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let columns: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|c| -> ArrayRef {
                match c {
                    Column::Line(b) => Arc::new(b.finish()),
                    Column::File(b) => Arc::new(b.finish()),
                    Column::LineNo(b) => Arc::new(b.finish()),
                    Column::Offset(b) => Arc::new(b.finish()),
                }
            })
            .collect();
        let batch = RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(self.rows)),
        )?;
        self.rows = 0;
        out.push_back(batch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::AsArray;

    fn split(input: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut batcher = Batcher::new(super::super::lines_schema(), 2);
        let mut out = VecDeque::new();
        for chunk in input {
            batcher.digest(chunk, &mut out).unwrap();
        }
        batcher.finish(&mut out).unwrap();
        out.iter()
            .flat_map(|b| {
                b.column(0)
                    .as_binary::<i32>()
                    .iter()
                    .map(|v| v.unwrap().to_vec())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn framing_follows_ndjson_rules() {
        // (chunks as they arrive, lines that come out)
        type Case<'a> = (&'a [&'a [u8]], &'a [&'a [u8]]);
        let cases: &[Case] = &[
            (&[b"a\nb\n"], &[b"a", b"b"]),
            (&[b"a\r\nb"], &[b"a", b"b"]), // CRLF; last line without \n kept
            (&[b"a\n\n \t\r\n\nb\n"], &[b"a", b"b"]), // blank lines skipped
            (&[b"ab", b"c\nd", b"e\n"], &[b"abc", b"de"]), // lines across chunks
            (&[b"x\r\r\n"], &[b"x\r"]),    // only one \r removed
            (&[b"\xff\n"], &[b"\xff"]),    // bytes kept as they are
        ];
        for (input, want) in cases {
            let want: Vec<Vec<u8>> = want.iter().map(|w| w.to_vec()).collect();
            assert_eq!(split(input), want, "{input:?}");
        }
    }

    #[test]
    fn metadata_counts_every_line_and_byte() {
        let schema = super::super::lines_schema_with_metadata();
        let mut batcher = Batcher::new(schema, 100).with_file("/f".to_string());
        assert!(batcher.needs_position());
        let mut out = VecDeque::new();
        for chunk in [&b"a\r\n\n  \nb"[..], b"c\n", b"d"] {
            batcher.digest(chunk, &mut out).unwrap();
        }
        batcher.finish(&mut out).unwrap();
        let batch = &out[0];
        let u64s = |i: usize| -> Vec<u64> {
            batch
                .column(i)
                .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
                .values()
                .to_vec()
        };
        assert_eq!(batch.num_rows(), 3);
        assert_eq!(batch.column(1).as_string::<i32>().value(2), "/f");
        assert_eq!(u64s(2), [1, 4, 5], "line numbers count blank lines");
        assert_eq!(u64s(3), [0, 7, 10], "byte offsets of each line's start");
    }
}
