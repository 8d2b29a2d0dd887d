//! A guard in front of the TOML parser: how deeply a schedule file nests arrays and inline
//! tables, found by a scan that knows only strings and comments.
//!
//! The parser and the values it builds recurse once per level, so a hostile or garbled file
//! (thousands of unclosed `{`, which the recovering parser nests) overflows a thread's stack, and
//! the refresher reads schedules on tokio's worker threads (2 MiB). No real schedule nests more
//! than a few levels; a file past [`MAX_NESTING`] is refused before it is parsed.

/// The deepest nesting of `[` and `{` a schedule file may have.
pub const MAX_NESTING: usize = 32;

/// The byte offset where `text` first nests deeper than [`MAX_NESTING`], if it does. Brackets
/// inside strings (basic, literal, multi-line) and comments do not count; a closing bracket
/// closes only the innermost open one of its kind (`]` for `[`, `}` for `{`): the recovering
/// parser keeps an inline table open past stray `]`s, so they must not lower the depth.
pub fn too_deep_at(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut open: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            quote @ (b'"' | b'\'') => {
                i = skip_string(bytes, i, quote);
                continue;
            }
            opener @ (b'[' | b'{') => {
                open.push(opener);
                if open.len() > MAX_NESTING {
                    return Some(i);
                }
            }
            b']' if open.last() == Some(&b'[') => {
                open.pop();
            }
            b'}' if open.last() == Some(&b'{') => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The offset just past the string that opens at `start` with `quote` (or the end of the text).
fn skip_string(bytes: &[u8], start: usize, quote: u8) -> usize {
    let triple = bytes.get(start..start + 3) == Some(&[quote; 3][..]);
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\n' if !triple => return i,
            b if b == quote => {
                if !triple {
                    return i + 1;
                }
                if bytes.get(i..i + 3) == Some(&[quote; 3][..]) {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_schedules_pass_and_deep_or_unclosed_nesting_is_found() {
        let ok = "[[site]]\nname = \"a [ { \"\nlist = [[1, 2], [3]] # [[[[[\nt = { a = { b = 1 } }\n\
                  s = '''\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n'''\n";
        assert_eq!(too_deep_at(ok), None);
        let deep = format!("a = {}{}", "[".repeat(40), "]".repeat(40));
        assert_eq!(too_deep_at(&deep), Some(4 + MAX_NESTING));
        let unclosed = "name = {e first\n\n[[site]]\n".repeat(100);
        assert!(too_deep_at(&unclosed).is_some());
        let stray_closers = "name = {e first\n\n[[site]]]]\n".repeat(100);
        assert!(too_deep_at(&stray_closers).is_some());
        let escaped = format!("s = \"\\\"{}\"\n", "[".repeat(40));
        assert_eq!(too_deep_at(&escaped), None);
    }
}
