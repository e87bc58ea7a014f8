//! Globs over names: `*` any run of characters, `?` any one character, everything else
//! literally. Used by `rpcscan filter --method` and by the proxy's and gateway's policy
//! (`--allow-method`, `--deny-tool`, ...), on decoded method and tool names.

/// Whether `text` matches `pattern`: `*` any run, `?` any one (UTF-8) character,
/// everything else literally.
///
/// ```
/// use rpcscan_traffic::glob::glob;
///
/// assert!(glob(b"tools/*", b"tools/call"));
/// assert!(!glob(b"tools/*", b"tool/call"));
/// ```
pub fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(b'?') => {
                p += 1;
                t += utf8_len(text[t]);
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                // Let the last `*` eat one more character and retry.
                Some((sp, st)) => {
                    let st = st + utf8_len(text[st]);
                    star = Some((sp, st));
                    p = sp + 1;
                    t = st;
                }
                None => return false,
            },
        }
    }
    pattern.get(p..).unwrap_or_default().iter().all(|&c| c == b'*')
}

/// Whether any of `globs` matches `text`.
#[inline]
pub fn any(globs: &[String], text: &[u8]) -> bool {
    globs.iter().any(|g| glob(g.as_bytes(), text))
}

/// Length of the UTF-8 sequence a byte starts (1 for anything unexpected).
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let cases: &[(&str, &str, bool)] = &[
            ("tools/*", "tools/call", true),
            ("tools/*", "tools/", true),
            ("tools/*", "tool/call", false),
            ("*", "", true),
            ("", "", true),
            ("", "x", false),
            ("t?ols/call", "tools/call", true),
            ("*/list", "resources/templates/list", true),
            ("*s*s*", "notifications/progress", true),
            ("a*b*c", "abbbxc", true),
            ("a*b*c", "abbbx", false),
            ("?", "é", true),
            ("??", "é", false),
            ("tools/call", "tools/callx", false),
            // A truncated UTF-8 sequence at the end never reads past the text.
            ("?", "\u{e9}", true),
        ];
        for &(p, t, want) in cases {
            assert_eq!(glob(p.as_bytes(), t.as_bytes()), want, "{p:?} on {t:?}");
        }
        assert!(!glob(b"?x", &[0xE9]));
        assert!(glob(b"*", &[0xF0, 0x9F]));
    }
}
