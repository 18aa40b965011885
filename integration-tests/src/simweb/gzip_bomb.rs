//! A hand-assembled gzip bomb: ~1 MB that inflates to ~1 GiB of zeros. No compression
//! crate is needed because the deflate stream is trivial: one dynamic-Huffman block whose
//! only back-reference ("repeat 258 bytes at distance 1") and its distance both get
//! 1-bit codes of value 0, so the body of the stream is literally zero bytes.
//!
//! The same deflate stream, as the `word/document.xml` of a zip, is a DOCX bomb
//! ([`docx_bomb`]).

use std::sync::OnceLock;

/// Back-references of 258 bytes after one literal zero: 1 + 258 * N bytes ≈ 1 GiB.
const REPEATS: u64 = 4_161_790;

pub const INFLATED_LEN: u64 = 1 + 258 * REPEATS;

/// LSB-first bit packer, as deflate requires.
struct Bits {
    out: Vec<u8>,
    pos: u64,
}

impl Bits {
    fn new(start_bit: u64) -> Self {
        Bits {
            out: vec![0],
            pos: start_bit,
        }
    }

    /// Writes `n` bits of `value`, least significant first (header fields, extra bits).
    fn put(&mut self, value: u32, n: u32) {
        for i in 0..n {
            if (self.pos / 8) as usize >= self.out.len() {
                self.out.push(0);
            }
            if (value >> i) & 1 == 1 {
                self.out[(self.pos / 8) as usize] |= 1 << (self.pos % 8);
            }
            self.pos += 1;
        }
    }

    /// Writes a Huffman code, most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        for i in (0..len).rev() {
            self.put((code >> i) & 1, 1);
        }
    }
}

/// CRC-32 (IEEE) of `len` zero bytes, via GF(2) matrix powers so 1 GiB costs microseconds.
pub fn crc32_of_zeros(len: u64) -> u32 {
    // Column i of the "process one zero byte" operator is the image of state bit i.
    let mut op = [0u32; 32];
    for (i, col) in op.iter_mut().enumerate() {
        let mut c = 1u32 << i;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
        *col = c;
    }
    let apply = |m: &[u32; 32], v: u32| {
        (0..32)
            .filter(|i| v >> i & 1 == 1)
            .fold(0, |acc, i| acc ^ m[i])
    };
    let compose = |a: &[u32; 32], b: &[u32; 32]| {
        let mut r = [0u32; 32];
        for i in 0..32 {
            r[i] = apply(a, b[i]);
        }
        r
    };
    let mut state = 0xFFFF_FFFFu32;
    let mut n = len;
    let mut power = op;
    while n > 0 {
        if n & 1 == 1 {
            state = apply(&power, state);
        }
        power = compose(&power, &power);
        n >>= 1;
    }
    !state
}

fn build() -> Vec<u8> {
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    let mut h = Bits::new(0);
    h.put(1, 1); // BFINAL
    h.put(2, 2); // BTYPE = dynamic Huffman
    h.put(286 - 257, 5); // HLIT
    h.put(2 - 1, 5); // HDIST: two distance codes keep that tree complete
    h.put(18 - 4, 4); // HCLEN: code-length lengths up to symbol 1's slot
                      // Code-length alphabet lengths in deflate's permuted order; 18->1 bit, 1 and 2 -> 2 bits.
    let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1];
    for sym in order {
        h.put(
            match sym {
                18 => 1,
                1 | 2 => 2,
                _ => 0,
            },
            3,
        );
    }
    // Canonical codes for that alphabet: 18 -> 0, 1 -> 10, 2 -> 11.
    let (c18, c1, c2) = ((0, 1), (0b10, 2), (0b11, 2));
    let zeros = |h: &mut Bits, n: u32| {
        h.code(c18.0, c18.1);
        h.put(n - 11, 7);
    };
    h.code(c2.0, c2.1); // literal 0: length 2
    zeros(&mut h, 138); // literals 1..=138
    zeros(&mut h, 117); // literals 139..=255
    h.code(c2.0, c2.1); // 256 (end of block): length 2
    zeros(&mut h, 28); // 257..=284
    h.code(c1.0, c1.1); // 285 (length 258): length 1
    h.code(c1.0, c1.1); // distance code 0: length 1
    h.code(c1.0, c1.1); // distance code 1: length 1
                        // Literal/length codes: 285 -> 0, literal 0 -> 10, end of block -> 11.
    h.code(0b10, 2);
    let head_bits = h.pos;
    let mut head = h.out;
    head.truncate(head_bits.div_ceil(8) as usize);
    // Each repeat is "0" (length 258) then "0" (distance 1): two zero bits.
    let end_bits = head_bits + 2 * REPEATS;
    let mut t = Bits::new(end_bits % 8);
    t.code(0b11, 2);
    let mid_zero_bytes = end_bits / 8 - head.len() as u64;
    gz.extend_from_slice(&head);
    gz.resize(gz.len() + mid_zero_bytes as usize, 0);
    gz.extend_from_slice(&t.out);
    gz.extend_from_slice(&crc32_of_zeros(INFLATED_LEN).to_le_bytes());
    gz.extend_from_slice(&(INFLATED_LEN as u32).to_le_bytes());
    gz
}

