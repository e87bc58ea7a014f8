//! The few JSON output pieces the CLI writes itself (ids, methods and codes are echoed raw).

/// Appends `s` as a JSON string, quotes included (the library's writer).
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    rpcscan::response::write_json_string(out, s);
}

/// Appends the decimal digits of `n`.
pub fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends the decimal digits of `n`, with a `-` when negative.
pub fn write_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, n.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_numbers() {
        let mut out = Vec::new();
        write_str(&mut out, "a\"b\\c\n\u{1}é\u{7f}");
        // DEL needs no escape in JSON; the library writer leaves it as is.
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001é\u{7f}\"".as_bytes());
        for (n, s) in [(0i64, "0"), (-1, "-1"), (i64::MIN, "-9223372036854775808")] {
            let mut out = Vec::new();
            write_i64(&mut out, n);
            assert_eq!(out, s.as_bytes());
        }
        let mut out = Vec::new();
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, b"18446744073709551615");
    }
}
