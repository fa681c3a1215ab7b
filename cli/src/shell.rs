//! Shell quoting for printing command lines that can be pasted back into a shell.

use std::ffi::OsStr;

/// Quotes one word for a POSIX shell: words made only of safe characters stay as they
/// are, all others are single-quoted (a `'` becomes `'\''`). Bytes that are not UTF-8 are
/// shown lossily.
pub fn quote(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_=/.,:@%+^".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Quotes every word and joins them with spaces.
pub fn join<'a>(words: impl IntoIterator<Item = &'a OsStr>) -> String {
    words.into_iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote(OsStr::new("-O2")), "-O2");
        assert_eq!(
            quote(OsStr::new("-Wl,-rpath,$ORIGIN")),
            "'-Wl,-rpath,$ORIGIN'"
        );
        assert_eq!(quote(OsStr::new("a b")), "'a b'");
        assert_eq!(quote(OsStr::new("it's")), r"'it'\''s'");
        assert_eq!(quote(OsStr::new("")), "''");
        assert_eq!(
            join([OsStr::new("clang++"), OsStr::new("x y")]),
            "clang++ 'x y'"
        );
    }
}
