//! Vectors in PostgreSQL's binary parameter format, for drivers that can send a parameter as
//! bytes (the npm package: PGlite and `pg`).
//!
//! A `vector` is pgvector's send/receive form: `int16` dimensions, `int16` 0, then each
//! component's `f32` bits, all big-endian. A `vector[]` is PostgreSQL's array form around those
//! (`array_send`): dimensions 1, a has-nulls flag, the element type's OID, the length and lower
//! bound 1, then each element's byte length (-1 for NULL) and bytes. The server takes them with
//! `vector_recv` (which checks the dimensions and refuses NaN and infinity, as the text form's
//! `vector_in` does) instead of parsing text: the stored vector is the embedder's bits either
//! way, but PGlite's `strtof` (musl, WebAssembly) parsed a 512-dimension vector in about 0.2 ms,
//! and the array literal itself cost as much to write and scan (docs/BENCHMARKS.md, "Vectors
//! as bytes"). Front doors whose driver binds text (the edge worker, memloom-sql) write
//! [`crate::vector_text`].

/// pgvector's largest number of dimensions (`VECTOR_MAX_DIM`); the `int16` length needs a bound.
pub const MAX_DIMS: usize = 16_000;

/// Why a vector cannot be encoded: too many dimensions for pgvector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyDims {
    /// The 1-based position of the vector in the array (1 for a single vector).
    pub position: usize,
    /// Its dimensions.
    pub dims: usize,
}

impl std::fmt::Display for TooManyDims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "vector {} has {} dimensions; pgvector stores at most {MAX_DIMS}",
            self.position, self.dims
        )
    }
}

impl std::error::Error for TooManyDims {}

/// One vector in pgvector's binary form, for a `vector` parameter.
pub fn vector_binary(v: &[f32]) -> Result<Vec<u8>, TooManyDims> {
    check_dims(v, 1)?;
    let mut out = Vec::with_capacity(4 + 4 * v.len());
    write_vector(&mut out, v);
    Ok(out)
}

/// Vectors (`None`: SQL NULL) as a one-dimensional `vector[]` in PostgreSQL's binary array form.
/// `element_oid` is the OID of the `vector` type in the database that receives it (an
/// extension's type has no fixed OID), written where `array_send` writes it. The server reads
/// the elements with the parameter's declared type (`$n::vector[]`) either way: neither
/// PostgreSQL 15 nor PGlite's refused another OID when tried.
pub fn vector_array_binary(
    vectors: &[Option<&[f32]>],
    element_oid: u32,
) -> Result<Vec<u8>, TooManyDims> {
    let payload: usize = vectors.iter().flatten().map(|v| 8 + 4 * v.len()).sum();
    let mut out = Vec::with_capacity(20 + 4 * vectors.len() + payload);
    if vectors.is_empty() {
        // No dimensions: PostgreSQL's empty array.
        out.extend_from_slice(&0i32.to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        out.extend_from_slice(&element_oid.to_be_bytes());
        return Ok(out);
    }
    let has_nulls = vectors.iter().any(Option::is_none);
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&i32::from(has_nulls).to_be_bytes());
    out.extend_from_slice(&element_oid.to_be_bytes());
    out.extend_from_slice(&(vectors.len() as i32).to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for (i, v) in vectors.iter().enumerate() {
        match v {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                check_dims(v, i + 1)?;
                out.extend_from_slice(&((4 + 4 * v.len()) as i32).to_be_bytes());
                write_vector(&mut out, v);
            }
        }
    }
    Ok(out)
}

fn check_dims(v: &[f32], position: usize) -> Result<(), TooManyDims> {
    if v.len() > MAX_DIMS {
        return Err(TooManyDims {
            position,
            dims: v.len(),
        });
    }
    Ok(())
}

