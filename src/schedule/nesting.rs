//! A guard in front of the TOML parser: how deeply a schedule file nests arrays and inline
//! tables, counted on the parser's own tokens.
//!
//! The recovering parser recurses once per open inline table and array without a limit, so a
//! hostile or garbled file (thousands of unclosed `{`) overflows a thread's stack, and the
//! refresher reads schedules on tokio's worker threads (2 MiB). No real schedule nests more than a
//! few levels; a file past [`MAX_NESTING`] is refused before it is parsed. The tokens come from
//! `toml_parser`'s lexer, the one the parser reads, so strings and comments are what it thinks
//! they are; a closing bracket closes only the innermost open one of its kind (`]` for `[`, `}`
//! for `{`), because the parser keeps an inline table open past stray `]`s.

use toml_parser::Source;
use toml_parser::lexer::TokenKind;

/// The deepest nesting of `[` and `{` a schedule file may have.
pub const MAX_NESTING: usize = 32;

/// The byte offset where `text` first nests deeper than [`MAX_NESTING`], if it does.
pub fn too_deep_at(text: &str) -> Option<usize> {
    let mut open: Vec<TokenKind> = Vec::new();
    for token in Source::new(text).lex() {
        match token.kind() {
            kind @ (TokenKind::LeftSquareBracket | TokenKind::LeftCurlyBracket) => {
                open.push(kind);
                if open.len() > MAX_NESTING {
                    return Some(token.span().start());
                }
            }
            TokenKind::RightSquareBracket if open.last() == Some(&TokenKind::LeftSquareBracket) => {
                open.pop();
            }
            TokenKind::RightCurlyBracket if open.last() == Some(&TokenKind::LeftCurlyBracket) => {
                open.pop();
            }
            _ => {}
        }
    }
    None
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
        // A triple quote where no string may start is not a string that hides the rest.
        let stray_quotes = format!("[[site]]x\"\"\"y\n{}", "name = {e it's\n".repeat(100));
        assert!(too_deep_at(&stray_quotes).is_some());
        let escaped = format!("s = \"\\\"{}\"\n", "[".repeat(40));
        assert_eq!(too_deep_at(&escaped), None);
    }

    /// The inputs that overflowed a 2 MiB stack in the fuzzer, kept in its corpus.
    #[test]
    fn the_fuzzers_overflows_are_found() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus/schedule");
        for name in [
            "overflow-unclosed-inline-tables.toml",
            "overflow-stray-closers.toml",
            "overflow-stray-quotes.toml",
        ] {
            let bytes = std::fs::read(dir.join(name)).expect(name);
            let text = String::from_utf8_lossy(&bytes);
            assert!(too_deep_at(&text).is_some(), "{name}");
        }
    }
}