/// The bomb, built once per process.
pub fn gzip_bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(build)
}

/// A Word document whose `word/document.xml` inflates to [`INFLATED_LEN`] zeros: a stored
/// `[Content_Types].xml`, then the gzip bomb's deflate stream as a deflated entry, with true
/// sizes and CRC in both directories, so only the inflated size gives it away.
pub fn docx_bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        let gz = gzip_bomb();
        let deflate = &gz[10..gz.len() - 8];
        let types: &[u8] = br#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
        let entries = [
            ("[Content_Types].xml", 0u16, types, crc32(types), types.len() as u32),
            (
                "word/document.xml",
                8,
                deflate,
                crc32_of_zeros(INFLATED_LEN),
                INFLATED_LEN as u32,
            ),
        ];
        let mut zip = Vec::new();
        let mut central = Vec::new();
        for (name, method, data, crc, size) in entries {
            let offset = zip.len() as u32;
            let common = |out: &mut Vec<u8>| {
                out.extend_from_slice(&20u16.to_le_bytes()); // version needed: 2.0
                out.extend_from_slice(&0u16.to_le_bytes()); // flags
                out.extend_from_slice(&method.to_le_bytes());
                out.extend_from_slice(&0u16.to_le_bytes()); // time
                out.extend_from_slice(&0x21u16.to_le_bytes()); // date: 1980-01-01
                out.extend_from_slice(&crc.to_le_bytes());
                out.extend_from_slice(&(data.len() as u32).to_le_bytes());
                out.extend_from_slice(&size.to_le_bytes());
                out.extend_from_slice(&(name.len() as u16).to_le_bytes());
                out.extend_from_slice(&0u16.to_le_bytes()); // extra field length
            };
            zip.extend_from_slice(b"PK\x03\x04");
            common(&mut zip);
            zip.extend_from_slice(name.as_bytes());
            zip.extend_from_slice(data);

            central.extend_from_slice(b"PK\x01\x02");
            central.extend_from_slice(&20u16.to_le_bytes()); // version made by
            common(&mut central);
            central.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
            central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
            central.extend_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let (at, len) = (zip.len() as u32, central.len() as u32);
        zip.extend_from_slice(&central);
        zip.extend_from_slice(b"PK\x05\x06");
        zip.extend_from_slice(&[0; 4]); // this disk, the directory's disk
        zip.extend_from_slice(&2u16.to_le_bytes());
        zip.extend_from_slice(&2u16.to_le_bytes());
        zip.extend_from_slice(&len.to_le_bytes());
        zip.extend_from_slice(&at.to_le_bytes());
        zip.extend_from_slice(&0u16.to_le_bytes()); // comment length
        zip
    })
}

/// CRC-32 (IEEE) of `data`, bit by bit: only a few hundred bytes go through it.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn crc_of_zeros_matches_naive() {
        for len in [0u64, 1, 7, 1000, 4097] {
            assert_eq!(
                crc32_of_zeros(len),
                crc32(&vec![0; len as usize]),
                "len {len}"
            );
        }
    }

    #[test]
    fn the_docx_bomb_is_a_zip_whose_document_inflates_to_zeros() {
        let bomb = docx_bomb();
        assert!(bomb.len() < 1_200_000, "{}", bomb.len());
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bomb)).expect("a zip");
        assert_eq!(zip.len(), 2);
        let document = zip.by_name("word/document.xml").expect("the body part");
        assert_eq!(document.size(), INFLATED_LEN);
        let mut head = Vec::new();
        document
            .take(1 << 20)
            .read_to_end(&mut head)
            .expect("inflates");
        assert_eq!(head.len(), 1 << 20);
        assert!(head.iter().all(|&b| b == 0));
    }

    #[test]
    fn bomb_is_small() {
        let b = gzip_bomb();
        assert!(b.len() < 1_200_000 && b.len() > 1_000_000, "{}", b.len());
        assert_eq!(&b[..2], &[0x1f, 0x8b]);
    }
}
