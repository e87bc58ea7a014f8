//! Statements of a script, cut from its text, and the `lines` options that datafusion-cli
//! cannot plan.
//!
//! `rpcscan-sql` hands datafusion-cli one statement at a time, so that it knows which
//! statement failed (the exit code of `-f`, `--keep-going`, the line in the message). The
//! text is cut with sqlparser's tokenizer, so a `;` inside a string, a quoted name or a
//! comment does not end a statement.

use std::collections::HashMap;

use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::Value;
use datafusion::sql::sqlparser::dialect::Dialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// One statement of a script: its text (from its first token to its `;`, comments before
/// it left out) and the line it starts on, from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// What datafusion-cli is given.
    pub text: String,
    /// Where the statement starts, for error messages.
    pub line: u64,
}

/// Byte offsets of the tokenizer's locations (1-based lines, columns counted in chars).
struct Offsets<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, line_starts }
    }

    fn of(&self, at: Location) -> usize {
        let Some(&start) = usize::try_from(at.line)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .and_then(|l| self.line_starts.get(l))
        else {
            return self.text.len();
        };
        let column = usize::try_from(at.column.saturating_sub(1)).unwrap_or(usize::MAX);
        self.text[start..].char_indices().nth(column).map_or(self.text.len(), |(i, _)| start + i)
    }
}

fn is_blank(token: &Token) -> bool {
    matches!(token, Token::Whitespace(_))
}

/// The statements of `script`, in order; blank and comment-only pieces are dropped. Lines
/// starting with `#!` are skipped, as datafusion-cli skips them in a file. Text the
/// tokenizer rejects (an unterminated string) becomes one statement, from its first
/// non-blank line on: datafusion-cli then reports the parse error.
pub fn split(script: &str, dialect: &dyn Dialect) -> Vec<Statement> {
    let script: String = script
        .split_inclusive('\n')
        .map(|line| if line.starts_with("#!") { "\n" } else { line })
        .collect();
    let offsets = Offsets::new(&script);
    let tokens = match Tokenizer::new(dialect, &script).tokenize_with_location() {
        Ok(tokens) => tokens,
        Err(_) => {
            let start = script.len() - script.trim_start().len();
            let text = script.trim();
            if text.is_empty() {
                return Vec::new();
            }
            let line = script[..start].matches('\n').count() as u64 + 1;
            return vec![Statement { text: text.to_string(), line }];
        }
    };
    let mut statements = Vec::new();
    let mut first: Option<&TokenWithSpan> = None;
    let mut last: Option<&TokenWithSpan> = None;
    for token in &tokens {
        if is_blank(&token.token) {
            continue;
        }
        if token.token == Token::SemiColon {
            if let Some(start) = first.take() {
                let text = &script[offsets.of(start.span.start)..offsets.of(token.span.end)];
                statements.push(Statement { text: text.to_string(), line: start.span.start.line });
            }
            last = None;
            continue;
        }
        first.get_or_insert(token);
        last = Some(token);
    }
    if let (Some(start), Some(end)) = (first, last) {
        let text = &script[offsets.of(start.span.start)..offsets.of(end.span.end)];
        statements.push(Statement { text: text.to_string(), line: start.span.start.line });
    }
    statements
}

/// An option key as DataFusion's planner stores it: lower case, and `format.` before a key
/// without a namespace.
fn planned_key(key: &str) -> String {
    let key = key.to_lowercase();
    if key.contains('.') {
        key
    } else {
        format!("format.{key}")
    }
}

/// An option value as DataFusion's planner reads it (the values `OPTIONS` can hold).
fn planned_value(value: &Value) -> Option<String> {
    match value {
        Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Some(s.clone()),
        Value::Number(..) | Value::Boolean(_) => Some(value.to_string()),
        _ => None,
    }
}

