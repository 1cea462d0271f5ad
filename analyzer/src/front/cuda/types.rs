//! C and CUDA type names -> IR types.

use crate::ir::{IntTy, Ty};

/// A scalar or vector type named by one word (`int`, `size_t`, `float4`, `__half`).
pub(crate) fn named_type(name: &str) -> Option<Ty> {
    let int = |bits, signed| Some(Ty::Int(IntTy { bits, signed }));
    match name {
        "bool" => Some(Ty::Int(IntTy::BOOL)),
        "char" | "signed char" | "int8_t" => int(8, true),
        "unsigned char" | "uint8_t" | "uchar" => int(8, false),
        "short" | "int16_t" => int(16, true),
        "unsigned short" | "uint16_t" | "ushort" => int(16, false),
        "int" | "signed" | "int32_t" => int(32, true),
        "unsigned" | "unsigned int" | "uint32_t" | "uint" => int(32, false),
        "long" | "long long" | "int64_t" | "ssize_t" | "ptrdiff_t" | "intptr_t" | "long int" | "long long int" => {
            int(64, true)
        }
        // `cudaGraphConditionalHandle` is `unsigned long long` in the runtime's headers.
        "unsigned long"
        | "unsigned long long"
        | "uint64_t"
        | "size_t"
        | "uintptr_t"
        | "ulong"
        | "ulonglong"
        | "cudaGraphConditionalHandle"
        // Texture and surface objects are handles (`unsigned long long` in the runtime's
        // headers, `CUtexObject` and `CUsurfObject` in the driver's): their fetches, reads and
        // writes are the texture functions' memory operations.
        | "cudaTextureObject_t"
        | "cudaSurfaceObject_t"
        | "CUtexObject"
        | "CUsurfObject" => int(64, false),
        "clock_t" | "time_t" | "longlong" => int(64, true),
        "float" => Some(Ty::Float(4)),
        "double" => Some(Ty::Float(8)),
        "half" | "__half" | "__nv_bfloat16" | "nv_bfloat16" | "__nv_half" | "__half_raw" | "__nv_bfloat16_raw" => {
            Some(Ty::Float(2))
        }
        // <cuda_fp8.h>: 8-bit floats are stored as bytes (`typedef unsigned char
        // __nv_fp8_storage_t`), pairs and quads as 2 and 4 bytes; their values are data.
        "__nv_fp8_storage_t" | "__nv_fp8_e4m3" | "__nv_fp8_e5m2" | "__nv_fp8_e8m0" => int(8, false),
        "__nv_fp8x2_storage_t" | "__nv_fp8x2_e4m3" | "__nv_fp8x2_e5m2" => int(16, false),
        "__nv_fp8x4_storage_t" | "__nv_fp8x4_e4m3" | "__nv_fp8x4_e5m2" => int(32, false),
        "void" => Some(Ty::Void),
        // <cuComplex.h>: `typedef float2 cuFloatComplex;`, `typedef double2 cuDoubleComplex;`.
        // <cufft.h>: `typedef cuComplex cufftComplex;`, `typedef float cufftReal;`, and the
        // double ones.
        "cuFloatComplex" | "cuComplex" | "cufftComplex" => vector_type("float2"),
        "cuDoubleComplex" | "cufftDoubleComplex" => vector_type("double2"),
        "cufftReal" => Some(Ty::Float(4)),
        "cufftDoubleReal" => Some(Ty::Float(8)),
        _ => vector_type(name),
    }
}

/// A type written with C's size words (`unsigned short int`, `long long`, `long double` is
/// taken as `double`): its integer width and signedness.
pub(crate) fn sized_type(text: &str) -> Ty {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.contains(&"double") {
        return Ty::Float(8);
    }
    let bits = if words.contains(&"char") {
        8
    } else if words.contains(&"short") {
        16
    } else if words.contains(&"long") {
        64
    } else {
        32
    };
    Ty::Int(IntTy { bits, signed: !words.contains(&"unsigned") })
}

