//! Reading `lines` files: the [`FileSource`] and its opener, which turns a newline-aligned
//! byte range of a file into batches of the `line` column.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use datafusion::arrow::array::{ArrayRef, BinaryBuilder, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::physical_plan::{
    FileOpenFuture, FileOpener, FileScanConfig, FileSource,
};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::object_store::ObjectStore;
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

/// The [`FileSource`] of the `lines` format. Byte ranges are allowed (the default
/// `supports_repartitioning`): each range starts after the first `\n` at or after its start
/// and ends with the line holding its last byte, as DataFusion's NDJSON reader does.
#[derive(Clone)]
pub struct LinesSource {
    table_schema: TableSchema,
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
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl FileSource for LinesSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        _base_config: &FileScanConfig,
        _partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema();
        let projected = Arc::new(file_schema.project(&self.projection.file_indices)?);
        let opener: Arc<dyn FileOpener> = Arc::new(LinesOpener {
            batch_size: self.batch_size.unwrap_or(DEFAULT_BATCH_SIZE).max(1),
            projected_schema: projected,
            object_store,
        });
        ProjectionOpener::try_new(self.projection.clone(), opener, file_schema)
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
    /// Either the `line` column or no column at all (`count(*)`).
    projected_schema: SchemaRef,
    object_store: Arc<dyn ObjectStore>,
}

impl FileOpener for LinesOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let store = Arc::clone(&self.object_store);
        let schema = Arc::clone(&self.projected_schema);
        let batch_size = self.batch_size;
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
            Ok(LineBatches::new(bytes, schema, batch_size).boxed())
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
    pub(crate) fn new(
        input: BoxStream<'static, Result<Bytes>>,
        schema: SchemaRef,
        batch_size: usize,
    ) -> Self {
        Self {
            input,
            batcher: Batcher::new(schema, batch_size),
            ready: VecDeque::new(),
            done: false,
        }
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
    builder: BinaryBuilder,
    rows: usize,
}

impl Batcher {
    pub(crate) fn new(schema: SchemaRef, batch_size: usize) -> Self {
        Self {
            schema,
            batch_size,
            partial: Vec::new(),
            builder: BinaryBuilder::new(),
            rows: 0,
        }
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
            chunk = &chunk[nl + 1..];
        }
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
        // NDJSON framing (SPEC §7): blank lines are not messages.
        if line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            return Ok(());
        }
        if !self.schema.fields().is_empty() {
            self.builder.append_value(line);
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
        let batch = if self.schema.fields().is_empty() {
            RecordBatch::try_new_with_options(
                Arc::clone(&self.schema),
                vec![],
                &RecordBatchOptions::new().with_row_count(Some(self.rows)),
            )?
        } else {
            let column: ArrayRef = Arc::new(self.builder.finish());
            RecordBatch::try_new(Arc::clone(&self.schema), vec![column])?
        };
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
}