/// For `CREATE EXTERNAL TABLE ... STORED AS LINES ... OPTIONS (...)` with `format.` options
/// (`format.metadata_columns`, `format.compression`): the statement without them, and the
/// options as the planner would have stored them. `None` for any other statement, or when
/// the text is not what the parser expects (then datafusion-cli reports it).
///
/// datafusion-cli checks a new table's options against the table options of CSV, JSON or
/// Parquet before it plans the statement, and fails on any `format.` option of another
/// format ("Specify a format for TableOptions"). The rest of the statement still goes
/// through datafusion-cli (object stores for `s3://` locations, printing); the options are
/// put back into the plan (see `Shell::execute_logical_plan`).
pub fn take_lines_options(
    text: &str,
    dialect: &dyn Dialect,
) -> Option<(String, HashMap<String, String>)> {
    let mut parsed = DFParser::parse_sql_with_dialect(text, dialect).ok()?;
    let (Some(DfStatement::CreateExternalTable(create)), None) =
        (parsed.pop_front(), parsed.pop_front())
    else {
        return None;
    };
    if !create.file_type.eq_ignore_ascii_case(rpcscan_datafusion::lines::FORMAT_NAME) {
        return None;
    }
    let keys: Vec<String> = create.options.iter().map(|(k, _)| planned_key(k)).collect();
    if !keys.iter().any(|k| k.starts_with("format.")) {
        return None;
    }

    // The entries of the first `OPTIONS (...)`, as byte ranges; the parser allows one
    // option list, and its entries hold no parentheses.
    let tokens = Tokenizer::new(dialect, text).tokenize_with_location().ok()?;
    let tokens: Vec<&TokenWithSpan> = tokens.iter().filter(|t| !is_blank(&t.token)).collect();
    let offsets = Offsets::new(text);
    let open = tokens.windows(2).position(|pair| {
        matches!(&pair[0].token, Token::Word(w) if w.keyword == Keyword::OPTIONS)
            && pair[1].token == Token::LParen
    })?;
    let mut entries: Vec<(usize, usize)> = Vec::new();
    let mut entry: Option<(usize, usize)> = None;
    let mut close = None;
    for (i, token) in tokens.iter().enumerate().skip(open + 2) {
        match token.token {
            Token::Comma | Token::RParen => {
                entries.extend(entry.take());
                if token.token == Token::RParen {
                    close = Some(i);
                    break;
                }
            }
            _ => {
                let (start, end) = (offsets.of(token.span.start), offsets.of(token.span.end));
                entry = Some(entry.map_or((start, end), |(s, _)| (s, end)));
            }
        }
    }
    let close = close?;
    if entries.len() != create.options.len() {
        return None;
    }

    let mut taken = HashMap::new();
    let mut kept = Vec::new();
    for ((key, (_, value)), (start, end)) in keys.into_iter().zip(&create.options).zip(entries) {
        if key.starts_with("format.") {
            taken.insert(key, planned_value(value)?);
        } else {
            kept.push(&text[start..end]);
        }
    }
    let clause = if kept.is_empty() {
        (offsets.of(tokens[open].span.start), offsets.of(tokens[close].span.end))
    } else {
        (offsets.of(tokens[open + 1].span.end), offsets.of(tokens[close].span.start))
    };
    let rest = if kept.is_empty() { String::new() } else { kept.join(", ") };
    Some((format!("{}{rest}{}", &text[..clause.0], &text[clause.1..]), taken))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::GenericDialect;

    fn texts(script: &str) -> Vec<(String, u64)> {
        split(script, &GenericDialect {}).into_iter().map(|s| (s.text, s.line)).collect()
    }

    #[test]
    fn statements_end_at_semicolons_outside_strings_names_and_comments() {
        let script = "-- a report; over the logs\n\
                      SELECT 'a;b' AS \"x;y\"; SELECT 2\n\
                      /* ; */ -- ;\n\
                      ;\n\
                      \n\
                      SELECT 'é;' -- last, without a semicolon\n";
        assert_eq!(
            texts(script),
            [
                ("SELECT 'a;b' AS \"x;y\";".to_string(), 2),
                ("SELECT 2\n/* ; */ -- ;\n;".to_string(), 2),
                ("SELECT 'é;'".to_string(), 6),
            ]
        );
    }

    #[test]
    fn empty_pieces_and_shebang_lines_are_not_statements() {
        assert!(texts("#!/usr/bin/env rpcscan-sql -f\n;;\n-- only a comment\n").is_empty());
        assert_eq!(texts("#!x\nSELECT 1;"), [("SELECT 1;".to_string(), 2)]);
    }

    #[test]
    fn text_the_tokenizer_rejects_is_one_statement_for_datafusion_to_report() {
        assert_eq!(
            texts("\n  SELECT 'open; SELECT 2;\n"),
            [("SELECT 'open; SELECT 2;".to_string(), 2)]
        );
    }

    fn take(text: &str) -> Option<(String, Vec<(String, String)>)> {
        take_lines_options(text, &GenericDialect {}).map(|(text, options)| {
            let mut options: Vec<_> = options.into_iter().collect();
            options.sort();
            (text, options)
        })
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn lines_options_are_taken_out_and_other_options_stay() {
        assert_eq!(
            take(
                "CREATE EXTERNAL TABLE t STORED AS lines LOCATION '/l/' \
                 OPTIONS ('format.metadata_columns' 'true', 'aws.region' 'x', compression gzip,)"
            ),
            Some((
                "CREATE EXTERNAL TABLE t STORED AS lines LOCATION '/l/' OPTIONS ('aws.region' 'x')"
                    .to_string(),
                pairs(&[("format.compression", "gzip"), ("format.metadata_columns", "true")]),
            ))
        );
        assert_eq!(
            take(
                "CREATE EXTERNAL TABLE t STORED AS LINES OPTIONS (format.compression 'zstd') \
                 LOCATION '/l/'"
            ),
            Some((
                "CREATE EXTERNAL TABLE t STORED AS LINES  LOCATION '/l/'".to_string(),
                pairs(&[("format.compression", "zstd")]),
            ))
        );
    }

    #[test]
    fn other_statements_and_other_formats_are_left_alone() {
        for text in [
            "CREATE EXTERNAL TABLE t STORED AS LINES LOCATION '/l/'",
            "CREATE EXTERNAL TABLE t STORED AS LINES LOCATION '/l/' OPTIONS ('aws.region' 'x')",
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/l/' OPTIONS ('format.delimiter' ';')",
            "SELECT 'OPTIONS (format.x 1)'",
            "CREATE EXTERNAL TABLE t STORED AS LINES LOCATION", // a parse error: datafusion-cli's
        ] {
            assert_eq!(take(text), None, "{text}");
        }
    }
}
