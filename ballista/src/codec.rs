//! Plan codecs that teach Ballista's own codecs about `lines` tables and scans, and resolve
//! rpcscan's functions by name. Everything else is handed to Ballista's codecs unchanged.
//!
//! Our payloads start with a magic prefix that a protobuf message cannot start with in
//! practice (`0xFF` is not a valid protobuf tag byte for Ballista's messages), so decoding
//! knows whose bytes it holds without a registry of positions.

use std::fmt;
use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::parsers::CompressionTypeVariant;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::from_proto::{
    parse_protobuf_file_scan_config, parse_table_schema_from_proto,
};
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::FileScanExecConf;
use prost::Message;
use rpcscan_datafusion::{LinesOptions, LinesSource, LinesTable};

/// Prefix of an encoded [`LinesTable`]: its options ([`LinesOptions::encode`]), then its
/// locations, each as two length-prefixed strings (the URL, then the glob or an empty
/// string), so that a glob survives the trip.
const TABLE_MAGIC: &[u8] = b"\xffrpcscan.lines-table.v2\n";
/// Prefix of an encoded `lines` scan: the files' compression (length-prefixed, empty: by
/// extension), then a `FileScanExecConf`.
const SCAN_MAGIC: &[u8] = b"\xffrpcscan.lines-scan.v2\n";
/// Prefix of an encoded rpcscan function (its maximum message size follows, u64 LE), so
/// every process applies the client's limit.
const UDF_MAGIC: &[u8] = b"\xffrpcscan.udf.v1\n";

/// rpcscan's function `name` as shipped in `buf` (empty: the default limit).
fn rpcscan_udf(name: &str, buf: &[u8]) -> Result<Option<Arc<ScalarUDF>>> {
    let max = match buf.strip_prefix(UDF_MAGIC) {
        Some(rest) => {
            let bytes = <[u8; 8]>::try_from(rest).map_err(|_| {
                DataFusionError::Internal(format!("bad rpcscan function encoding for {name}"))
            })?;
            usize::try_from(u64::from_le_bytes(bytes)).unwrap_or(usize::MAX)
        }
        None => rpcscan_datafusion::DEFAULT_MAX_MESSAGE_SIZE,
    };
    Ok(rpcscan_datafusion::functions_with_max_message_size(max)
        .into_iter()
        .find(|f| f.name() == name))
}

/// Writes an rpcscan function's limit; `false` for any other function.
fn encode_rpcscan_udf(node: &ScalarUDF, buf: &mut Vec<u8>) -> bool {
    match rpcscan_datafusion::max_message_size_of(node) {
        Some(max) => {
            buf.extend_from_slice(UDF_MAGIC);
            buf.extend_from_slice(&(max as u64).to_le_bytes());
            true
        }
        None => false,
    }
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

fn take_str<'a>(rest: &mut &'a [u8]) -> Result<&'a str> {
    let bad = || DataFusionError::Internal("truncated lines table locations".to_string());
    let (len, tail) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| bad())?;
    let (text, tail) = tail.split_at_checked(len).ok_or_else(bad)?;
    *rest = tail;
    std::str::from_utf8(text)
        .map_err(|e| DataFusionError::Internal(format!("lines table location is not UTF-8: {e}")))
}

fn encode_locations(table: &LinesTable, buf: &mut Vec<u8>) {
    buf.extend_from_slice(TABLE_MAGIC);
    put_str(buf, &table.options().encode());
    for url in table.locations() {
        put_str(buf, url.as_str());
        put_str(buf, url.get_glob().as_ref().map_or("", |g| g.as_str()));
    }
}

fn decode_table(mut rest: &[u8]) -> Result<LinesTable> {
    let options = LinesOptions::decode(take_str(&mut rest)?)?;
    let mut urls = Vec::new();
    while !rest.is_empty() {
        let url = ListingTableUrl::parse(take_str(&mut rest)?)?;
        let glob = take_str(&mut rest)?;
        urls.push(if glob.is_empty() { url } else { url.with_glob(glob)? });
    }
    LinesTable::try_from_urls(urls, options)
}

/// Ballista's logical codec plus [`LinesTable`] and rpcscan's functions.
#[derive(Debug, Default)]
pub struct LinesLogicalCodec {
    inner: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for LinesLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.strip_prefix(TABLE_MAGIC) {
            Some(rest) => Ok(Arc::new(decode_table(rest)?)),
            None => self.inner.try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match node.as_ref().downcast_ref::<LinesTable>() {
            Some(table) => {
                encode_locations(table, buf);
                Ok(())
            }
            None => self.inner.try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match rpcscan_udf(name, buf)? {
            Some(udf) => Ok(udf),
            None => self.inner.try_decode_udf(name, buf),
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if encode_rpcscan_udf(node, buf) {
            return Ok(());
        }
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// Ballista's physical codec plus `lines` scans (a `DataSourceExec` over a [`LinesSource`])
/// and rpcscan's functions.
#[derive(Default)]
pub struct LinesPhysicalCodec {
    inner: BallistaPhysicalExtensionCodec,
}

impl fmt::Debug for LinesPhysicalCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinesPhysicalCodec").finish_non_exhaustive()
    }
}

/// The scan config of a `lines` scan, if `plan` is one.
fn lines_scan(plan: &dyn ExecutionPlan) -> Option<&FileScanConfig> {
    let exec = plan.downcast_ref::<DataSourceExec>()?;
    let config = exec.data_source().downcast_ref::<FileScanConfig>()?;
    config.file_source().downcast_ref::<LinesSource>()?;
    Some(config)
}

impl PhysicalExtensionCodec for LinesPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(mut rest) = buf.strip_prefix(SCAN_MAGIC) else {
            return self.inner.try_decode(buf, inputs, ctx, proto_converter);
        };
        let compression = match take_str(&mut rest)? {
            "" => None,
            name => Some(name.parse::<FileCompressionType>()?),
        };
        let proto = FileScanExecConf::decode(rest)
            .map_err(|e| DataFusionError::Internal(format!("bad lines scan: {e}")))?;
        let source = Arc::new(
            LinesSource::new(parse_table_schema_from_proto(&proto)?).with_compression(compression),
        );
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let config = parse_protobuf_file_scan_config(&proto, &decode_ctx, proto_converter, source)?;
        Ok(DataSourceExec::from_data_source(config))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(config) = lines_scan(node.as_ref()) else {
            return self.inner.try_encode(node, buf, proto_converter);
        };
        let proto = serialize_file_scan_config(config, self, proto_converter)?;
        buf.extend_from_slice(SCAN_MAGIC);
        let compression = config
            .file_source()
            .downcast_ref::<LinesSource>()
            .and_then(|s| s.compression())
            .map(|c| CompressionTypeVariant::from(c).to_string())
            .unwrap_or_default();
        put_str(buf, &compression);
        proto
            .encode(buf)
            .map_err(|e| DataFusionError::Internal(format!("cannot encode lines scan: {e}")))
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match rpcscan_udf(name, buf)? {
            Some(udf) => Ok(udf),
            None => self.inner.try_decode_udf(name, buf),
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if encode_rpcscan_udf(node, buf) {
            return Ok(());
        }
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