/// `v` in pgvector's binary form; its dimensions checked by the caller (`check_dims`).
fn write_vector(out: &mut Vec<u8>, v: &[f32]) {
    out.extend_from_slice(&(v.len() as i16).to_be_bytes());
    out.extend_from_slice(&0i16.to_be_bytes());
    for x in v {
        // The bits as they are: NaN and infinity too, which vector_recv refuses with pgvector's
        // own message, as vector_in does for the text form.
        out.extend_from_slice(&x.to_bits().to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be_i32(b: &[u8], at: usize) -> i32 {
        i32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// A reader of the two formats, as PostgreSQL's array_recv and pgvector's vector_recv read
    /// them, to check the writer against.
    fn read_vector(b: &[u8]) -> Vec<f32> {
        let dims = i16::from_be_bytes([b[0], b[1]]) as usize;
        assert_eq!(i16::from_be_bytes([b[2], b[3]]), 0, "unused must be 0");
        assert_eq!(b.len(), 4 + 4 * dims);
        (0..dims)
            .map(|i| {
                f32::from_bits(u32::from_be_bytes(
                    b[4 + 4 * i..8 + 4 * i].try_into().unwrap(),
                ))
            })
            .collect()
    }

    fn read_array(b: &[u8]) -> (u32, Vec<Option<Vec<f32>>>) {
        let ndim = be_i32(b, 0);
        let oid = u32::from_be_bytes(b[8..12].try_into().unwrap());
        if ndim == 0 {
            assert_eq!(b.len(), 12);
            return (oid, vec![]);
        }
        assert_eq!(ndim, 1);
        let n = be_i32(b, 12) as usize;
        assert_eq!(be_i32(b, 16), 1, "lower bound");
        let mut at = 20;
        let mut out = Vec::new();
        let mut nulls = false;
        for _ in 0..n {
            let len = be_i32(b, at);
            at += 4;
            if len < 0 {
                nulls = true;
                out.push(None);
            } else {
                out.push(Some(read_vector(&b[at..at + len as usize])));
                at += len as usize;
            }
        }
        assert_eq!(at, b.len(), "no trailing bytes");
        assert_eq!(be_i32(b, 4), i32::from(nulls), "has-nulls flag");
        (oid, out)
    }

    #[test]
    fn one_vector_is_its_bits() {
        let v = [0.1f32, -0.25, 0.0, -0.0, f32::MIN_POSITIVE / 2.0, 1e30];
        let b = vector_binary(&v).unwrap();
        assert_eq!(&b[..4], &[0, 6, 0, 0]);
        let back = read_vector(&b);
        for (a, b) in v.iter().zip(&back) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn arrays_round_trip_with_nulls_and_the_element_oid() {
        let a = [0.5f32, -1.0, 3.25];
        let c = [7.0f32; 3];
        let (oid, back) =
            read_array(&vector_array_binary(&[Some(&a), None, Some(&c)], 16_385).unwrap());
        assert_eq!(oid, 16_385);
        assert_eq!(back, vec![Some(a.to_vec()), None, Some(c.to_vec())]);
        let (_, back) = read_array(&vector_array_binary(&[Some(&a)], 9).unwrap());
        assert_eq!(back, vec![Some(a.to_vec())]);
        let (oid, back) = read_array(&vector_array_binary(&[], 42).unwrap());
        assert_eq!((oid, back), (42, vec![]));
    }

    #[test]
    fn too_many_dimensions_is_refused_before_the_int16_length_wraps() {
        let big = vec![0.0f32; MAX_DIMS + 1];
        let ok = vec![0.0f32; MAX_DIMS];
        assert!(vector_binary(&ok).is_ok());
        let e = vector_array_binary(&[Some(&ok), Some(&big)], 1).unwrap_err();
        assert_eq!(
            e,
            TooManyDims {
                position: 2,
                dims: MAX_DIMS + 1
            }
        );
        assert!(e.to_string().contains("at most 16000"));
        assert_eq!(vector_binary(&big).unwrap_err().position, 1);
    }

    #[test]
    fn nan_and_infinity_keep_their_bits_for_the_server_to_refuse() {
        let b = vector_binary(&[f32::NAN, f32::INFINITY]).unwrap();
        let back = read_vector(&b);
        assert!(back[0].is_nan());
        assert_eq!(back[1], f32::INFINITY);
    }
}