/// A named type as a harness lays it out in memory (`sector-validate` fills buffers with it):
/// the scalar type of one component and how many components there are (`float4`: four 4-byte
/// floats; `__half2`: two 2-byte ones). `None` for a name this front end does not know, so
/// that the analysis and the validator never disagree on a type.
pub fn component_layout(name: &str) -> Option<(Ty, u32)> {
    const SIZE_WORDS: [&str; 7] = ["unsigned", "signed", "short", "long", "int", "char", "double"];
    let words_only = name.split_whitespace().all(|w| SIZE_WORDS.contains(&w));
    let ty = named_type(name).or_else(|| (words_only && !name.trim().is_empty()).then(|| sized_type(name)))?;
    match &ty {
        Ty::Int(_) | Ty::Float(_) => Some((ty, 1)),
        Ty::Vector { name, bytes } => {
            let stem = name.strip_suffix(|c: char| c.is_ascii_digit())?;
            let elem = named_type(stem).filter(|e| matches!(e, Ty::Int(_) | Ty::Float(_)))?;
            Some((elem.clone(), u32::try_from(bytes / elem.size()).ok()?))
        }
        Ty::Ptr(_) | Ty::Void => None,
    }
}

/// CUDA's vector types: `float4` is 16 bytes, `double2` 16, `char4` 4, `float3` 12, ...
fn vector_type(name: &str) -> Option<Ty> {
    // Packed half-precision pairs: one 4-byte access.
    if matches!(
        name,
        "__half2" | "half2" | "__nv_bfloat162" | "nv_bfloat162" | "__nv_half2" | "__half2_raw" | "__nv_bfloat162_raw"
    ) {
        return Some(Ty::Vector { name: name.to_string(), bytes: 4 });
    }
    let n: u64 = name.chars().last()?.to_digit(10)? as u64;
    if !(1..=4).contains(&n) {
        return None;
    }
    let stem = &name[..name.len() - 1];
    let elem = match stem {
        "char" | "uchar" => 1,
        "short" | "ushort" | "half" | "__half" => 2,
        "int" | "uint" | "float" => 4,
        "long" | "ulong" | "longlong" | "ulonglong" | "double" => 8,
        "__half2" => return None,
        _ => return None,
    };
    Some(Ty::Vector { name: name.to_string(), bytes: elem * n })
}

/// Field offset and type inside a vector (`.x` `.y` `.z` `.w`).
pub(crate) fn vector_field(vec: &Ty, field: &str) -> Option<(u64, Ty)> {
    let Ty::Vector { name, bytes } = vec else { return None };
    let n: u64 = name.chars().last()?.to_digit(10)? as u64;
    let elem = bytes / n;
    let idx = match field {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        "w" => 3,
        _ => return None,
    };
    if idx >= n {
        return None;
    }
    let stem = &name[..name.len() - 1];
    let ety = match stem {
        "float" => Ty::Float(4),
        "double" => Ty::Float(8),
        "half" | "__half" | "__nv_bfloat16" | "nv_bfloat16" | "__nv_half" => Ty::Float(2),
        _ => Ty::Int(IntTy { bits: (elem * 8) as u8, signed: !stem.starts_with('u') }),
    };
    Some((idx * elem, ety))
}

/// Integer promotion: types narrower than `int` become `int`.
pub(crate) fn promote(t: IntTy) -> IntTy {
    if t.bits < 32 {
        IntTy::I32
    } else {
        t
    }
}

/// C's usual arithmetic conversions for two integer operands.
pub(crate) fn common_int(a: IntTy, b: IntTy) -> IntTy {
    let (a, b) = (promote(a), promote(b));
    if a == b {
        return a;
    }
    if a.signed == b.signed {
        return if a.bits >= b.bits { a } else { b };
    }
    let (s, u) = if a.signed { (a, b) } else { (b, a) };
    if u.bits >= s.bits {
        u
    } else {
        // The signed type is wider, so it holds every value of the unsigned one.
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_follow_c() {
        assert_eq!(common_int(IntTy::I32, IntTy::U32), IntTy::U32);
        assert_eq!(common_int(IntTy::U32, IntTy::I64), IntTy::I64);
        assert_eq!(common_int(IntTy::I64, IntTy::U64), IntTy::U64);
        assert_eq!(common_int(IntTy::I8, IntTy::U16), IntTy::I32);
    }

    #[test]
    fn vectors() {
        assert_eq!(named_type("float4").unwrap().size(), 16);
        assert_eq!(named_type("double2").unwrap().size(), 16);
        assert_eq!(named_type("char4").unwrap().size(), 4);
        assert_eq!(named_type("float3").unwrap().size(), 12);
        assert_eq!(named_type("__half2").unwrap().size(), 4);
        assert_eq!(named_type("__nv_bfloat162").unwrap().size(), 4);
        assert_eq!(vector_field(&named_type("__nv_bfloat162").unwrap(), "y").unwrap(), (2, Ty::Float(2)));
        let (off, t) = vector_field(&named_type("float4").unwrap(), "z").unwrap();
        assert_eq!((off, t.size()), (8, 4));
    }
}
