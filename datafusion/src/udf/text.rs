//! `rpc_text(line [, _file, _line])`: a line as text, failing on a line that is not UTF-8
//! with an error that names its file and line number; and [`CheckedLineCast`], the analyzer
//! rule that routes `CAST(line AS VARCHAR)` over a `lines` table with metadata columns
//! through it, so a plain `CAST` names the line it cannot cast.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{exec_err, Column, DFSchemaRef, Result};
use datafusion::logical_expr::expr::Cast;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    ColumnarValue, Expr, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

use crate::input::LINE_TYPES;
use crate::lines::{FILE_COLUMN, LINE_NUMBER_COLUMN};

/// `rpc_text(line)` or `rpc_text(line, _file, _line)`: the line as `Utf8`; a line that is
/// not UTF-8 fails the query with an error naming its file and line number (given the
/// metadata columns) instead of Arrow's cast error, which names neither. `TRY_CAST(line AS
/// VARCHAR)` is the forgiving form (NULL for such a line).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RpcText {
    signature: Signature,
}

impl Default for RpcText {
    fn default() -> Self {
        Self {
            signature: Signature::one_of(
                vec![TypeSignature::Uniform(1, LINE_TYPES.to_vec()), TypeSignature::Any(3)],
                Volatility::Immutable,
            ),
        }
    }
}

impl ScalarUDFImpl for RpcText {
    fn name(&self) -> &str {
        "rpc_text"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let (line, file, number) = match arrays.as_slice() {
            [line] => (line, None, None),
            [line, file, number] => (line, Some(file), Some(number)),
            _ => return exec_err!("rpc_text takes (line) or (line, _file, _line)"),
        };
        if !LINE_TYPES.contains(line.data_type()) && line.data_type() != &DataType::Null {
            return exec_err!("rpc_text takes a string or binary line, not {}", line.data_type());
        }
        // The fast path: Arrow's cast validates the whole column at once (`safe: false`: an
        // error, not NULL, for a value that is not UTF-8).
        let strict = CastOptions { safe: false, ..Default::default() };
        if let Ok(text) = cast_with_options(line, &DataType::Utf8, &strict) {
            return Ok(ColumnarValue::Array(text));
        }
        let (row, valid_up_to) = first_invalid(line.as_ref())?;
        let at = format!("not UTF-8 (byte {valid_up_to} of the line is not valid)");
        let hint = "TRY_CAST(line AS VARCHAR) gives NULL for such lines; the rpc_* functions \
                    take the Binary line as it is";
        match (file, number) {
            (Some(file), Some(number)) => {
                let file = text_at(file, row)?;
                let number = text_at(number, row)?;
                exec_err!("line {number} of {file} is {at}: it cannot be cast to text. {hint}")
            }
            _ => exec_err!(
                "a line is {at}: it cannot be cast to text. With OPTIONS \
                 ('format.metadata_columns' 'true') on its table, rpc_text(line, _file, _line) \
                 and CAST(line AS VARCHAR) name its file and line. {hint}"
            ),
        }
    }
}

/// The first row that is not UTF-8, and the length of its valid prefix.
fn first_invalid(line: &dyn Array) -> Result<(usize, usize)> {
    let mut found = None;
    let mut row = 0;
    crate::input::each_line(line, |bytes| {
        if found.is_none() {
            if let Some(Err(e)) = bytes.map(std::str::from_utf8) {
                found = Some((row, e.valid_up_to()));
            }
        }
        row += 1;
    })?;
    match found {
        Some(found) => Ok(found),
        None => exec_err!("rpc_text: Arrow could not cast a column whose rows are all UTF-8"),
    }
}

/// Row `row` of a metadata column as text (`?` for NULL).
fn text_at(array: &ArrayRef, row: usize) -> Result<String> {
    let options = CastOptions { safe: true, ..Default::default() };
    let text = cast_with_options(&array.slice(row, 1), &DataType::Utf8, &options)?;
    let text = text.as_any().downcast_ref::<datafusion::arrow::array::StringArray>();
    Ok(text.filter(|t| t.is_valid(0)).map_or_else(|| "?".to_string(), |t| t.value(0).to_string()))
}

/// The shared `rpc_text` function.
pub fn rpc_text_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(RpcText::default())));
    Arc::clone(&UDF)
}

/// `rpc_text(line)` as an expression.
pub fn rpc_text(line: Expr) -> Expr {
    rpc_text_udf().call(vec![line])
}

/// An analyzer rule: `CAST(line AS Utf8 | LargeUtf8 | Utf8View)` of a Binary `line` column
/// whose input also has `_file` and `_line` (a `lines` table with metadata columns) becomes
/// `CAST(rpc_text(line, _file, _line) AS ...)`: the same values, and an error naming the
/// file and line where a line is not UTF-8. Other casts, and `TRY_CAST`, are left alone.
/// [`crate::register`] adds it to the session.
#[derive(Debug, Default)]
pub struct CheckedLineCast;

impl AnalyzerRule for CheckedLineCast {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(rewrite_node).data()
    }

    fn name(&self) -> &str {
        "rpcscan_checked_line_cast"
    }
}

fn rewrite_node(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let schemas: Vec<DFSchemaRef> = node.inputs().iter().map(|i| Arc::clone(i.schema())).collect();
    if schemas.is_empty() {
        return Ok(Transformed::no(node));
    }
    let names = NamePreserver::new(&node);
    node.map_expressions(|expr| {
        let name = names.save(&expr);
        let rewritten = expr.transform_up(|e| rewrite_cast(e, &schemas))?;
        Ok(rewritten.update_data(|e| name.restore(e)))
    })
}

fn rewrite_cast(expr: Expr, schemas: &[DFSchemaRef]) -> Result<Transformed<Expr>> {
    let Expr::Cast(Cast { expr: inner, field: target }) = &expr else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(target.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        return Ok(Transformed::no(expr));
    }
    let Expr::Column(line) = inner.as_ref() else {
        return Ok(Transformed::no(expr));
    };
    if line.name != "line" {
        return Ok(Transformed::no(expr));
    }
    for schema in schemas {
        let Ok((_, field)) = schema.qualified_field_from_column(line) else { continue };
        if !matches!(
            field.data_type(),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ) {
            break;
        }
        let file = Column::new(line.relation.clone(), FILE_COLUMN);
        let number = Column::new(line.relation.clone(), LINE_NUMBER_COLUMN);
        if schema.has_column(&file) && schema.has_column(&number) {
            let call = rpc_text_udf().call(vec![
                Expr::Column(line.clone()),
                Expr::Column(file),
                Expr::Column(number),
            ]);
            let cast = Cast::new_from_field(Box::new(call), Arc::clone(target));
            return Ok(Transformed::yes(Expr::Cast(cast)));
        }
        break;
    }
    Ok(Transformed::no(expr))
}
