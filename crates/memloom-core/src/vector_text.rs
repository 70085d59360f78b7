//! pgvector's text form of a vector, `[x,y,...]`, as the front doors whose driver binds text
//! write it into SQL (the edge worker, memloom-sql; the npm package sends bytes:
//! [`crate::vector_binary`]).
//!
//! Each component is a C99 hexadecimal float (`0x1.8p-3`, what `printf("%a")` writes): the
//! `f32`'s bits spelled out, so the stored vector is bit-identical to the embedder's by
//! construction, with no decimal rounding to get right. pgvector reads components with
//! `strtof`, which takes hexadecimal floats on every libc PostgreSQL runs on. Why not decimal:
//! PGlite's libc (musl, compiled to WebAssembly) parses a decimal fraction with software
//! 128-bit `long double` arithmetic: a third of PGlite's time in a static-v2 ingest
//! (docs/BENCHMARKS.md, "Vectors as hexadecimal floats"). A hexadecimal one is a few shifts.

use std::fmt::Write;

/// `v` in pgvector's text form, appended to `out`.
pub fn write_vector(out: &mut String, v: &[f32]) {
    out.reserve(v.len() * 12 + 2);
    out.push('[');
    for (i, &x) in v.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_component(out, x);
    }
    out.push(']');
}

/// `v` in pgvector's text form.
pub fn vector_text(v: &[f32]) -> String {
    let mut out = String::new();
    write_vector(&mut out, v);
    out
}

fn write_component(out: &mut String, x: f32) {
    if !x.is_finite() {
        // pgvector refuses these with its own message ("NaN not allowed in vector"); written as
        // strtof reads them, so that message is what the caller sees.
        let _ = write!(out, "{x}");
        return;
    }
    let bits = x.to_bits();
    if bits >> 31 == 1 {
        out.push('-');
    }
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0 && mantissa == 0 {
        out.push('0');
        return;
    }
    // 23 mantissa bits shifted to 24 are six hex digits after the point; trailing zero digits
    // carry nothing. A subnormal has no implicit leading 1 and the exponent of the smallest normal.
    let (lead, power) = if exponent == 0 {
        ('0', -126)
    } else {
        ('1', exponent - 127)
    };
    let mut digits = mantissa << 1;
    let mut width = 6;
    while width > 0 && digits & 0xf == 0 {
        digits >>= 4;
        width -= 1;
    }
    out.push_str("0x");
    out.push(lead);
    if width > 0 {
        // Writing into a String cannot fail.
        let _ = write!(out, ".{digits:0width$x}");
    }
    let _ = write!(out, "p{power}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// strtof's reading of a C99 hexadecimal float, for the components this module writes.
    fn read_hex(s: &str) -> f32 {
        let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
        if s == "0" {
            return if neg { -0.0 } else { 0.0 };
        }
        let s = s.strip_prefix("0x").expect(s);
        let (mant, exp) = s.split_once('p').expect(s);
        let (lead, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let mut m = u64::from_str_radix(lead, 16).unwrap() as f64;
        for (i, c) in frac.chars().enumerate() {
            m += c.to_digit(16).unwrap() as f64 / 16f64.powi(i as i32 + 1);
        }
        let v = (m * 2f64.powi(exp.parse().unwrap())) as f32;
        if neg {
            -v
        } else {
            v
        }
    }

    #[test]
    fn components_read_back_bit_for_bit() {
        let v = [
            0.1f32,
            -0.25,
            1.0,
            0.0,
            -0.0,
            1e-10,
            3.4e38,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::from_bits(1),         // the smallest subnormal
            f32::from_bits(0x7f_ffff), // the largest subnormal
            0.072_168_78,
            -0.577_350_26,
        ];
        let s = vector_text(&v);
        assert!(s.starts_with('[') && s.ends_with(']'), "{s}");
        let back: Vec<f32> = s[1..s.len() - 1].split(',').map(read_hex).collect();
        assert_eq!(back.len(), v.len());
        for (a, b) in back.iter().zip(v.iter()) {
            assert_eq!(a.to_bits(), b.to_bits(), "{s}");
        }
        // Every f32 bit pattern class, spot-checked over a stride of the whole range.
        let mut x = 0u32;
        while x < 0x7f80_0000 {
            for bits in [x, x | 0x8000_0000] {
                let f = f32::from_bits(bits);
                let mut t = String::new();
                write_component(&mut t, f);
                assert_eq!(read_hex(&t).to_bits(), bits, "{t}");
            }
            x += 0x0001_0f31;
        }
    }

    #[test]
    fn the_forms_printf_a_writes() {
        assert_eq!(
            vector_text(&[1.0, 0.5, -0.25, 0.1875]),
            "[0x1p0,0x1p-1,-0x1p-2,0x1.8p-3]"
        );
        assert_eq!(vector_text(&[0.1]), "[0x1.99999ap-4]");
        assert_eq!(vector_text(&[0.0, -0.0]), "[0,-0]");
        assert_eq!(vector_text(&[f32::from_bits(1)]), "[0x0.000002p-126]");
        assert_eq!(vector_text(&[]), "[]");
        assert_eq!(vector_text(&[f32::NAN, f32::INFINITY]), "[NaN,inf]");
    }
}
